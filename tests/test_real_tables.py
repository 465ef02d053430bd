"""RAD on tables as users bring them: units, outliers and heavy tails, discrete values, integer and zero-inflated
columns, DataFrames with categories, and fewer pairs for wide tables."""
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import radbook.steps as steps_module
from radbook.dictionaries import PointMass, atom_spec, paper_family, point_mass
from radbook.rad import RAD

FAST = dict(n_init=2, n_projections=20, random_state=0)


@pytest.fixture(scope='module')
def mixed():
    truth = paper_family('mixed', random_state=0)
    return truth, truth.sample(3000, random_state=1)[0], truth.sample(5000, random_state=2)[0]


def test_units_change_the_log_likelihood_only_by_the_jacobian(mixed):
    _, X, X_test = mixed
    scaled, shifted = X.copy(), X.copy()
    scaled[:, 1] *= 1000; shifted[:, 3] += 1e4
    Xs_test, Xh_test = X_test.copy(), X_test.copy()
    Xs_test[:, 1] *= 1000; Xh_test[:, 3] += 1e4
    # With the atoms read off the marginals the fit is the same to rounding; the learned atoms' EM amplifies the
    # rounding of the shifted column (1e4 + x keeps 4 fewer digits) to a few thousandths of a nat.
    for d, tol in (('marginal', 1e-6), ('auto', 1e-2)):
        base = RAD(6, dictionaries=d, **FAST).fit(X).score_samples(X_test)
        np.testing.assert_allclose(RAD(6, dictionaries=d, **FAST).fit(scaled).score_samples(Xs_test), base - np.log(1000), atol=tol)
        np.testing.assert_allclose(RAD(6, dictionaries=d, **FAST).fit(shifted).score_samples(Xh_test), base, atol=tol)


def test_one_outlier_does_not_spoil_the_fit(mixed, monkeypatch):
    truth, X, X_test = mixed
    outlier = X.copy(); outlier[0, 0] = 1e6
    clean = RAD(9, n_init=4, random_state=0).fit(X).score(X_test)
    robust = RAD(9, n_init=4, random_state=0).fit(outlier).score(X_test)
    assert abs(robust - clean) < 0.01, (clean, robust)
    # the test can tell: bins on the full range of the data spoil the fit (seen with the marginal atoms; the learned
    # ones' warm start, fitted in robust units, hides most of it: 0.015 nats; so does a shape's Yeo-Johnson map)
    clean = RAD(9, n_init=4, dictionaries='marginal', shape=None, random_state=0).fit(X).score(X_test)
    monkeypatch.setattr(steps_module, '_BIN_TAIL', 0.0)
    naive = RAD(9, n_init=4, dictionaries='marginal', shape=None, random_state=0).fit(outlier).score(X_test)
    assert clean - naive > 0.03, (clean, naive)


def test_a_heavy_tailed_column_leaves_the_others_alone(mixed):
    _, X, X_test = mixed
    heavy = X.copy(); heavy[:, 0] = stats.t(2).rvs(len(X), random_state=3)
    rest = [1, 2, 3, 4]
    marginal = lambda rad: rad.density_.marginal(rest).logpdf(X_test[:, rest]).mean()
    clean, t2 = marginal(RAD(9, n_init=4, random_state=0).fit(X)), marginal(RAD(9, n_init=4, random_state=0).fit(heavy))
    assert abs(t2 - clean) < 0.02, (clean, t2)


@pytest.fixture(scope='module')
def discrete_fit():
    truth = paper_family('mixed_features', random_state=0)
    X, _ = truth.sample(2000, random_state=1)
    return truth, X, RAD(6, **FAST).fit(X)


def test_discrete_values_match_through_float32_and_tiny_offsets(discrete_fit):
    _, X, rad = discrete_fit
    exact = rad.score_samples(X[:50])
    np.testing.assert_allclose(rad.score_samples(X[:50].astype(np.float32)), exact, atol=1e-4)
    off = X[:50].copy(); off[:, 4:] += 1e-12
    np.testing.assert_allclose(rad.score_samples(off), exact, atol=1e-9)
    assert np.isfinite(exact).all()


def test_unseen_value_of_a_non_integer_column_warns_and_is_worth_the_pseudo_count(discrete_fit):
    # the column's values are -1.5, -0.5, 0.5, 1.5: not integers, so any unseen value is one 'other' value, worth
    # eps = 1 / (K + 1) as an unseen category is: the row scores its other entries' marginal plus log(eps)
    _, X, rad = discrete_fit
    Y = X[:10].copy(); Y[3, 5] = 7.0
    with pytest.warns(UserWarning, match="never seen in fit.*feature 5.*unseen.*pseudo-count"):
        out = rad.score_samples(Y)
    others = [n for n in range(X.shape[1]) if n != 5]
    eps = 1.0 / (rad.n_samples_seen_ + 1.0)
    discrete = [n for n in others if all(isinstance(a, PointMass) for a in rad.dictionaries_[n])]
    seen = len(discrete) * np.log1p(-eps)  # the other discrete values keep 1 - eps of their probability
    np.testing.assert_allclose(out[3], rad.marginal(others).logpdf(Y[3:4, others])[0] + seen + np.log(eps))
    assert np.isfinite(out).all()
    assert np.isneginf(RAD(6, unseen=None, **FAST).fit(X).score_samples(Y)[3])  # unseen=None: asked for -inf
    with warnings.catch_warnings():
        warnings.simplefilter('error')  # no warning when every value was seen
        rad.score_samples(X[:10])


def test_dictionaries_that_miss_a_discrete_value_are_refused(discrete_fit):
    truth, X, _ = discrete_fit
    short = [list(d) for d in truth.dictionaries]
    short[6] = short[6][:3]  # drops the point mass at 1.5
    with pytest.raises(ValueError, match="Feature 6 has the value 1.5.*point_mass"):
        RAD(6, dictionaries=short, **FAST).fit(X)


def test_max_discrete_is_a_parameter(discrete_fit):
    _, X, _ = discrete_fit
    Y = X.copy(); Y[:, 0] = np.round(Y[:, 0] * 10)  # about 30 whole values
    n_values = len(np.unique(Y[:, 0]))
    assert 16 < n_values <= 40
    default = RAD(4, **FAST).fit(Y)
    assert not any(isinstance(a, PointMass) for a in default.dictionaries_[0])
    wide = RAD(4, max_discrete=40, **FAST).fit(Y)
    assert len(wide.dictionaries_[0]) == n_values and all(isinstance(a, PointMass) for a in wide.dictionaries_[0])


def test_integer_and_zero_inflated_columns(discrete_fit):
    _, X, _ = discrete_fit
    rng = np.random.default_rng(0)
    Y = X.copy()
    Y[:, 0] = rng.poisson(20, len(Y))                                          # a count with ~30 values
    Y[:, 1] = np.where(rng.random(len(Y)) < 0.6, 0.0, rng.gamma(2.0, 5.0, len(Y)))  # 60% exact zeros
    rad = RAD(4, shape=None, **FAST).fit(Y)  # atoms in the table's units
    specs = [atom_spec(a) for a in rad.dictionaries_[0]]
    widths = [s * np.sqrt(2) if k == 'laplace' else s for k, _, s in specs]  # standard deviations (a Laplacian's is b * sqrt 2)
    assert min(widths) >= 1.0 - 1e-9, widths                                 # no atom narrower than one unit
    assert point_mass(0.0) in rad.dictionaries_[1]
    assert any(not isinstance(a, PointMass) for a in rad.dictionaries_[1])
    score = rad.score_samples(Y[:200])
    assert np.isfinite(score).all()


def test_dataframes_with_categories_round_trip():
    rng = np.random.default_rng(0)
    n = 1500
    species = rng.choice(['Adelie', 'Gentoo', 'Chinstrap'], n)
    mass = np.where(species == 'Gentoo', 5000.0, 3700.0) + rng.normal(0, 300, n)
    frame = pd.DataFrame({'species': pd.Categorical(species, categories=['Adelie', 'Chinstrap', 'Gentoo']),
                          'island': np.where(species == 'Gentoo', 'Biscoe', rng.choice(['Dream', 'Torgersen'], n)),
                          'mass_g': mass, 'male': rng.random(n) < 0.5, 'year': rng.choice([2007, 2008, 2009], n)})
    rad = RAD(4, **FAST).fit(frame)
    assert list(rad.feature_names_in_) == list(frame.columns)
    assert np.isfinite(rad.score_samples(frame)).all()
    sample, labels = rad.sample(400, random_state=1)
    assert isinstance(sample, pd.DataFrame) and list(sample.columns) == list(frame.columns)
    assert sample.dtypes.tolist() == frame.dtypes.tolist()
    assert list(sample['species'].cat.categories) == ['Adelie', 'Chinstrap', 'Gentoo']
    assert set(sample['island']) <= {'Biscoe', 'Dream', 'Torgersen'} and set(sample['year']) <= {2007, 2008, 2009}
    gentoo = sample['species'] == 'Gentoo'  # the dependence between category and mass survives the fit
    assert sample.loc[gentoo, 'mass_g'].mean() - sample.loc[~gentoo, 'mass_g'].mean() > 800
    assert (sample.loc[gentoo, 'island'] == 'Biscoe').mean() > 0.9
    # a category the fit never saw: one pseudo-category's share of the unseen pseudo-count, and a warning naming it
    with pytest.warns(UserWarning, match="feature 'island' has the category 'Mars'"):
        out = rad.score_samples(frame.head(3).assign(island=['Biscoe', 'Mars', 'Dream']))
    eps = 1.0 / (rad.n_samples_seen_ + 1.0)
    rest = [c for c in frame.columns if c != 'island']
    others = rad.marginal(rest).logpdf(frame.head(3)[rest])  # a frame: read as the estimator reads it, seen shares and all
    np.testing.assert_allclose(out[1], others[1] + np.log(eps))
    assert np.isfinite(out).all()
    with pytest.warns(UserWarning, match="log density of -inf"):
        assert np.isneginf(RAD(4, unseen=None, **FAST).fit(frame).score_samples(frame.head(2).assign(island='Mars'))).all()
    with pytest.raises(ValueError, match="feature names"):
        rad.score_samples(frame.rename(columns={'mass_g': 'mass'}))


def test_fewer_pairs_for_wide_tables():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 24)) + rng.normal(size=(600, 1))
    auto = RAD(2, n_init=1, n_projections=8, max_iter=50, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        auto.fit(X)
        small = RAD(2, n_init=1, n_projections=8, max_iter=50, pairs=4, random_state=0).fit(X)
        every = RAD(2, n_init=1, n_projections=8, max_iter=50, pairs='all', random_state=0).fit(X[:, :10])
    degree = np.bincount(auto.pairs_.ravel(), minlength=24)
    assert len(auto.pairs_) < 24 * 23 / 2 and degree.min() >= 8 and degree.max() <= 16  # random cycles: about 16
    assert len(small.pairs_) <= 24 * 2 and len(every.pairs_) == 45
    assert auto.bin_lo_.shape == (len(auto.pairs_), 8)
    with pytest.raises(ValueError, match="pairs"):
        RAD(2, pairs=1).fit(X)


def test_an_integer_column_keeps_mass_for_integers_it_never_saw():
    # counts 0..9 without 4 in fit: 4 (inside the range) and 12 (beyond it) score finite, 4.5 does not
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 10, 3000); counts = np.where(counts == 4, 5, counts)
    X = np.c_[counts, counts + rng.normal(0, 1, 3000)]
    rad = RAD(4, **FAST).fit(X)
    Y = np.array([[4.0, 4.0], [12.0, 12.0], [4.5, 4.0], [3.0, 3.0]])
    with pytest.warns(UserWarning, match="feature 0 has the value '4'"):
        out = rad.score_samples(Y)
    eps = 1.0 / (rad.n_samples_seen_ + 1.0)
    second = rad.marginal([1]).logpdf(Y[:, 1:])
    np.testing.assert_allclose(out[:2], second[:2] + np.log([eps * 0.5, eps * 0.5 * 0.5 ** 4]))  # 1 gap; 3 steps out
    assert np.isneginf(out[2]) and np.isfinite(out[3])


def test_pandas_dtypes_round_trip_through_sample_and_the_imputer():
    # nullable integers (with and without NA), unsigned, nullable floats and booleans, strings, ordered categories:
    # sample() and RADImputer return the fitted dtypes (a nullable Int64 column raised a TypeError before)
    from radbook.impute import RADImputer
    rng = np.random.default_rng(0)
    n = 400
    base = rng.normal(size=n)
    frame = pd.DataFrame({
        'x': base,
        'i64': pd.array(rng.integers(0, 5, n), dtype='Int64'),
        'i8na': pd.array(np.where(rng.random(n) < 0.1, None, rng.integers(0, 30, n)), dtype='Int8'),
        'u16': pd.array(rng.integers(0, 1000, n), dtype='UInt16'),
        'f32': pd.array(base * 2 + rng.normal(size=n), dtype='Float32'),
        'b': pd.array(np.where(rng.random(n) < 0.1, None, base > 0), dtype='boolean'),
        's': pd.array(rng.choice(['a', 'b', 'c'], n), dtype='string'),
        'cat': pd.Categorical(rng.choice(['lo', 'hi'], n), categories=['lo', 'hi'], ordered=True),
    })
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        est = RAD(2, **FAST).fit(frame)
        sample, _ = est.sample(50, random_state=0)
        filled = RADImputer(RAD(2, **FAST)).fit(frame).transform(frame.head(40))
    assert list(sample.dtypes) == list(frame.dtypes) and list(filled.dtypes) == list(frame.dtypes)
    assert sample['cat'].cat.ordered and (sample['u16'] >= 0).all()
    assert not filled.isna().any().any() and frame.head(40).isna().any().any()


def test_numbers_stored_as_text_are_numbers_and_other_text_warns():
    rng = np.random.default_rng(1)
    x = rng.normal(size=300)
    text = pd.Series([None if i % 17 == 0 else f"{v:.4f}" for i, v in enumerate(x * 3 + 10)], dtype=object)
    frame = pd.DataFrame({'x': x, 'as_text': text})
    with warnings.catch_warnings():
        warnings.simplefilter('error', UserWarning)  # numbers in text: parsed, no warning
        est = RAD(2, **FAST).fit(frame)
    assert est.columns_[1].kind == 'number' and not all(hasattr(a, 'value') for a in est.dictionaries_[1])
    assert np.isfinite(est.score_samples(frame)).all()
    words = frame.assign(as_text=[f"w{i % 40}" for i in range(300)])
    with pytest.warns(UserWarning, match="'as_text' holds text with 40 distinct values"):
        RAD(2, **FAST).fit(words)


def test_rank_scores_are_in_the_units_of_score():
    # a held-out log-likelihood per row in the table's units: a table in thousandths scores log(1000) lower per column
    X = paper_family('mixed', random_state=0).sample(3000, random_state=1)[0]
    kw = dict(n_components_grid=(2, 4), dictionaries='marginal', n_init=4, random_state=0)
    a, b = RAD('auto', **kw).fit(X), RAD('auto', **kw).fit(X * 1000)
    assert a.rank_scores_.keys() == b.rank_scores_.keys()
    for F in a.rank_scores_:
        np.testing.assert_allclose(b.rank_scores_[F] - a.rank_scores_[F], -X.shape[1] * np.log(1000), atol=1e-3)
    assert abs(max(a.rank_scores_.values()) - a.score(X)) < 0.5  # measured: -1.91 against -1.83


def test_model_selection_works_with_a_category_seen_once():
    # every fold whose training part lacks the rare category scored -inf before, and the search picked blindly
    from sklearn.model_selection import GridSearchCV
    rng = np.random.default_rng(0)
    cat = rng.choice(['a', 'b', 'c'], 300); cat[0] = 'rare'
    frame = pd.DataFrame({'x': rng.normal(size=300) + (cat == 'a'), 'cat': pd.Categorical(cat)})
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        search = GridSearchCV(RAD(n_init=1, max_iter=100, random_state=0), {'n_components': [2, 4]}, cv=3).fit(frame)
    assert np.isfinite(search.cv_results_['mean_test_score']).all()

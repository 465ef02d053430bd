"""Marginals and conditionals of a model fitted to a DataFrame speak the table's terms: column names, category labels,
the fitted dtypes; a row with nothing observed scores 0.0; a model fitted to an array is unchanged."""
import warnings

import numpy as np
import pandas as pd
import pytest

from radbook.density import ColumnsDensity
from radbook.dictionaries import DictionaryCPD
from radbook.rad import RAD as _RAD


def RAD(*args, **kwargs):
    "RAD in one frame (local=False, unless given): these tests read its code-level density (a DictionaryCPD or ShapedDensity)."
    return _RAD(*args, **{'local': False, **kwargs})


@pytest.fixture(scope='module')
def penguins():
    pp = pytest.importorskip('palmerpenguins')
    frame = pp.load_penguins()
    return frame, RAD(n_components=3, random_state=0).fit(frame)


def test_marginal_reads_a_frame_by_name_with_labels(penguins):
    frame, est = penguins
    m = est.marginal(['body_mass_g', 'species', 'sex'])
    assert isinstance(m, ColumnsDensity) and isinstance(m.density, DictionaryCPD)
    assert m.columns == ['body_mass_g', 'species', 'sex'] and list(m.feature_names_in_) == m.columns
    cols = [list(frame.columns).index(c) for c in m.columns]
    np.testing.assert_array_equal(m.features, cols)
    np.testing.assert_allclose(m.weights, est.weights_, rtol=1e-12, atol=0)  # renormalised: the last bit may move
    assert m.n_components == est.density_.n_components == len(est.weights_)
    rows = frame.iloc[::9]
    codes = est.encode(rows)[:, cols]
    seen = rows[['species', 'sex']].notna().sum(axis=1).to_numpy()  # a frame: each seen category keeps 1 - 1/(K+1) of it
    assert seen.min() >= 1
    expected = m.density.logpdf(codes) + seen * np.log1p(-1 / (est.n_samples_seen_ + 1))
    np.testing.assert_allclose(m.logpdf(rows), expected, rtol=1e-12)  # the whole table: other columns ignored, order by name
    np.testing.assert_array_equal(m.score_samples(rows[['sex', 'species', 'body_mass_g']]), m.logpdf(rows))
    np.testing.assert_array_equal(m.logpdf(codes), m.density.logpdf(codes))  # an array in the density's coding: the CPD's
    np.testing.assert_allclose(m.predict_proba(rows), m.density.predict_proba(codes))
    # the marginal is the estimator's score with the other columns missing
    hidden = rows.copy()
    for c in frame.columns.difference(m.columns): hidden[c] = np.nan
    np.testing.assert_allclose(m.logpdf(rows), est.score_samples(hidden), rtol=1e-12)


def test_conditional_samples_labels_and_names(penguins):
    frame, est = penguins
    cond = est.conditional({'species': 'Gentoo', 'island': 'Biscoe'})
    assert isinstance(cond, ColumnsDensity)
    assert cond.given == {'species': 'Gentoo', 'island': 'Biscoe'}
    assert cond.columns == [c for c in frame.columns if c not in ('species', 'island')]
    sample, labels = cond.sample(200, random_state=0)
    assert list(sample.columns) == cond.columns and len(labels) == 200
    assert sample.dtypes.tolist() == frame[cond.columns].dtypes.tolist()
    assert set(sample['sex']) <= {'female', 'male'}
    assert sample['year'].isin([2007, 2008, 2009]).sum() >= 195  # an unseen year at its share (one row's worth of 344)
    # the drawn rows score as rows of the table under the conditional, and its marginal takes names
    assert np.isfinite(cond.logpdf(sample)).all()
    mass = cond.marginal('body_mass_g')
    assert mass.columns == ['body_mass_g'] and mass.features.tolist() == [list(frame.columns).index('body_mass_g')]
    grid = np.linspace(2500, 6500, 5)
    np.testing.assert_array_equal(mass.pdf(pd.DataFrame({'body_mass_g': grid})), mass.density.pdf(grid[:, None]))
    # positions among the conditional's columns still work, as with the DictionaryCPD
    np.testing.assert_array_equal(cond.marginal([cond.columns.index('body_mass_g')]).logpdf(grid[:, None]),
                                  mass.logpdf(grid[:, None]))


def test_unseen_category_gets_the_pseudo_count_and_a_warning(penguins):
    frame, est = penguins
    m = est.marginal(['island', 'bill_length_mm'])
    rows = frame.iloc[:3].assign(island=['Biscoe', 'Mars', 'Dream'])
    with pytest.warns(UserWarning, match="feature 'island' has the category 'Mars'"):
        out = m.logpdf(rows)
    assert np.isfinite(out).all()
    eps = 1.0 / (est.n_samples_seen_ + 1.0)
    np.testing.assert_allclose(out[1], est.marginal(['bill_length_mm']).logpdf(rows)[1] + np.log(eps))
    with pytest.warns(UserWarning, match="'Mars'"):
        np.testing.assert_allclose(out, est.score_samples(rows.assign(**{c: np.nan for c in frame.columns.difference(m.columns)})))


def test_wrong_or_missing_column_names_are_named(penguins):
    frame, est = penguins
    m = est.marginal(['bill_length_mm', 'species'])
    with pytest.raises(ValueError, match="X has no column 'species'"):
        m.logpdf(frame.rename(columns={'species': 'kind'}))
    with pytest.raises(ValueError, match="'bill_length_mm', 'species'"):
        m.predict_proba(frame[['island']])
    with pytest.raises(ValueError, match="Unknown column 'flipper'"):
        m.marginal(['flipper'])
    with pytest.raises(ValueError, match="Unknown column 'flipper'"):
        est.marginal(['flipper'])
    with pytest.raises(ValueError, match="no category 'Emperor'"):
        est.conditional({'species': 'Emperor'})


def test_a_row_with_nothing_observed_scores_zero(penguins):
    frame, est = penguins
    empty = frame.head(3).where(np.zeros((3, frame.shape[1]), bool))
    assert empty.isna().all().all()
    np.testing.assert_array_equal(est.score_samples(empty), np.zeros(3))
    np.testing.assert_array_equal(est.marginal(['species', 'body_mass_g']).logpdf(empty), np.zeros(3))
    X = frame.select_dtypes('number').to_numpy()
    for shape in (None, 'columns'):
        array = RAD(n_components=3, shape=shape, random_state=0).fit(X)
        np.testing.assert_array_equal(array.score_samples(np.full((2, X.shape[1]), np.nan)), np.zeros(2))


def test_numpy_fitted_estimators_are_unchanged():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)); X[:, 2] = rng.integers(0, 3, 400)
    est = RAD(n_components=3, random_state=0).fit(X)
    m = est.marginal([0, 2])
    assert type(m) is DictionaryCPD
    ref = est.density_.marginal([0, 2])
    np.testing.assert_array_equal(m.logpdf(X[:20, [0, 2]]), ref.logpdf(X[:20, [0, 2]]))
    c = est.conditional({2: 1.0})
    assert type(c) is DictionaryCPD and c.features.tolist() == [0, 1]
    x = np.array([np.nan, np.nan, 1.0])
    np.testing.assert_array_equal(c.weights, est.density_.conditional(x).weights)
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        np.testing.assert_array_equal(c.sample(5, random_state=1)[0], est.density_.conditional(x).sample(5, random_state=1)[0])


def test_shaped_fit_on_a_frame():
    rng = np.random.default_rng(1)
    n = 600
    kind = rng.choice(['a', 'b'], n)
    frame = pd.DataFrame({'kind': kind, 'size': np.exp(rng.normal(np.where(kind == 'a', 0.0, 1.0), 0.4)),
                          'count': pd.array(rng.poisson(3, n), dtype='Int64'),
                          'flag': pd.array(rng.random(n) < 0.3, dtype='boolean')})
    est = RAD(n_components=3, shape='columns', random_state=0).fit(frame)
    m = est.marginal(['size', 'kind'])
    np.testing.assert_array_equal(m.logpdf(frame.head(5)), m.density.logpdf(est.encode(frame.head(5))[:, [1, 0]])
                                  + np.log1p(-1 / (est.n_samples_seen_ + 1)))  # kind's seen values keep 1 - eps
    cond = est.conditional({'kind': 'b', 'flag': True})
    sample, _ = cond.sample(50, random_state=0)
    assert list(sample.columns) == ['size', 'count'] and str(sample['count'].dtype) == 'Int64' and (sample['size'] > 0).all()
    np.testing.assert_array_equal(cond.logpdf(frame.head(5)), cond.density.logpdf(est.encode(frame.head(5))[:, [1, 2]])
                                  + cond._read(frame.head(5))[1])  # count's seen values keep 1 - eps
    flag = est.marginal('flag')
    np.testing.assert_allclose(flag.pdf(pd.DataFrame({'flag': pd.array([True, False, None], dtype='boolean')})),
                               [frame['flag'].mean(), 1 - frame['flag'].mean(), 1.0], atol=0.05)


def test_sample_draws_unseen_integers_at_their_share():
    """`sample` draws from the density `score_samples` scores: an integer column's unseen values come out at the share
    of the `unseen` pseudo-count that scoring gives them (a gap inside its range, and the tails), a category's do not."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({'x': rng.normal(size=300), 'k': rng.choice([0, 1, 3, 4, 7], size=300),
                          'c': pd.Categorical(rng.choice(list('ab'), size=300))})
    est = _RAD(2, random_state=0).fit(frame)
    S, _ = est.sample(60_000, random_state=1)
    eps = 1 / (300 + 1)  # one row's worth of 300 fitted rows
    seen = S['k'].isin([0, 1, 3, 4, 7])
    assert abs((~seen).mean() - eps) < 4 * np.sqrt(eps / len(S)), (~seen).mean()
    inside = S['k'].isin([2, 5, 6]).mean()  # half of the unseen share goes to the gaps inside the range
    assert abs(inside - eps / 2) < 4 * np.sqrt(eps / 2 / len(S)), inside
    assert set(S['c']) <= {'a', 'b'} and S['k'].dtype == frame['k'].dtype
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the unseen values' warning
        p = np.exp(est.marginal(['k']).score_samples(pd.DataFrame({'k': [5, 9, 4]})))  # a gap, a tail, a seen value
    for value, q in zip((5, 9, 4), p):  # each value's share of the draws is its probability as scored
        n = (S['k'] == value).sum()
        assert abs(n - q * len(S)) < 4 * np.sqrt(q * len(S)) + 1, (value, n, q * len(S))
    np.testing.assert_array_equal(S.to_numpy(), est.sample(60_000, random_state=1)[0].to_numpy())  # seeded
    marg = est.marginal(['k']).sample(60_000, random_state=2)[0]
    assert abs((~marg['k'].isin([0, 1, 3, 4, 7])).mean() - eps) < 4 * np.sqrt(eps / len(marg))

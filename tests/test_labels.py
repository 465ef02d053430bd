"""A category of values mostly seen once (an address, a name) read as independent at its frequencies (`find_labels`,
notebook `03l_determined`), through `RAD.fit` on a DataFrame."""
import warnings

import numpy as np
import pytest

from radbook.rad import RAD

pd = pytest.importorskip('pandas')


def _houses(n=400, seed=0):
    rng = np.random.default_rng(seed)
    size = rng.lognormal(7, 0.3, n)
    names = [f"{k} Main St" for k in range(n - 20)] + [f"{k} Main St" for k in range(20)]  # 20 sold twice
    return pd.DataFrame({'address': pd.Categorical(names), 'size': size, 'price': 100 * size * rng.lognormal(0, 0.1, n),
                         'kind': pd.Categorical(rng.choice(['house', 'flat', 'farm'], n))})


def test_a_label_column_is_read_at_its_frequencies():
    X = _houses()
    est = RAD(random_state=0).fit(X)
    assert est.determined_ == {'address': None}
    assert list(est.kept_columns_) == [1, 2, 3]
    inner = RAD(random_state=0, determined=None).fit(X.drop(columns=['address']))
    freq = X['address'].value_counts(normalize=True)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the `unseen` share's warning, had a value been new
        got = est.score_samples(X.iloc[:30])
    share = 1 - 1 / (len(X) + 1)  # each seen value keeps the rest of its probability beside the `unseen` share
    want = inner.score_samples(X.iloc[:30].drop(columns=['address'])) + np.log(share * freq[X['address'].iloc[:30]].to_numpy())
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    m = est.marginal(['address'])
    p = np.exp(m.score_samples(pd.DataFrame({'address': pd.Categorical(freq.index, categories=X['address'].cat.categories)})))
    np.testing.assert_allclose(p.sum(), share, atol=1e-9)  # the rest is the `unseen` share of a new address
    c = est.conditional({'address': '3 Main St'})  # independent of the rest: the mixture's own density
    np.testing.assert_allclose(c.score_samples(X.iloc[:5, 1:]), inner.score_samples(X.iloc[:5, 1:]), atol=1e-9)
    S, _ = est.sample(200, random_state=0)
    assert set(S['address']) <= set(X['address']) and S['kind'].isin(['house', 'flat', 'farm']).all()


def test_a_new_value_scores_the_unseen_share():
    X = _houses()
    est = RAD(random_state=0).fit(X)
    row = X.iloc[:1].copy()
    row['address'] = pd.Categorical(['999 Elm St'])
    with pytest.warns(UserWarning):
        s = est.score_samples(row)
    assert np.isfinite(s).all()


def test_small_operators_keep_the_column_in_the_mixture():
    X = _houses().drop(columns=['size', 'price'])  # its values times three categories: small operators
    X['n'] = np.random.default_rng(1).integers(0, 4, len(X))
    assert RAD(random_state=0).fit(X).determined_ == {}
    assert RAD(random_state=0, solver='em').fit(_houses()).determined_ == {}  # the EM's work grows with its values
    assert RAD(random_state=0, determined=None).fit(_houses()).determined_ == {}


def test_labels_leave_two_columns_and_keep_the_other_rules():
    # a band of x (a rule by intervals) and a name per row: the name would leave the mixture one column, so it stays
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    X = pd.DataFrame({'x': x, 'band': pd.Categorical(np.where(x < -0.5, 'low', np.where(x < 0.5, 'mid', 'high'))),
                      'name': pd.Categorical([f"n{k}" for k in range(380)] + [f"n{k}" for k in range(20)])})
    assert RAD(random_state=0).fit(X).determined_ == {'band': 'x'}
    assert RAD(random_state=0).fit(X.assign(y=x + rng.normal(size=400))).determined_ == {'band': 'x', 'name': None}


def test_frequency_weights_count_as_rows():
    X = _houses()
    doubled = pd.concat([X, X], ignore_index=True)
    assert RAD(random_state=0).fit(doubled).determined_ == {}  # 380 names among 800 rows: not more than half
    assert RAD(random_state=0).fit(X, sample_weight=np.full(len(X), 2.0)).determined_ == {}
    assert RAD(random_state=0).fit(X, sample_weight=np.full(len(X), 0.5)).determined_ == {'address': None}


def test_a_refit_on_an_array_reads_no_earlier_columns():
    est = RAD(random_state=0).fit(_houses())
    est.fit(np.random.default_rng(0).normal(size=(100, 2)))  # the DataFrame's columns are not this array's
    assert est.determined_ == {} and est.n_features_in_ == 2

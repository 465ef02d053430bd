"""Missing values in fit and score, marginals, conditionals and component posteriors of a fitted RAD."""
import numpy as np
import pandas as pd
import pytest

from radbook.datapass import NpyChunks
from radbook.dictionaries import PointMass, paper_family
from radbook.metrics import jsd
from radbook.rad import RAD


def _missing(X, fraction, seed=0):
    "A copy of `X` with `fraction` of its entries set to NaN completely at random."
    X = X.copy()
    X[np.random.default_rng(seed).random(X.shape) < fraction] = np.nan
    return X


def test_missing_at_random_beats_dropping_rows_and_stays_near_the_complete_fit():
    # gaussian family, K=5,000, 30% of the entries missing: only ~6% of rows are complete (0.7^8)
    truth = paper_family('gaussian', random_state=0)
    X, _ = truth.sample(5000, random_state=1)
    Xm = _missing(X, 0.3)
    complete = RAD(random_state=0).fit(X)
    gaps = RAD(random_state=0).fit(Xm)
    dropped = RAD(random_state=0).fit(Xm[~np.isnan(Xm).any(axis=1)])
    score = lambda est: jsd(truth, est.density_, 20000, random_state=0)[0]
    j_complete, j_gaps, j_dropped = score(complete), score(gaps), score(dropped)
    # measured: 0.0195, 0.0258, 0.0828
    assert j_gaps < 0.5 * j_dropped, (j_gaps, j_dropped)
    assert j_gaps < 1.6 * j_complete, (j_gaps, j_complete)


def test_score_of_a_row_with_missing_entries_is_its_marginal():
    truth = paper_family('mixed_features', random_state=0)
    X, _ = truth.sample(3000, random_state=1)
    est = RAD(random_state=0).fit(_missing(X, 0.1))
    rows = X[:50].copy()
    rows[:, [1, 5]] = np.nan
    observed = [0, 2, 3, 4, 6]
    # fitted on an array, the marginal is the CPD itself: the scores add each seen discrete value's share (1 - eps) of it
    discrete = [n for n in observed if all(isinstance(a, PointMass) for a in est.dictionaries_[n])]
    assert discrete  # this family has discrete columns among the observed ones: each seen value keeps 1 - 1/(K+1)
    seen = len(discrete) * np.log1p(-1 / (est.n_samples_seen_ + 1))
    np.testing.assert_allclose(est._unseen(rows)[1], seen)
    np.testing.assert_allclose(est.score_samples(rows), est.marginal(observed).score_samples(rows[:, observed]) + seen, rtol=1e-12)
    # f(x_U | x_O) f(x_O) = f(x): the conditional and the marginal multiply back to the joint
    x = X[7]
    cond = est.conditional({n: x[n] for n in observed})
    np.testing.assert_array_equal(cond.features, [1, 5])
    given = np.where(np.isin(np.arange(7), observed), x, np.nan)[None]
    shares = est._unseen(x[None])[1] - est._unseen(given)[1]  # the CPD's conditional leaves out x_U's seen shares (1 - eps)
    np.testing.assert_allclose(cond.score_samples(x[None, [1, 5]]) + shares + est.score_samples(given),
                               est.score_samples(x[None]), rtol=1e-10)
    np.testing.assert_allclose(cond.weights, est.predict_proba(np.where(np.isin(np.arange(7), observed), x, np.nan)[None])[0])
    post = est.predict_proba(X[:20])
    np.testing.assert_allclose(post.sum(axis=1), 1.0)
    np.testing.assert_array_equal(est.predict(X[:20]), post.argmax(axis=1))


def test_chunked_fit_with_missing_entries_equals_the_in_memory_fit(tmp_path):
    truth = paper_family('laplacian', random_state=0)
    Xm = _missing(truth.sample(3000, random_state=2)[0], 0.2)
    path = tmp_path / 'rows.npy'
    np.save(path, Xm)
    a = RAD(random_state=0).fit(Xm)
    b = RAD(random_state=0).fit(NpyChunks(path, chunk_rows=700))
    np.testing.assert_array_equal(a.weights_, b.weights_)
    for p, q in zip(a.coefs_, b.coefs_): np.testing.assert_array_equal(p, q)


def test_data_frame_with_missing_numbers_and_categories():
    rng = np.random.default_rng(0)
    n = 1500
    kind = rng.choice(['a', 'b', 'c'], n)
    size = np.where(kind == 'a', 1.0, np.where(kind == 'b', 3.0, 5.0)) + rng.normal(0, 0.3, n)
    weight = 10 * size + rng.normal(0, 1, n)
    df = pd.DataFrame({'kind': kind, 'size': size, 'weight': weight})
    df.loc[rng.random(n) < 0.15, 'kind'] = None
    df.loc[rng.random(n) < 0.15, 'size'] = np.nan
    est = RAD(local=False, random_state=0).fit(df)  # one frame on the table as it is: conditional means in closed form
    assert np.isfinite(est.score_samples(df)).all()
    # given the category, the conditional of size is centred on that category's size
    for label, centre in (('a', 1.0), ('c', 5.0)):
        cond = est.conditional({'kind': label})
        mean_size = (cond.weights @ cond.component_means())[list(cond.features).index(1)]
        assert abs(mean_size - centre) < 0.3, (label, mean_size)
    with pytest.raises(ValueError, match="no category 'z'"): est.conditional({'kind': 'z'})
    with pytest.raises(ValueError, match="Unknown column 'height'"): est.marginal(['height'])


def test_missing_value_refusals():
    X = np.random.default_rng(0).normal(size=(200, 3))
    allnan = X.copy(); allnan[:, 1] = np.nan
    with pytest.raises(ValueError, match="no observed value"): RAD().fit(allnan)
    apart = X.copy(); apart[:100, 0] = np.nan; apart[100:, 1] = np.nan
    with pytest.raises(ValueError, match="never observed together"): RAD().fit(apart)
    withinf = X.copy(); withinf[3, 2] = np.inf
    with pytest.raises(ValueError, match="inf"): RAD().fit(withinf)
    est = RAD(2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="no missing entry"): est.density_.conditional(X[0])
    with pytest.raises(TypeError, match="non-empty dict"): est.conditional([0.1])

"""sample_weight: frequency weights, as duplicated rows in RAD's statistics."""
import copy

import numpy as np
import pytest
from sklearn.utils import check_random_state

from radbook.datapass import NpyChunks
from radbook.dictionaries import paper_family
from radbook.metrics import jsd
from radbook.rad import RAD
from radbook.solver import SolverSettings, histograms, solve_counts
from radbook.steps import TableSettings, auto_bins, count_pass, plan_fit, summary_pass


def test_weight_two_counts_as_a_duplicated_row():
    # For one plan (units, dictionaries, directions, bins), the weighted counts of X are the counts of X with every
    # row repeated by its weight, and the solver returns the same model from them, bit for bit.
    truth = paper_family('mixed', random_state=0)
    X, _ = truth.sample(1500, random_state=1)
    w = np.random.default_rng(0).integers(0, 4, len(X))
    repeated = np.repeat(X, w, axis=0)
    est = RAD(truth.n_components, dictionaries=truth.dictionaries, validation_fraction=0.0, max_iter=300, random_state=0)
    table, solver = TableSettings.of(est), SolverSettings.of(est)
    rng = check_random_state(0)
    seed = int(rng.randint(2**31 - 1))
    plan = plan_fit(summary_pass(repeated, seed, table), seed, auto_bins(len(repeated)), table, rank=truth.n_components,
                    random_state=rng)
    by_weight, by_copy = count_pass(X, plan, 0.0, sample_weight=w.astype(float)), count_pass(repeated, plan, 0.0)
    np.testing.assert_array_equal(by_weight.total, by_copy.total)
    np.testing.assert_array_equal(histograms(by_weight.total), histograms(by_copy.total))
    ops = plan.operators
    a, b = (solve_counts(ops.Rs, ops.group, plan.pairs, plan.dictionaries, counts, truth.n_components, settings=solver,
                         random_state=copy.deepcopy(rng)) for counts in (by_weight, by_copy))
    np.testing.assert_array_equal(a.weights, b.weights)
    for p, q in zip(a.coefs, b.coefs): np.testing.assert_array_equal(p, q)


def test_weighted_fit_follows_the_weights():
    # Up-weighting one true component fivefold: the weighted fit is closer to a fit of the rows repeated by their
    # weights than the unweighted fit is (measured: 0.026 against 0.044 nats; two seeds of the weighted fit differ by 0.012).
    truth = paper_family('mixed', random_state=0)
    X, labels = truth.sample(4000, random_state=1)
    w = np.where(labels == labels[0], 5, 1)
    # With the marginal atoms (the counts' weights alone); the learned default (weights in the EM too) measured
    # 0.058 against 0.074, so it asserts only the order.
    for d, margin in (('marginal', 0.75), ('auto', 1.0)):
        repeated = RAD(dictionaries=d, random_state=0).fit(np.repeat(X, w, axis=0)).density_
        weighted = RAD(dictionaries=d, random_state=0).fit(X, sample_weight=w).density_
        plain = RAD(dictionaries=d, random_state=0).fit(X).density_
        near, far = jsd(repeated, weighted, 20000, random_state=0)[0], jsd(repeated, plain, 20000, random_state=0)[0]
        assert near < margin * far, (d, near, far)


def test_weights_from_chunks_equal_weights_in_memory(tmp_path):
    truth = paper_family('laplacian', random_state=0)
    X, _ = truth.sample(3000, random_state=2)
    w = np.random.default_rng(1).integers(0, 3, len(X)).astype(float)
    np.save(tmp_path / 'rows.npy', X)
    a = RAD(random_state=0).fit(X, sample_weight=w)
    b = RAD(random_state=0).fit(NpyChunks(tmp_path / 'rows.npy', chunk_rows=700), sample_weight=w)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    assert a.n_bins_ == int(np.ceil(w.sum() ** (1 / 3)))  # auto bins from the sum of the weights


def test_zero_weight_rows_are_left_out_and_bad_weights_refused():
    X = np.random.default_rng(0).normal(size=(400, 3))
    w = np.ones(len(X)); w[:50] = 0.0
    X_out = X.copy(); X_out[:50] = 1e6  # far values on weight-0 rows change nothing the fit sees
    a = RAD(2, random_state=0, max_iter=200).fit(X, sample_weight=w)
    b = RAD(2, random_state=0, max_iter=200).fit(X_out, sample_weight=w)
    np.testing.assert_array_equal(a.weights_, b.weights_)
    with pytest.raises(ValueError, match="non-zero|sums to zero"): RAD().fit(X, sample_weight=np.zeros(len(X)))
    with pytest.raises(ValueError, match="(?i)negative"): RAD().fit(X, sample_weight=-np.ones(len(X)))
    with pytest.raises(ValueError): RAD().fit(X, sample_weight=np.ones(10))
    with pytest.raises(ValueError, match="entries but X has"): RAD().fit([X[:200], X[200:]], sample_weight=np.ones(300))


def test_unseen_share_counts_the_weights():
    # Frequency weights: a fit whose rows all weigh 2 has seen twice as many rows, so a category it never saw gets
    # 1 / (2n + 1) of the column (the score of a row with it, against the same row with that entry missing).
    import pandas as pd
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({'kind': pd.Categorical(rng.choice(list('abc'), 200)), 'size': rng.normal(size=200)})
    for weight in (1.0, 2.0, 0.5):
        est = RAD(3, shape=None, local=False, random_state=0).fit(frame, sample_weight=np.full(200, weight))
        assert est.n_samples_seen_ == 200 and est.weight_seen_ == 200 * weight
        rows = pd.DataFrame({'kind': pd.Categorical(['new', None], categories=['a', 'b', 'c', 'new']), 'size': [0.3, 0.3]})
        with pytest.warns(UserWarning, match='never seen'):
            new, missing = est.score_samples(rows)
        np.testing.assert_allclose(new - missing, np.log(1 / (200 * weight + 1)), rtol=1e-12)

"Kernel frames beside RAD's fit (notebook 03j_kernel): kept where rows they were not built on say so, exact as a CPD."
import pickle

import numpy as np
import pytest

from radbook.dictionaries import point_mass
from radbook.kernel import KernelFrames, kernel_frames, loo_choice
from radbook.rad import RAD
from models import curve_table


@pytest.fixture(scope='module')
def small():
    "40 cars' worth of rows: three continuous columns on a curve, a category and an integer count that follow them."
    return curve_table()


def test_a_small_table_keeps_kernel_frames_judged_on_every_row(small):
    rad = RAD(random_state=0).fit(small)
    assert rad.kernel_ is not None and 0 < rad.kernel_weight_ <= 0.9
    assert rad.kernel_.n_components == len(small) and rad.local_scores_['kernel_gain'] > 0
    np.testing.assert_allclose(rad.density_.weights[-len(small):].sum(), rad.kernel_weight_)
    np.testing.assert_allclose(rad.density_.weights.sum(), 1.0)
    assert np.isfinite(rad.score_samples(small)).all()
    S, labels = rad.sample(200, random_state=0)
    assert list(S.columns) == list(small.columns) and S['kind'].dtype == 'category' and S['n'].dtype == small['n'].dtype
    again = pickle.loads(pickle.dumps(rad))
    np.testing.assert_array_equal(again.score_samples(small), rad.score_samples(small))
    assert not hasattr(rad, '_shape_rows') and not hasattr(rad.global_, '_shape_rows')  # the judge's rows: not kept
    one_frame = RAD(random_state=0, local=False).fit(small)
    assert not hasattr(one_frame, '_shape_rows') and not hasattr(one_frame, '_keeps_rows')


def test_local_false_fits_no_kernel(small):
    rad = RAD(random_state=0, local=False).fit(small)
    assert rad.kernel_ is None and rad.kernel_weight_ == 0.0


def test_the_kernel_alone_is_exact_with_missing_entries_and_conditionals(small):
    rad = RAD(determined='discrete', random_state=0).fit(small)  # a category of it is a threshold of one column
    k, Z = rad.kernel_, rad.encode(small.iloc[:6])
    holed = Z.copy(); holed[:, 1] = np.nan
    np.testing.assert_allclose(k.logpdf(holed), k.marginal([0, 2, 3, 4]).logpdf(Z[:, [0, 2, 3, 4]]), rtol=1e-10)
    x = Z[0].copy(); x[3] = np.nan
    cond = k.conditional(x)  # the category given the rest: a distribution over its two codes
    np.testing.assert_allclose(np.exp(cond.logpdf(np.array([[0.], [1.]]))).sum(), 1.0, rtol=1e-10)


def test_leave_one_out_leaves_each_row_out_of_the_frequencies_too():
    # weighted rows, a discrete column with a value seen once: each row scored by the kernel frames of the others
    # (their frequencies counted without it), in the same standard units, as loo_choice's mean says
    from radbook.dictionaries import DictionaryCPD
    from radbook.kernel import discrete_codes, frequencies
    rng = np.random.default_rng(0)
    V, c, w = rng.standard_normal((20, 2)), np.r_[rng.integers(0, 2, 19), 2].astype(float), rng.uniform(0.5, 2, 20)
    dicts = [point_mass(0.), point_mass(1.), point_mass(2.)]
    codes, counts = discrete_codes(c[:, None], [0], [dicts], w)
    h, lam, mean = loo_choice(V, codes, counts, w, bandwidths=[0.5], smoothings=[0.2], per_column=False)
    rows = []
    for i in range(20):
        o = np.delete(np.arange(20), i)
        f = frequencies(np.bincount(codes[o, 0], weights=w[o], minlength=3))
        B = 0.2 * f[:, None] + 0.8 * np.eye(3)[:, codes[o, 0]]
        k = KernelFrames(V[o], w[o] / w[o].sum(), 0.5, [0, 1], 3, [0., 0.], [1., 1.],
                         DictionaryCPD(w[o] / w[o].sum(), [B], [dicts]))
        rows.append(k.logpdf(np.array([[V[i, 0], V[i, 1], c[i]]]))[0])
    np.testing.assert_allclose(mean, np.average(rows, weights=w), rtol=1e-10)


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match='bandwidth must be positive'):
        KernelFrames(np.zeros((2, 1)), np.full(2, 0.5), 0.0, [0], 1, [0.], [1.])
    with pytest.raises(ValueError, match='two rows'):
        kernel_frames(np.array([[1.], [np.nan]]), [0], [None], np.ones(2))
    Z = np.c_[np.arange(6.), np.arange(6) % 2]
    with pytest.raises(ValueError, match='need a smoothing'):
        kernel_frames(Z, [0], [None, [point_mass(0.), point_mass(1.)]], np.ones(6), bandwidth=0.3)


def test_the_bandwidth_search_prefers_wider_kernels_on_fewer_rows():
    rng = np.random.default_rng(1)
    V = rng.standard_normal((800, 2))
    none = np.zeros((800, 0), np.intp)
    few, many = loo_choice(V[:50], none[:50], [], np.ones(50))[0], loo_choice(V, none, [], np.ones(800), random_state=0)[0]
    assert few.shape == many.shape == (2,) and few.mean() > many.mean()


def test_bandwidths_found_on_a_subsample_are_kept_only_where_every_row_agrees():
    # three independent columns, 1,000 rows: the 400-row subsample's ratios lose on all the rows, so the common one stays
    rng = np.random.default_rng(1)
    V = rng.standard_normal((1000, 3))
    V = (V - V.mean(0)) / V.std(0)
    none = np.zeros((1000, 0), np.intp)
    h, _, mean = loo_choice(V, none, [], np.ones(1000), random_state=1)
    common = loo_choice(V, none, [], np.ones(1000), per_column=False)
    assert mean >= common[2] - 1e-12 and (np.ptp(h) == 0 or mean > common[2])


def test_a_column_with_its_own_scale_gets_its_own_bandwidth():
    # two columns in standard units, one of them a tight cluster structure: its bandwidth comes out narrower
    rng = np.random.default_rng(2)
    a = rng.choice([-1.5, 0.0, 1.5], 300) + 0.1 * rng.standard_normal(300)
    V = np.c_[(a - a.mean()) / a.std(), rng.standard_normal(300)]
    h = loo_choice(V, np.zeros((300, 0), np.intp), [], np.ones(300))[0]
    common = loo_choice(V, np.zeros((300, 0), np.intp), [], np.ones(300), per_column=False)
    assert h[0] < h[1] and h[0] < common[0][0]


def test_correlated_kernel_frames_stay_exact():
    # one shared full covariance: holes integrate out, marginals and conditionals in closed form, samples lean too
    from radbook.kernel import shared_logpdfs
    from radbook.gaussian import gaussian_logpdfs
    rng = np.random.default_rng(1)
    t = rng.normal(size=60)
    V = np.c_[t + 0.3 * rng.normal(size=60), -t + 0.3 * rng.normal(size=60)]
    C = np.array([[1.0, -0.6], [-0.6, 1.0]])
    k3 = KernelFrames(V, np.full(60, 1 / 60), [0.4, 0.5], [0, 1], 2, [1.0, -2.0], [2.0, 0.5], correlation=C)
    assert k3.correlation is not None and 'correlated' in repr(k3) and not k3.diagonal
    g = np.linspace(-15, 17, 641), np.linspace(-5, 1, 481)
    X = np.stack(np.meshgrid(*g, indexing='ij'), -1).reshape(-1, 2)
    mass = np.exp(k3.logpdf(X)).sum() * (g[0][1] - g[0][0]) * (g[1][1] - g[1][0])
    np.testing.assert_allclose(mass, 1.0, rtol=1e-3)
    holed = X[:5].copy(); holed[:, 1] = np.nan
    np.testing.assert_allclose(k3.logpdf(holed), k3.marginal([0]).logpdf(X[:5, [0]]), rtol=1e-10)
    cov = np.array([0.4, 0.5])[:, None] * C * np.array([0.4, 0.5])[None]
    Z = rng.normal(size=(6, 2)); Z[2, 0] = np.nan
    np.testing.assert_allclose(shared_logpdfs(Z, V, cov), gaussian_logpdfs(Z, V, np.broadcast_to(cov, (60, 2, 2))), rtol=1e-10)
    cond = k3.conditional(np.array([1.5, np.nan]))
    y = np.linspace(-8, 4, 4001)
    np.testing.assert_allclose(np.exp(cond.logpdf(y[:, None])).sum() * (y[1] - y[0]), 1.0, rtol=1e-4)
    S, _ = k3.sample(4000, random_state=0)
    assert np.corrcoef(S.T)[0, 1] < -0.8  # the rows' own anticorrelation, kept by the leaning bumps
    with pytest.raises(ValueError, match='unit diagonal'):
        KernelFrames(V, np.full(60, 1 / 60), 0.4, [0, 1], 2, [0., 0.], [1., 1.], correlation=2 * C)


def test_given_bandwidths_follow_the_columns_as_given_and_old_pickles_score():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(50, 2))
    k = kernel_frames(Z, [1, 0], [[], []], np.ones(50), bandwidth=[0.1, 1.0])  # column 1 narrow, column 0 wide
    np.testing.assert_allclose(k.bandwidth, [1.0, 0.1])  # in the frames' (sorted) order
    C = np.array([[1.0, 0.3], [0.3, 1.0]])
    a = kernel_frames(Z, [1, 0], [[], []], np.ones(50), bandwidth=[0.1, 1.0], correlation=C)
    b = kernel_frames(Z, [0, 1], [[], []], np.ones(50), bandwidth=[1.0, 0.1], correlation=C)
    np.testing.assert_allclose(a.logpdf(Z[:5]), b.logpdf(Z[:5]), rtol=1e-12)
    old = pickle.loads(pickle.dumps(k))
    for name in ('correlation', 'diagonal'): old.__dict__.pop(name)  # a pickle from before the correlated bandwidths
    np.testing.assert_array_equal(old.logpdf(Z[:5]), k.logpdf(Z[:5]))

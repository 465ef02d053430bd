"Tests of radbook.radon against independent references (numpy histograms, scipy quad, Monte Carlo)."
import numpy as np
import pytest
from scipy import integrate, stats
from radbook.dictionaries import gaussian, laplacian, paper_family, point_mass
from radbook.radon import (bin_edges, bin_index, feature_pairs, projection_counts, radon_matrix, radon_operators,
                           random_directions)
from radbook.radon import _laplace_laplace_cdf, _norm_laplace_cdf


def test_counts_match_numpy_histogram_and_are_additive():
    rng = np.random.default_rng(3)
    X = rng.standard_t(3, size=(800, 3))
    pairs, dirs = feature_pairs(3), random_directions(4, random_state=3)
    lo, width = bin_edges(X, pairs, dirs, 9)
    counts = projection_counts(X, pairs, dirs, lo, width, 9, chunk_size=100)
    for p, (j, k) in enumerate(pairs):
        for m, (c, s) in enumerate(dirs):
            edges = lo[p, m] + width[p, m] * np.arange(10)
            proj = np.clip(c * X[:, j] + s * X[:, k], edges[0], edges[-1] - 1e-9 * width[p, m])
            np.testing.assert_array_equal(counts[p, m], np.histogram(proj, edges)[0])
    halves = projection_counts(X[:333], pairs, dirs, lo, width, 9) + projection_counts(X[333:], pairs, dirs, lo, width, 9)
    np.testing.assert_array_equal(halves, counts)


def test_bin_index_is_open_ended():
    np.testing.assert_array_equal(bin_index([-1e300, 0.5, 1e300], 0.0, 1.0, 4), [0, 0, 3])


@pytest.mark.parametrize("sd,b", [(0.3, 0.2), (0.05, 1.0), (1.0, 0.01)])
def test_norm_laplace_cdf_against_quad(sd, b):
    for t in (-1.0, 0.0, 0.4):
        ref = sum(integrate.quad(lambda x: stats.norm(0, sd).pdf(x) * stats.laplace(0, b).cdf(t - x), lo, hi,
                                 points=[t] if lo < t < hi else None, limit=200, epsabs=1e-14)[0]
                  for lo, hi in [(-60 * max(sd, b), 0.0), (0.0, 60 * max(sd, b))])
        assert abs(_norm_laplace_cdf(t, sd, b) - ref) < 1e-9


def test_laplace_laplace_equal_scales_is_finite_and_right():
    t = np.linspace(-3, 3, 13)
    equal = _laplace_laplace_cdf(t, 0.2, 0.2)
    near = _laplace_laplace_cdf(t, 0.2, 0.2 * (1 + 1e-13))
    assert np.isfinite(equal).all()
    np.testing.assert_allclose(equal, near, atol=1e-12)
    x = np.abs(t) / 0.2
    np.testing.assert_allclose(equal, np.where(t < 0, np.exp(-x) * (2 + x) / 4, 1 - np.exp(-x) * (2 + x) / 4), atol=1e-15)


def test_exact_matches_monte_carlo_for_all_kinds():
    atoms = [gaussian(0.2, 0.5), laplacian(-0.3, 0.4), point_mass(0.5), stats.t(4, loc=0.1, scale=0.3)]
    theta = np.array([0.0, np.pi / 2, np.pi / 4, 2.0])
    dirs = np.column_stack([np.cos(theta), np.sin(theta)])
    lo, width, n_mc = np.full(4, -2.0), np.full(4, 0.4), 20000
    exact = radon_matrix(atoms, atoms, dirs, lo, width, 10)
    mc = radon_matrix(atoms, atoms, dirs, lo, width, 10, method='monte_carlo', n_mc=n_mc, random_state=0)
    np.testing.assert_allclose(exact.sum(axis=1), 1.0, atol=1e-12)
    assert (np.abs(exact - mc) <= 5 * np.sqrt(exact * (1 - exact) / n_mc) + 1e-3).all()


def test_discrete_pairs_land_in_the_same_bins_as_data():
    fam = paper_family('mixed_features', random_state=4)
    X, _ = fam.sample(5000, random_state=4)
    pairs, dirs = np.array([[4, 5], [4, 6], [5, 6]]), random_directions(30, random_state=4)
    lo, width = bin_edges(X, pairs, dirs, 3)  # 3 bins on [-3, 3]-like ranges: edges often hit the values exactly
    y = projection_counts(X, pairs, dirs, lo, width, 3) / len(X)
    Rs, group = radon_operators(fam.dictionaries, pairs, dirs, lo, width, 3)
    vals = np.array([a.value for a in fam.dictionaries[4]])
    for p, (j, k) in enumerate(pairs):
        T = ((X[:, j, None] == vals)[:, :, None] & (X[:, k, None] == vals)[:, None, :]).mean(axis=0)
        np.testing.assert_allclose(np.einsum('miab,ab->mi', Rs[group[p]], T), y[p], atol=1e-12)


def test_sharing():
    fam = paper_family('gaussian', random_state=0)
    X, _ = fam.sample(500, random_state=0)
    pairs, dirs = feature_pairs(8), random_directions(5, random_state=0)
    Rs, group = radon_operators(fam.dictionaries, pairs, dirs, *bin_edges(X, pairs, dirs, 8, shared=True), 8)
    assert len(Rs) == 1 and (group == 0).all()
    Rs, group = radon_operators(fam.dictionaries, pairs, dirs, *bin_edges(X, pairs, dirs, 8), 8)
    assert len(Rs) == 28


def test_robust_range_with_holes_is_nanquantile_per_column():
    # the per-pair quantiles over the rows that hold both features are np.nanquantile's, to the last bit
    from radbook.radon import _robust_range, _project
    rng = np.random.default_rng(0)
    X = rng.normal(size=(230, 5)) * [1.0, 10.0, 0.1, 3.0, 1.0]
    X[rng.random(X.shape) < 0.05] = np.nan
    pairs = np.array([(j, k) for j in range(5) for k in range(j + 1, 5)])
    th = np.linspace(0, np.pi, 12, endpoint=False)
    lo, hi = _robust_range(X, pairs, np.cos(th), np.sin(th), 0.01)
    q = np.nanquantile(_project(X, pairs, np.cos(th), np.sin(th)), [0.01, 0.99], axis=0)
    np.testing.assert_array_equal(lo, q[0] - 0.25 * (q[1] - q[0]))
    np.testing.assert_array_equal(hi, q[1] + 0.25 * (q[1] - q[0]))

"""Timings of radbook.radon: projection histograms and exact vs Monte Carlo Radon matrices.

Run from the repository root: `python benchmarks/bench_radon.py` (add `--quick` to skip n_mc=10,000).
"""
import sys, time
import numpy as np
from radbook.dictionaries import DictionaryCPD, gaussian, laplacian, paper_family
from radbook.radon import bin_edges, feature_pairs, projection_counts, radon_operators, random_directions

def best_of(f, repeat=3):
    "Smallest wall time of `repeat` calls of `f` (seconds)."
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter(); f(); times.append(time.perf_counter() - t0)
    return min(times)

def per_feature_model(n_features=8, n_atoms=16, n_components=25, seed=0):
    "A model whose features each have their own dictionary of n_atoms/2 Gaussians and n_atoms/2 Laplacians."
    rng = np.random.default_rng(seed)
    dicts = []
    for _ in range(n_features):
        mu, sd = rng.uniform(-1, 1, n_atoms), rng.uniform(0.05, 0.2, n_atoms)
        dicts.append([gaussian(m, s) for m, s in zip(mu[::2], sd[::2])] + [laplacian(m, s) for m, s in zip(mu[1::2], sd[1::2])])
    coefs = [rng.dirichlet(np.ones(n_atoms), n_components).T for _ in range(n_features)]
    return DictionaryCPD(rng.dirichlet(np.ones(n_components)), coefs, dicts)

def main(quick=False):
    K, M = 40_000, 40
    n_bins = int(np.ceil(K ** (1 / 3)))
    fam = paper_family('gaussian', random_state=0)
    X, _ = fam.sample(K, random_state=0)
    pairs, dirs = feature_pairs(X.shape[1]), random_directions(M, random_state=0)
    lo, width = bin_edges(X, pairs, dirs, n_bins)
    print(f"K={K}, N={X.shape[1]} ({len(pairs)} pairs), M={M}, n_bins={n_bins}")
    print(f"bin_edges:          {best_of(lambda: bin_edges(X, pairs, dirs, n_bins)):.3f} s")
    print(f"projection_counts:  {best_of(lambda: projection_counts(X, pairs, dirs, lo, width, n_bins)):.3f} s")

    other = per_feature_model()
    Xo, _ = other.sample(K, random_state=0)
    cases = [("gaussian family, shared dictionary + shared bins", fam.dictionaries, X, True),
             ("gaussian family, shared dictionary, per-pair bins", fam.dictionaries, X, False),
             ("per-feature dictionaries (8 G + 8 L atoms), shared bins", other.dictionaries, Xo, True)]
    n_mcs = (1000,) if quick else (1000, 10_000)
    for name, dicts, data, shared in cases:
        lo, width = bin_edges(data, pairs, dirs, n_bins, shared=shared)
        args = (dicts, pairs, dirs, lo, width, n_bins)
        Rs, _ = radon_operators(*args)
        t_exact = best_of(lambda: radon_operators(*args))
        line = f"{name}: {len(Rs)} R of shape {Rs[0].shape}; exact {t_exact:.3f} s"
        for n_mc in n_mcs:
            t_mc = best_of(lambda: radon_operators(*args, method='monte_carlo', n_mc=n_mc, random_state=0), repeat=1)
            line += f"; MC n_mc={n_mc}: {t_mc:.2f} s ({t_mc / t_exact:.0f}x exact)"
        print(line)

if __name__ == '__main__':
    main(quick='--quick' in sys.argv)

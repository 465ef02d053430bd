"""Fit-time benchmark of RAD against scikit-learn's GaussianMixture on the same data, in the same process.

Run from the repository root: `python benchmarks/bench_rad.py` (about a minute on 2 cores). Prints fit times and
their ratio (RAD / GMM) for the paper's 'gaussian' family (N=8, F=25) at K=40,000, for RAD with the true
dictionaries (RAD*), with automatic dictionaries, and with Monte Carlo R; the machine is shared, so ratios are the
figures to compare between runs.
"""
import time

import numpy as np
from sklearn.mixture import GaussianMixture

from radbook.dictionaries import paper_family
from radbook.rad import RAD
from radbook.solver import PaperOptions


def timed(f, repeat=2):
    "Smallest wall time of `repeat` calls of `f`, and the last result."
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter(); out = f(); best = min(best, time.perf_counter() - t0)
    return best, out


def main(K=40_000):
    truth = paper_family('gaussian', random_state=0)
    X, _ = truth.sample(K, random_state=1)
    X_test, _ = truth.sample(20_000, random_state=2)
    t_gmm, gmm = timed(lambda: GaussianMixture(25, random_state=0).fit(X))
    print(f"gaussian family, K={K}, N={X.shape[1]}, F=25 (best of 2 fits each)")
    print(f"  GaussianMixture(25)         {t_gmm:6.2f} s   held-out loglik {gmm.score(X_test):7.3f}")
    runs = {'RAD* (true dictionaries)': dict(dictionaries=truth.dictionaries),
            'RAD* Monte Carlo R, 2000':   dict(dictionaries=truth.dictionaries, paper_options=PaperOptions(radon='monte_carlo')),
            'RAD (auto dictionaries)':    dict()}
    for name, kw in runs.items():
        t, rad = timed(lambda: RAD(25, random_state=0, **kw).fit(X))
        print(f"  {name:27s} {t:6.2f} s   held-out loglik {rad.score(X_test):7.3f}   ratio to GMM {t / t_gmm:5.2f}")
    print(f"  truth                                 held-out loglik {truth.logpdf(X_test).mean():7.3f}")


if __name__ == '__main__':
    main()

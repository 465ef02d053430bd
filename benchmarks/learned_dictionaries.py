"""Ablation for learned dictionaries: RAD with dictionaries read off each 1-D marginal ('marginal', the default
before issue 14), with learned ones ('auto': tied-atom EM, and the solver started from the EM's fit) and with the
true atoms (RAD*), on the paper's four families.

Run from the repository root: `python benchmarks/learned_dictionaries.py [K ...]` (default K = 2000 10000 40000;
`--seeds 0 1` picks the trials). Prints, per family and K, the JSD (nats, mean over seeds, 20,000 Monte Carlo samples
per side) and mean fit time of each configuration, then the ratios auto/RAD*, marginal/RAD*, auto/marginal (JSD) and
auto/marginal (time). The three fits of a trial run one after another in this process, so their times compare.
"""
import sys
import time
import warnings

import numpy as np

from radbook.dictionaries import PAPER_FAMILIES, paper_family
from radbook.metrics import jsd
from radbook.rad import RAD

CONFIGS = ('marginal', 'auto', 'RAD*')


def trial(family, K, seed):
    "JSD and fit seconds of every configuration on one trial (same samples, same seed)."
    truth = paper_family(family, random_state=seed)
    X, _ = truth.sample(K, random_state=100 + seed)
    out = {}
    for c in CONFIGS:
        rad = RAD(truth.n_components, dictionaries=truth.dictionaries if c == 'RAD*' else c, random_state=seed)
        t0 = time.perf_counter()
        rad.fit(X)
        out[c] = (jsd(truth, rad.density_, 20000, random_state=200 + seed)[0], time.perf_counter() - t0)
    return out


def main(sizes=(2000, 10000, 40000), seeds=(0, 1)):
    print(f"{'family':15} {'K':>6} " + ' '.join(f"{c:>16}" for c in CONFIGS) + "  auto/RAD* marginal/RAD* auto/marginal time")
    for family in PAPER_FAMILIES:
        for K in sizes:
            runs = [trial(family, K, s) for s in seeds]
            j = {c: np.mean([r[c][0] for r in runs]) for c in CONFIGS}
            t = {c: np.mean([r[c][1] for r in runs]) for c in CONFIGS}
            cells = ' '.join(f"{j[c]:.4f} ({t[c]:5.1f}s)" for c in CONFIGS)
            print(f"{family:15} {K:>6} {cells}  {j['auto'] / j['RAD*']:12.2f} {j['marginal'] / j['RAD*']:9.2f} "
                  f"{j['auto'] / j['marginal']:12.2f} {t['auto'] / t['marginal']:4.2f}", flush=True)


if __name__ == '__main__':
    warnings.filterwarnings('ignore')
    args, seeds = sys.argv[1:], (0, 1)
    if '--seeds' in args:
        i = args.index('--seeds')
        rest = args[i + 1:]
        n = next((k for k, a in enumerate(rest) if not a.isdigit()), len(rest))
        seeds, args = tuple(int(a) for a in rest[:n]), args[:i]
    main(tuple(int(k) for k in args) or (2000, 10000, 40000), seeds)

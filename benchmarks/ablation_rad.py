"""Ablation of RAD's start, solver, rank choice and dictionaries on the paper's four families.

Run from the repository root: `python benchmarks/ablation_rad.py [K ...]` (default K = 2000 10000; about 20 minutes).
Prints JSD (nats, mean of 2 seeds, 20,000 Monte Carlo samples per side) and mean fit time per configuration:
  paper        the paper's algorithm: simplex LS + SPA + J2 alternation, then plain Armijo PGD on J1 to convergence
  paper+es     the paper's start, then radbook's solver (accelerated PGD, early stop on held-out counts)
  best-of-3    3 random starts, accelerated PGD stopped early, the start with the lowest held-out loss (radbook 0.0.1)
  average      radbook's default: 8 random starts stopped early, their equal-weight average
  rank-auto    the default with n_components='auto' (rank from (2, 4, 8, 16, 32) by held-out log-likelihood)
  auto-dicts   the default with dictionaries built from the data (RAD rather than RAD*)
  em*          not RAD: the same model fitted by maximum likelihood to the samples (DictionaryEM, true dictionaries),
               the reference for what the samples allow
All but auto-dicts use the true dictionaries (RAD*). Times are on a shared machine: compare them within a row.
`python benchmarks/ablation_rad.py --configs average 'em*' 2000 10000` runs only the named columns.
"""
import sys
import time

import numpy as np

from radbook.baselines import DictionaryEM
from radbook.dictionaries import PAPER_FAMILIES, paper_family
from radbook.metrics import jsd
from radbook.rad import RAD
from radbook.solver import PaperOptions

CONFIGS = {
    'paper': dict(paper_options=PaperOptions.paper(), validation_fraction=0.0, max_iter=3000),
    'paper+es': dict(paper_options=PaperOptions(init='paper')),
    'best-of-3': dict(n_init=3, combine='best'),
    'average': dict(),
    'rank-auto': dict(n_components='auto'),
    'auto-dicts': dict(dictionaries='auto'),
    'em*': dict(estimator=DictionaryEM),
}


def fit_and_score(family, K, seed, kw):
    "JSD and fit time of one configuration on one trial."
    truth = paper_family(family, random_state=seed)
    X, _ = truth.sample(K, random_state=100 + seed)
    params = dict(n_components=truth.n_components, dictionaries=truth.dictionaries, random_state=seed)
    params.update(kw)
    estimator = params.pop('estimator', RAD)
    t0 = time.perf_counter()
    rad = estimator(**params).fit(X)
    seconds = time.perf_counter() - t0
    return jsd(truth, rad.density_, 20000, random_state=200 + seed)[0], seconds, rad


def main(sizes=(2000, 10000), seeds=(0, 1), configs=tuple(CONFIGS)):
    print(f"{'family':15} {'K':>6} " + ' '.join(f"{c:>17}" for c in configs))
    for family in PAPER_FAMILIES:
        for K in sizes:
            cells = []
            for kw in (CONFIGS[c] for c in configs):
                runs = [fit_and_score(family, K, seed, kw) for seed in seeds]
                cells.append(f"{np.mean([r[0] for r in runs]):.4f} ({np.mean([r[1] for r in runs]):5.1f}s)")
            print(f"{family:15} {K:>6} " + ' '.join(f"{c:>17}" for c in cells), flush=True)


if __name__ == '__main__':
    import warnings
    warnings.filterwarnings('ignore')
    args = sys.argv[1:]
    configs = []
    if args[:1] == ['--configs']:
        args = args[1:]
        while args and not args[0].isdigit(): configs.append(args.pop(0))
        unknown = [c for c in configs if c not in CONFIGS]
        if unknown: sys.exit(f"unknown configuration {unknown[0]!r}; choose from {', '.join(CONFIGS)}")
    main(tuple(int(k) for k in args) or (2000, 10000), configs=tuple(configs) or tuple(CONFIGS))

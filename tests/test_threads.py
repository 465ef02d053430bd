"""The twin beside the parts on two threads (`fit_local`, notebook `03g_local`): the same fit as on one thread."""
import threading
import time

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import radbook.local as L
from radbook.rad import RAD


def _curve(n=600, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(-2, 2, n)
    return np.c_[t, t ** 2 + 0.1 * rng.normal(size=n), np.sin(2 * t) + 0.1 * rng.normal(size=n)]


@pytest.fixture
def slow_twin(monkeypatch):
    """Threads from any number of rows, and a twin that takes half a second longer, so the parts' checks wait for it;
    records whether the twin ran on the main thread."""
    monkeypatch.setattr(L, '_THREAD_ROWS', 0)
    ran, inner = [], L._with_twin
    def twin(*args, **kwargs):
        ran.append(threading.current_thread() is threading.main_thread())
        time.sleep(0.5)
        return inner(*args, **kwargs)
    monkeypatch.setattr(L, '_with_twin', twin)
    return ran


def _fit(n_jobs, X):
    return L.fit_local(RAD(random_state=0, n_jobs=n_jobs), X)


def test_same_fit_on_two_threads(slow_twin):
    X = _curve()
    before = [m['num_threads'] for m in threadpool_info()]
    one, two = _fit(1, X), _fit(2, X)
    assert slow_twin == [True, False]  # n_jobs=1 on this thread, n_jobs=2 on another
    assert one.parts and one.twin is not None and len(two.parts) == len(one.parts)
    assert list(one.scores.items()) == list(two.scores.items())  # every choice, in the order a single thread makes them
    Z = one.one.encode(X)
    np.testing.assert_array_equal(one.density.logpdf(Z), two.density.logpdf(Z))
    assert [m['num_threads'] for m in threadpool_info()] == before  # the pools' limits restored


def test_abandoned_parts_the_same_on_two_threads(slow_twin, monkeypatch):
    monkeypatch.setattr(L, '_ABANDON', -1e9)  # every bound "trails": the parts stop at the first check
    X = _curve()
    one, two = _fit(1, X), _fit(2, X)
    assert 'bound_gain' in one.scores and not one.parts and not two.parts
    assert list(one.scores.items()) == list(two.scores.items())


def test_a_small_table_stays_on_one_thread(monkeypatch):
    ran, inner = [], L._with_twin
    def twin(*args, **kwargs):
        ran.append(threading.current_thread() is threading.main_thread())
        return inner(*args, **kwargs)
    monkeypatch.setattr(L, '_with_twin', twin)
    _fit(-1, _curve(300))  # fewer rows than `_THREAD_ROWS`
    assert ran == [True]


@pytest.mark.parametrize('n_jobs', [0, 1.5, True, '2'])
def test_n_jobs_refused(n_jobs):
    with pytest.raises(ValueError, match='n_jobs'):
        RAD(n_jobs=n_jobs).fit(_curve(100))


def test_fit_threads_reads_n_jobs_as_joblib():
    from joblib import cpu_count, parallel_config
    assert L.fit_threads(RAD(n_jobs=1)) == 1 and L.fit_threads(RAD(n_jobs=None)) == 1
    assert L.fit_threads(RAD(n_jobs=-1)) == cpu_count() and L.fit_threads(object()) == 1
    with parallel_config(n_jobs=2): assert L.fit_threads(RAD(n_jobs=None)) == 2

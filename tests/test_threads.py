"""The twin beside the parts on another core (`fit_local`, notebook `03g_local`), on a thread of its own or on the worker
process: the same fit as on one thread."""
import threading
import time
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_info

import radbook.local as L
from radbook.rad import RAD

pytestmark = pytest.mark.worker  # these tests patch radbook and use its worker process on purpose


def _curve(n=600, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(-2, 2, n)
    return np.c_[t, t ** 2 + 0.1 * rng.normal(size=n), np.sin(2 * t) + 0.1 * rng.normal(size=n)]


@pytest.fixture(params=['thread', 'worker'])
def late_twin(monkeypatch, request):
    """The twin aside from any number of rows, on a thread of its own (no worker starts) or on the worker process
    (started beforehand), read only once the bounds of two parts are in (after the partition, `with_values` runs on
    this thread once per part checked), so the checks wait for it; records where the twin ran in this process and
    how many parts were checked."""
    monkeypatch.setattr(L, '_THREAD_ROWS', 0)
    seen = dict(on_main=[], where=request.param)
    if request.param == 'thread':
        def no_worker(): raise RuntimeError("no worker process here")
        monkeypatch.setattr(L, 'warm', no_worker)
    else:
        L.warm().result()  # started, so the twin goes to it
        done, result = L._Twin.done, L._Twin.result
        monkeypatch.setattr(L._Twin, 'done', lambda self: seen['two_in'].is_set() and done(self))
        def late_result(self):
            assert seen['two_in'].wait(60), "the parts' bounds never came in"
            seen['on_worker'] = True
            return result(self)
        monkeypatch.setattr(L._Twin, 'result', late_result)
    def reset():  # before each fit
        seen.update(bounds=0, parted=False, two_in=threading.Event(), on_worker=False)
    reset(); seen['reset'] = reset
    twin, values, partition = L._with_twin, L.with_values, L.fit_partition
    def late(*args, **kwargs):
        on_main = threading.current_thread() is threading.main_thread()
        seen['on_main'].append(on_main)
        if not on_main: assert seen['two_in'].wait(60), "the parts' bounds never came in"
        return twin(*args, **kwargs)
    def parted(*args, **kwargs):
        seen['parted'] = True
        return partition(*args, **kwargs)
    def counted(*args, **kwargs):
        if seen['parted'] and threading.current_thread() is threading.main_thread():
            seen['bounds'] += 1
            if seen['bounds'] >= 2: seen['two_in'].set()
        return values(*args, **kwargs)
    monkeypatch.setattr(L, '_with_twin', late)
    monkeypatch.setattr(L, 'fit_partition', parted)
    monkeypatch.setattr(L, 'with_values', counted)
    return seen


def _aside(seen):
    "The first fit's twin ran on this thread; the second's on a thread of its own, or on the worker (unseen here)."
    assert seen['on_main'] == ([True, False] if seen['where'] == 'thread' else [True]), seen['on_main']
    assert seen['on_worker'] == (seen['where'] == 'worker')


def _fit(n_jobs, X, **kwargs):
    return L.fit_local(RAD(random_state=0, n_jobs=n_jobs), X, **kwargs)


def test_same_fit_on_two_threads(late_twin):
    X = _curve()
    before, filters = [m['num_threads'] for m in threadpool_info()], list(warnings.filters)
    one = _fit(1, X)
    late_twin['reset']()
    two = _fit(2, X)
    _aside(late_twin)  # n_jobs=1 on this thread, n_jobs=2 on another, or on the worker
    assert late_twin['bounds'] >= 2  # the twin ended only after two parts' bounds were in
    assert one.parts and one.twin is not None and len(two.parts) == len(one.parts)
    assert list(one.scores.items()) == list(two.scores.items())  # every choice, in the order a single thread makes them
    Z = one.one.encode(X)
    np.testing.assert_array_equal(one.density.logpdf(Z), two.density.logpdf(Z))
    assert [m['num_threads'] for m in threadpool_info()] == before  # the pools' limits restored
    assert list(warnings.filters) == filters


def test_abandoned_parts_the_same_on_two_threads(late_twin, monkeypatch):
    monkeypatch.setattr(L, '_ABANDON', -1e9)  # every bound "trails": the parts stop at the first check
    X = _curve()
    one = _fit(1, X)
    assert late_twin['bounds'] == 1  # one thread: stopped at the first part's check
    late_twin['reset']()
    two = _fit(2, X)
    _aside(late_twin)
    # the checks waited for the twin, past the first part, where one thread stopped: on a thread the parts go on while
    # the released twin finishes; on the worker its rows are read as soon as it says it is done (which a loaded machine
    # may delay by a part or more)
    assert late_twin['bounds'] > 2 if late_twin['where'] == 'thread' else late_twin['bounds'] >= 2
    assert 'bound_gain' in one.scores and not one.parts and not two.parts
    assert list(one.scores.items()) == list(two.scores.items())


def _no_worker(monkeypatch):
    "No worker process starts: the twin aside goes to a thread of its own."
    def no_worker(): raise RuntimeError("no worker process here")
    monkeypatch.setattr(L, 'warm', no_worker)


def test_the_same_through_rad_fit(monkeypatch):
    monkeypatch.setattr(L, '_THREAD_ROWS', 0)  # the fit's judge refits on folds, each on two threads too
    _no_worker(monkeypatch)
    X = _curve(400, seed=1)
    one = RAD(random_state=0, n_jobs=1).fit(X)
    ran = _ran_on_main(monkeypatch)
    two = RAD(random_state=0, n_jobs=2).fit(X)
    assert ran and not ran[0]  # the fit's twin on a thread of its own
    assert one.em_frame_ is not None and one.local_
    assert list(one.local_scores_.items()) == list(two.local_scores_.items())
    np.testing.assert_array_equal(one.score_samples(X), two.score_samples(X))


def test_an_error_in_the_twin_is_raised(monkeypatch):
    monkeypatch.setattr(L, '_THREAD_ROWS', 0)
    _no_worker(monkeypatch)
    def broken(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread(): raise RuntimeError('twin broke')
    monkeypatch.setattr(L, '_with_twin', broken)
    with pytest.raises(RuntimeError, match='twin broke'): _fit(2, _curve())


def _worker_future(kept):
    "A finished future as the worker's `submit` gives it: the `outcome` `kept` and a peak memory."
    from concurrent.futures import Future
    f = Future()
    f.set_result((kept, 100.0))
    return f


def test_the_twin_from_the_worker_is_read_in_its_turn():
    out = L.LocalFit(None, [], np.ones(1), None, {'one': -1.0})
    said = [(UserWarning('from the twin'), UserWarning, __file__, 1)]
    twin = L._Twin(_worker_future((('twin', 0.25, {'em': -0.5}, np.zeros(3)), None, said)), out, ())
    assert twin.done() and out.twin is None  # nothing set before its rows are read
    with pytest.warns(UserWarning, match='from the twin'): rows = twin.result()
    np.testing.assert_array_equal(rows, np.zeros(3))
    assert (out.twin, out.twin_share, out.scores) == ('twin', 0.25, {'one': -1.0, 'em': -0.5})
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        np.testing.assert_array_equal(twin.result(), np.zeros(3))  # read again: no second warning
    broken = L._Twin(_worker_future((None, RuntimeError('twin broke'), [])), out, ())
    for _ in range(2):  # raised each time it is read, as a future's error is
        with pytest.raises(RuntimeError, match='twin broke'): broken.result()


def _ran_on_main(monkeypatch):
    ran, inner = [], L._with_twin
    def twin(*args, **kwargs):
        ran.append(threading.current_thread() is threading.main_thread())
        return inner(*args, **kwargs)
    monkeypatch.setattr(L, '_with_twin', twin)
    return ran


def test_a_small_table_stays_on_one_thread(monkeypatch):
    "Without a worker, a small table's twin fits on this thread: its small products would hold the lock on another."
    ran = _ran_on_main(monkeypatch)
    _no_worker(monkeypatch)
    _fit(-1, _curve(300))  # fewer rows than `_THREAD_ROWS`
    assert ran == [True]


def test_a_small_table_shares_its_twin_and_parts_with_a_started_worker(monkeypatch):
    """Once the worker has started (from a session's second fit on), a small table's twin and parts go to it too: the
    same fit as on one process."""
    L.warm().result()
    sent, submit = [], L.submit
    monkeypatch.setattr(L, 'submit', lambda f, *args: sent.append(f.__name__) or submit(f, *args))
    X = _curve(300)
    two = _fit(2, X)
    assert sent[:2] == ['_twin_ahead', '_twin_remote'] and '_fit_parts' in sent  # its first fit ahead, as the one frame fits
    sent.clear()
    one = _fit(1, X)
    assert not sent and len(one.parts) >= 2
    assert list(one.scores.items()) == list(two.scores.items())
    Z = one.one.encode(X)
    np.testing.assert_array_equal(one.density.logpdf(Z), two.density.logpdf(Z))


def test_rows_of_weight_zero_do_not_count(monkeypatch):
    X = _curve(300)
    monkeypatch.setattr(L, '_THREAD_ROWS', 200)
    _no_worker(monkeypatch)
    ran = _ran_on_main(monkeypatch)
    _fit(2, X, sample_weight=np.r_[np.ones(150), np.zeros(150)])  # 150 rows that count: one thread
    _fit(2, X)  # 300: two
    assert ran == [True, False]


@pytest.mark.parametrize('n_jobs', [0, 1.5, True, '2'])
def test_n_jobs_refused(n_jobs):
    with pytest.raises(ValueError, match='n_jobs'):
        RAD(n_jobs=n_jobs).fit(_curve(100))


def test_fit_threads_reads_n_jobs_as_joblib():
    from joblib import Parallel, cpu_count, delayed, parallel_config
    assert L.fit_threads(RAD(n_jobs=1)) == 1 and L.fit_threads(RAD(n_jobs=None)) == 1
    assert L.fit_threads(RAD(n_jobs=-1)) == cpu_count() and L.fit_threads(object()) == 1
    with parallel_config(n_jobs=2): assert L.fit_threads(RAD(n_jobs=None)) == 2
    inside = Parallel(n_jobs=2, prefer='threads')(delayed(L.fit_threads)(RAD(n_jobs=-1)) for _ in range(2))
    assert inside == [1, 1]  # a grid search's workers share the cores already


def test_a_rad_pickled_before_n_jobs_unpickles_with_its_default():
    """A RAD pickled by a radbook that had no `n_jobs` (its state lacks it): it takes the default and fits and serves as
    before; so does a `DictionaryEM` missing a parameter."""
    import pickle
    X = np.random.default_rng(0).normal(size=(200, 3)) @ [[1, .5, 0], [0, 1, .5], [0, 0, 1]]
    rad = RAD(local=False, n_init=2, random_state=0).fit(X)
    old = copy_without(rad, 'n_jobs')
    back = pickle.loads(pickle.dumps(old))
    assert back.n_jobs == -1 and back.get_params()['n_jobs'] == -1
    np.testing.assert_array_equal(back.score_samples(X[:10]), rad.score_samples(X[:10]))
    np.testing.assert_array_equal(back.fit(X).score_samples(X[:10]), rad.score_samples(X[:10]))
    from radbook.baselines import DictionaryEM  # the other estimators that serve a table (`TableDensityMixin`) too
    em = DictionaryEM(n_components=3, n_init=2, random_state=0).fit(X)
    again = pickle.loads(pickle.dumps(copy_without(em, 'tol')))
    assert again.tol == DictionaryEM().tol
    np.testing.assert_array_equal(again.score_samples(X[:10]), em.score_samples(X[:10]))


def copy_without(est, name):
    "A copy of `est` whose state lacks the attribute `name`, as an older version pickled it."
    import copy
    old = copy.copy(est)
    del old.__dict__[name]
    with pytest.raises(AttributeError): old.get_params()  # what such a pickle did before `__setstate__` filled it in
    return old


def _survey(n=400, seed=0):
    "Four discrete columns, every one read as point masses: the table where RAD's fit is made at five seeds."
    rng = np.random.default_rng(seed)
    group = rng.random(n) < 0.4
    return np.column_stack([np.where(group, rng.integers(0, 3, n), rng.integers(2, 6, n)), rng.integers(0, 3, n) + group,
                            rng.integers(0, 4, n) + 2 * group, group & (rng.random(n) < 0.8)]).astype(float)


def test_the_seeds_the_same_on_two_threads(monkeypatch):
    import radbook.seeds as S
    monkeypatch.setattr(S, '_THREAD_ROWS', 0)
    ran, inner = [], S._at_seed
    def at_seed(*args, **kwargs):
        ran.append(threading.current_thread() is threading.main_thread())
        return inner(*args, **kwargs)
    monkeypatch.setattr(S, '_at_seed', at_seed)
    X = _survey()
    one = RAD(random_state=0, n_jobs=1).fit(X)
    assert ran == [True] * 4
    two = RAD(random_state=0, n_jobs=2).fit(X)
    assert ran[4:] == [False] * 4  # the four other seeds on the pool's threads
    assert len(one.seeds_) == len(two.seeds_) == 4
    np.testing.assert_array_equal(one.score_samples(X), two.score_samples(X))
    monkeypatch.setattr(S, '_THREAD_ROWS', 401)  # fewer rows than that: one thread, whatever n_jobs says
    RAD(random_state=0, n_jobs=2).fit(X)
    assert ran[8:] == [True] * 4


def test_a_worker_that_starts_late_still_takes_parts(monkeypatch):
    """Parts go to the worker once it has started, even where it had not when the parts began: here it says so only
    after the first parts are in (a cold start takes one to two seconds), and it still fits some of the parts, the fit
    the same as on one process."""
    from concurrent.futures import Future
    rng = np.random.default_rng(1)
    t = rng.uniform(-2, 2, 1500)
    X = np.c_[t, t ** 2 + 0.1 * rng.normal(size=1500), np.sin(2 * t) + 0.1 * rng.normal(size=1500)]
    for name, value in (('_CHECK_ROWS', 300), ('_WORKER_PARTS', 4), ('_WORKER_CHUNK', 3)):
        monkeypatch.setattr(L, name, value)  # a fine partition of a dozen parts or more from 1,500 rows
    L.warm().result()
    fitted, fit_part = [], L._fit_part
    def counted(*args):  # this process's parts
        fitted.append(1)
        return fit_part(*args)
    monkeypatch.setattr(L, '_fit_part', counted)
    def late():  # the worker's start, done once this process has fitted two parts
        out = Future()
        def wait():
            while len(fitted) < 2 and not out.done(): time.sleep(0.01)
            out.set_result(None)
        threading.Thread(target=wait, daemon=True).start()
        return out
    sent, submit = [], L.submit
    monkeypatch.setattr(L, 'warm', late)
    monkeypatch.setattr(L, 'submit', lambda f, *args: sent.append(f.__name__) or submit(f, *args))
    one = _fit(1, X)
    fitted.clear()
    two = _fit(2, X)
    assert len(one.parts) >= 8 and sent.count('_fit_parts') > 0
    assert list(one.scores.items()) == list(two.scores.items())
    Z = one.one.encode(X)
    np.testing.assert_array_equal(one.density.logpdf(Z), two.density.logpdf(Z))


def test_parts_abandoned_leave_the_worker_nothing_to_fit(monkeypatch):
    """Where the first check abandons the parts, no chunk of parts goes to the worker between reading the chunks it gave
    back and that check (this process's first part, fitted once every chunk handed over is back). A chunk handed over
    then could not be cancelled: loky passes a call on at once, and the worker would have fitted it after the fit, for
    nothing. (Chunks handed over before, at the start, still run to their end: the test waits for them.)"""
    rng = np.random.default_rng(1)
    t = rng.uniform(-2, 2, 1500)
    X = np.c_[t, t ** 2 + 0.1 * rng.normal(size=1500), np.sin(2 * t) + 0.1 * rng.normal(size=1500)]
    for name, value in (('_CHECK_ROWS', 300), ('_WORKER_PARTS', 4), ('_WORKER_CHUNK', 3), ('_ABANDON', -1e9)):
        monkeypatch.setattr(L, name, value)  # a dozen parts or more, every bound "trailing": abandoned at the first check
    L.warm().result()
    sent, submit, first = [], L.submit, threading.Event()
    def recorded(f, *args):
        future = submit(f, *args)
        if f.__name__ == '_fit_parts': sent.append((first.is_set(), future))
        return future
    monkeypatch.setattr(L, 'submit', recorded)
    fit_part = L._fit_part
    def waits(*args):  # this process's first part ends once the worker has given back every chunk it was handed
        out = fit_part(*args)
        for _, future in list(sent): future.result(timeout=120)
        first.set()
        return out
    monkeypatch.setattr(L, '_fit_part', waits)
    out = _fit(2, X)
    assert sent and first.is_set() and 'bound_gain' in out.scores and not out.parts
    assert not any(after for after, _ in sent)  # none handed over once this process's first part was fitted


def test_no_worker_for_a_table_without_two_columns_of_numbers(monkeypatch):
    "A table of categories cannot have parts, so its fit starts no worker for the twin."
    import pandas as pd
    started = []
    monkeypatch.setattr(L, 'warm', lambda: started.append(1))
    monkeypatch.setattr(L, '_THREAD_ROWS', 0)
    rng = np.random.default_rng(0)
    cats = pd.DataFrame({'a': pd.Categorical(rng.choice(list('xyz'), 300)), 'b': pd.Categorical(rng.choice(list('uv'), 300)),
                         'c': rng.normal(size=300)})
    _fit(2, cats)
    assert not started and L._numbers(cats) == 1 and L._numbers(np.zeros((3, 4))) == 4


def test_a_forked_child_forgets_the_parents_worker():
    "A child forked from a process with a worker pool holds none of its own (the parent's worker is not its)."
    import os
    import radbook.workers as W
    W.worker()  # the parent's pool
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, and leave at once
        os.write(write, b'1' if W._pool is None and not W._pool_lock.locked() else b'0')
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b'1' and W._pool is not None


def test_a_fit_on_the_worker_process_runs_on_one_core():
    "The worker's own fits (the judge's folds, say) start no worker there: both cores are busy already."
    from radbook.workers import submit, result, replay
    assert L.fit_threads(RAD(n_jobs=2)) == 2
    assert replay(result(submit(L.fit_threads, RAD(n_jobs=2)))) == 1


@pytest.mark.parametrize('n', [200, 700])  # three folds fitted; from 500 rows two folds, one fitted
def test_the_judge_shares_its_folds_while_the_em_fits_here(monkeypatch, n):
    """The cross-fitted judge hands the worker RAD's folds while this process fits RAD by its EM on one core (nothing of
    that fit goes to the worker), then adds the EM's folds: the same fit, bit for bit, as on one process."""
    import time
    import radbook.stack as st
    import radbook.workers as W
    L.warm().result()
    X = _curve(n, seed=2)
    one = RAD(random_state=0, n_jobs=1).fit(X)
    sent, em_at, inner, by_em = [], [], W._submit_in, st.fit_by_em
    def counted(state, f, *args):  # each call the worker gets: its name, when it was sent, when it came back
        item = [args[0].__name__ if f.__name__ == '_call' else f.__name__, time.monotonic(), None]
        sent.append(item)
        future = inner(state, f, *args)
        future.add_done_callback(lambda _: item.__setitem__(2, time.monotonic()))
        return future
    def timed_em(*args, **kwargs):
        start = time.monotonic()
        try: return by_em(*args, **kwargs)
        finally: em_at.append((start, time.monotonic()))
    monkeypatch.setattr(W, '_submit_in', counted)
    monkeypatch.setattr(st, 'fit_by_em', timed_em)
    two = RAD(random_state=0).fit(X)
    assert one.kernel_judge_ == two.kernel_judge_ == 'cross-fitted' and 'em_fit' in two.local_scores_  # EM folds judged
    (a, b), = em_at
    assert any(name == '_fold_fit' and t < b and (u is None or u > a) for name, t, u in sent)  # a fold there meanwhile
    assert not [name for name, t, _ in sent if a <= t <= b and name != '_fold_fit']  # nothing of the EM's fit there
    np.testing.assert_array_equal(one.score_samples(X), two.score_samples(X))


def test_one_core_fits_here_alone():
    # inside `one_core` a fit takes one core and shares nothing, whatever its n_jobs; outside, as before
    import radbook.workers as W
    from concurrent.futures import Future
    ready = Future()
    assert L.fit_threads(RAD(n_jobs=2)) == 2
    with W.sharing(ready):
        with L.one_core():
            assert L.fit_threads(RAD(n_jobs=2)) == 1 and W.shared_ready() is None
        assert L.fit_threads(RAD(n_jobs=2)) == 2 and W.shared_ready() is ready

"""The Gaussian and kernel frames' first calls made on the worker process while the one frame solves (notebook
`03n_ahead`): taken where they are the same calls, and the same fit, bit for bit, as on one process."""
import numpy as np
import pytest

import radbook.ahead as A
import radbook.rad as R
from radbook.rad import RAD
from radbook.workers import warm

pytestmark = pytest.mark.worker  # these tests patch radbook and use its worker process on purpose


class _Patient(A.Ahead):
    """An `Ahead` that waits for the worker's calls before it looks for one to take: none is left in the executor's
    queue to be made here instead (which a busy machine could otherwise make of any of them), so what is taken is
    decided by the arguments alone."""
    def __call__(self, f, *args):
        for _, _, future in self.started: future.exception()  # done (or failed)
        return super().__call__(f, *args)


def _fits(monkeypatch, X, sample_weight=None, **params):
    "The fit of `X` on two processes (the worker started first; a `_Patient`) and on one; the `Ahead` the first made."
    seen, made = [], R.ahead_for
    def patient(est, X):
        out = made(est, X)
        seen.append(None if out is None else _Patient(out.ready))
        return seen[-1]
    monkeypatch.setattr(R, 'ahead_for', patient)
    warm().result()
    two = RAD(random_state=0, n_jobs=2, **params).fit(X, sample_weight=sample_weight)
    one = RAD(random_state=0, n_jobs=1, **params).fit(X, sample_weight=sample_weight)
    assert seen[1] is None  # one core: nothing ahead
    return two, one, seen[0]


def _starts(monkeypatch) -> list:
    "The names of the calls `Ahead.start` is asked to send, from now on."
    sent, start = [], A.Ahead.start
    monkeypatch.setattr(A.Ahead, 'start', lambda self, f, *args: sent.append(f.__name__) or start(self, f, *args))
    return sent


def _penguins():
    return pytest.importorskip('palmerpenguins').load_penguins().iloc[:240]


def test_a_table_with_categories_and_holes_takes_both_calls(monkeypatch):
    X = _penguins()  # three categories, a year, four measurements with holes
    two, one, made = _fits(monkeypatch, X)
    assert made.taken == ['held_search', 'kernel_frames']
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_weighted_rows_take_both_calls(monkeypatch):
    X = _penguins()
    w = np.random.default_rng(0).integers(0, 4, len(X)).astype(float)  # frequency weights, some rows left out
    two, one, made = _fits(monkeypatch, X, sample_weight=w)
    assert made.taken == ['held_search', 'kernel_frames']
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_too_many_rows_for_kernel_frames_send_the_search_alone(monkeypatch):
    import radbook.kernel as K
    monkeypatch.setattr(K, '_KERNEL_ROWS', 50)  # the penguins' training rows are more: no kernel frames, here or there
    sent = _starts(monkeypatch)
    X = _penguins()
    two, one, made = _fits(monkeypatch, X)
    assert sent == ['held_search'] and made.taken == ['held_search'] and two.kernel_judge_ is None
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_other_rows_are_made_here(monkeypatch):
    """Calls sent for other arguments than the steps' (here every row moved by one before it was sent) are never
    taken: each step makes its own, and the fit is the one process's."""
    inner = A._frames_calls
    monkeypatch.setattr(A, '_frames_calls', lambda *args: [(f, (a[0] + 1.0,) + a[1:]) for f, a in inner(*args)])
    sent = _starts(monkeypatch)
    X = _penguins()
    two, one, made = _fits(monkeypatch, X)
    assert sent == ['held_search', 'kernel_frames'] and made.taken == []
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_a_table_of_discrete_columns_alone_starts_nothing(monkeypatch):
    sent = _starts(monkeypatch)
    X = np.random.default_rng(0).integers(0, 4, (300, 4)).astype(float)  # every column discrete: no frames
    two, one, made = _fits(monkeypatch, X)
    assert made.begun and sent == []
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_calls_that_cannot_be_read_ahead_leave_the_fit_unchanged(monkeypatch):
    "Where reading the calls ahead raises, nothing starts and the fit is as before (no error of its own)."
    def refused(*args): raise RuntimeError("cannot read this plan ahead")
    monkeypatch.setattr(A, '_frames_calls', refused)
    sent = _starts(monkeypatch)
    X = _penguins()
    two, one, made = _fits(monkeypatch, X)
    assert made.begun and sent == [] and made.taken == []
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_a_fit_by_the_dictionary_em_makes_no_ahead():
    "solver='em' has no plan, hence nothing to start ahead; and one core none either."
    X = np.random.default_rng(0).normal(size=(200, 3))
    assert A.ahead_for(RAD(solver='em', n_jobs=2), X) is None
    assert A.ahead_for(RAD(n_jobs=1), X) is None
    assert isinstance(A.ahead_for(RAD(n_jobs=2), X), A.Ahead)

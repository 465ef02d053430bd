"""The Gaussian and kernel frames' first calls made on the worker process while the one frame solves (notebook
`03n_ahead`): taken where they are the same calls, and the same fit, bit for bit, as on one process."""
import numpy as np
import pytest

import radbook.rad as R
from radbook.rad import RAD
from radbook.workers import warm

pytestmark = pytest.mark.worker  # these tests patch radbook and use its worker process on purpose


def _fits(monkeypatch, X, **params):
    "The fit of `X` on two processes (the worker started first) and on one; the `Ahead` the first made."
    seen, made = [], R.ahead_for
    monkeypatch.setattr(R, 'ahead_for', lambda est, X: seen.append(made(est, X)) or seen[-1])
    warm().result()
    two = RAD(random_state=0, n_jobs=2, **params).fit(X)
    one = RAD(random_state=0, n_jobs=1, **params).fit(X)
    assert seen[1] is None  # one core: nothing ahead
    return two, one, seen[0]


def _penguins():
    return pytest.importorskip('palmerpenguins').load_penguins().iloc[:240]


def test_a_table_with_categories_and_holes_takes_both_calls(monkeypatch):
    X = _penguins()  # three categories, a year, four measurements with holes
    two, one, made = _fits(monkeypatch, X)
    assert made.taken == ['held_search', 'kernel_frames'] and made.started == []
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_weighted_rows_take_both_calls(monkeypatch):
    X = _penguins()
    w = np.random.default_rng(0).integers(0, 4, len(X)).astype(float)  # frequency weights, some rows left out
    seen, made = [], R.ahead_for
    monkeypatch.setattr(R, 'ahead_for', lambda est, X: seen.append(made(est, X)) or seen[-1])
    warm().result()
    two = RAD(random_state=0, n_jobs=2).fit(X, sample_weight=w)
    one = RAD(random_state=0, n_jobs=1).fit(X, sample_weight=w)
    assert seen[0].taken == ['held_search', 'kernel_frames']
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_other_arguments_are_made_here(monkeypatch):
    """A call made ahead for arguments other than the step's (here: the plan's dictionaries changed after the worker
    was sent them) is never taken: the step makes its own, and the fit is the one process's."""
    import radbook.ahead as A
    inner = A._frames_calls
    def shifted(*args):
        return [(f, (a[0] + 1.0,) + a[1:]) for f, a in inner(*args)]  # every row moved: another call
    monkeypatch.setattr(A, '_frames_calls', shifted)
    X = _penguins()
    two, one, made = _fits(monkeypatch, X)
    assert made.taken == [] and made.started == []
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_a_table_of_discrete_columns_alone_starts_nothing(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, (300, 4)).astype(float)  # every column discrete: no smooth column, no frames
    two, one, made = _fits(monkeypatch, X)
    assert made.taken == [] and made.begun
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))


def test_a_plan_the_calls_cannot_read_fails_nothing(monkeypatch):
    "Where the calls cannot be read ahead (here: every reading raises), nothing starts and the fit is as before."
    import radbook.ahead as A
    def refused(*args): raise RuntimeError("cannot read this plan ahead")
    monkeypatch.setattr(A, '_frames_calls', refused)
    X = _penguins()
    two, one, made = _fits(monkeypatch, X)
    assert made.taken == [] and made.begun
    np.testing.assert_array_equal(two.score_samples(X), one.score_samples(X))

"""Shared test set-up: a test that patches radbook's internals fits on one process."""
import pytest


@pytest.fixture(autouse=True)
def _one_process_where_patched(request):
    """A test that monkeypatches (radbook's internals, say) changes them in this process only. A fit shares its twin,
    its parts and its judge's folds with a worker process (notebook `03e2_workers`), which would run the originals: so
    a test that uses `monkeypatch` fits on one process, its worker refused (every caller then fits here), unless it is
    marked `worker`. A patch made another way (direct assignment, `unittest.mock`) is not seen: fit with n_jobs=1."""
    if 'monkeypatch' not in request.fixturenames or request.node.get_closest_marker('worker') is not None:
        yield
        return
    import radbook.workers as workers
    real = workers.worker
    def refused(): raise RuntimeError("no worker process in a test that patches radbook (tests/conftest.py)")
    workers.worker = refused
    try: yield
    finally: workers.worker = real

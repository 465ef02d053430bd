"""Fits from chunks, memmaps, streams and Dask arrays are the fit from the rows in memory (issue 12)."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from radbook.jupad import JUPAD
from radbook.datapass import NpyChunks, data_pass, split_counts
from radbook.dictionaries import paper_family
from radbook.rad import RAD
from radbook.radon import projection_counts
from radbook.tables import standardize

QUICK = dict(n_init=2, max_iter=200, random_state=0)


def table(K=15_000, seed=1):
    "The mixed family (discrete and continuous columns) with a column of small integers: K > 10,000 rows, so the summary samples."
    X, _ = paper_family('mixed', random_state=0).sample(K, random_state=seed)
    return np.column_stack([X, np.random.default_rng(seed).poisson(3, K).clip(max=9)])


def same_fit(a, b):
    assert np.array_equal(a.weights_, b.weights_)
    assert all(np.array_equal(x, y) for x, y in zip(a.coefs_, b.coefs_))
    assert np.array_equal(a.bin_lo_, b.bin_lo_) and np.array_equal(a.center_, b.center_)


@pytest.fixture(scope='module')
def X():
    return table()


@pytest.fixture(scope='module')
def in_memory(X):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        return RAD(**QUICK).fit(X)


def fit(source, est=None):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        return (est or RAD(**QUICK)).fit(source)


def test_chunks_of_any_size_give_the_in_memory_fit(X, in_memory):
    same_fit(in_memory, fit([X[:4_999], X[4_999:5_000], X[5_000:]]))
    same_fit(in_memory, fit([X[i:i + 3_000] for i in range(0, len(X), 3_000)]))


def test_a_memmap_and_a_file_read_in_chunks_give_the_in_memory_fit(X, in_memory, tmp_path):
    np.save(tmp_path / 'X.npy', X)
    same_fit(in_memory, fit(np.load(tmp_path / 'X.npy', mmap_mode='r')))
    chunks = NpyChunks(tmp_path / 'X.npy', chunk_rows=4_096)
    assert sum(len(c) for c in chunks) == len(X)  # it can be read again: its __iter__ opens the file afresh
    same_fit(in_memory, fit(chunks))


def test_counts_of_chunks_equal_counts_of_the_table_for_the_same_bins(X, in_memory):
    "The statistic itself: for the fitted bins, the counts of any chunking equal the counts of the whole, exactly."
    Z = standardize(X, in_memory.center_, in_memory.scale_)
    counter = lambda rows: projection_counts(rows, in_memory.pairs_, in_memory.directions_, in_memory.bin_lo_,
                                             in_memory.bin_width_, in_memory.n_bins_)
    whole = split_counts(Z, 0, counter, seed=5, validation_fraction=0.2)
    chunked = data_pass([Z[:1], Z[1:9_000], Z[9_000:]], lambda c, s: split_counts(c, s, counter, 5, 0.2))
    assert np.array_equal(whole.fit, chunked.fit) and np.array_equal(whole.val, chunked.val)
    assert np.array_equal(whole.total, counter(Z)) and whole.n_val == chunked.n_val > 0


def test_jupad_from_chunks_is_jupad_in_memory(X):
    kw = dict(dictionaries=paper_family('mixed', random_state=0).dictionaries, n_bins=20, **QUICK)
    same_fit(fit(X[:, :-1], JUPAD(**kw)), fit([X[:6_000, :-1], X[6_000:, :-1]], JUPAD(**kw)))


def test_a_dask_array_gives_the_in_memory_fit_and_scores_blockwise(X, in_memory):
    da = pytest.importorskip('dask.array')
    D = da.from_array(X, chunks=(3_500, 3))  # row blocks of uneven size, and column blocks (rechunked)
    same_fit(in_memory, fit(D))
    scores = in_memory.score_samples(D)
    assert isinstance(scores, da.Array)
    np.testing.assert_allclose(scores.compute(), in_memory.score_samples(X), rtol=1e-12)  # sums over other lengths round alike


def test_a_local_cluster_of_two_worker_processes_gives_the_in_memory_fit(X, in_memory):
    pytest.importorskip('dask.array')
    distributed = pytest.importorskip('distributed')
    import dask.array as da
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host='127.0.0.1',
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        D = da.from_array(X, chunks=(4_000, -1))
        same_fit(in_memory, fit(D))
        assert len(client.nthreads()) == 2  # asked of the scheduler (scheduler_info()'s cache can be emptied meanwhile)


def test_partial_fit_of_one_chunk_is_fit_and_later_chunks_add_counts(X, in_memory):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        same_fit(in_memory, RAD(**QUICK).partial_fit(X))
        stream = RAD(**QUICK).partial_fit(X[:6_000])
        first = stream.weights_.copy()
        stream.partial_fit(X[6_000:11_000]).partial_fit(X[11_000:])
    # the counts of the stream are those of all its rows with the bins the first chunk fixed: how the later rows are
    # cut into chunks does not matter, bit for bit
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        other = RAD(**QUICK).partial_fit(X[:6_000]).partial_fit(X[6_000:])
    assert stream.n_samples_seen_ == other.n_samples_seen_ == len(X)
    np.testing.assert_array_equal(stream.weights_, other.weights_)
    assert stream.n_bins_ == 19  # n_bins='auto' from the first chunk's 6,000 rows
    assert not np.array_equal(first, stream.weights_)  # refitted after every call
    assert np.isfinite(stream.score(X))


def test_partial_fit_refuses_a_discrete_value_the_first_chunk_did_not_have(X):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ConvergenceWarning)
        est = RAD(**QUICK).partial_fit(X[:5_000])
    late = X[5_000:6_000].copy()
    late[3, -1] = 42.0
    with pytest.raises(ValueError, match="value 42, but .* the first chunk given to partial_fit fixes the dictionaries"):
        est.partial_fit(late)
    with pytest.raises(ValueError, match='features'):
        est.partial_fit(late[:, :3])


def test_bad_chunked_input_is_refused_with_the_row_named(X):
    with pytest.raises(TypeError, match='single-use iterator'):
        RAD().fit(c for c in [X[:100], X[100:200]])
    bad = X[100:200].copy()
    bad[7, 2] = np.inf  # NaN is a missing entry; inf is refused
    with pytest.raises(ValueError, match='row 107, feature 2'):
        RAD().fit([X[:100], bad])
    with pytest.raises(ValueError, match='2 columns, but the first chunk had 6'):
        RAD().fit([X[:100], X[100:200, :2]])
    with pytest.raises(ValueError, match='at least 2 features'):
        RAD().fit([X[:100, :1], X[100:200, :1]])

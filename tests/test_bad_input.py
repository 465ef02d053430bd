"""Bad input to RAD gets a ValueError or TypeError whose message names the problem."""
import numpy as np
import pytest
from scipy import stats
from sklearn.exceptions import NotFittedError

from radbook.dictionaries import gaussian, paper_family
from radbook.rad import RAD
from radbook.solver import PaperOptions

FAST = dict(n_projections=8, n_init=1, max_iter=100, random_state=0)


@pytest.fixture(scope='module')
def data():
    return paper_family('mixed', random_state=0).sample(600, random_state=1)[0]


@pytest.mark.parametrize('bad', [np.inf, -np.inf])
def test_inf_is_refused_and_nan_is_missing(data, bad):
    X = data.copy(); X[3, 1] = bad
    with pytest.raises(ValueError, match='infinity'):
        RAD(2, **FAST).fit(X)
    X[3, 1] = np.nan  # a missing entry: fitted from the pairs that have it, scored on the rest of its row
    est = RAD(2, **FAST).fit(X)
    assert np.isfinite(est.score_samples(X[2:4])).all()


def test_one_dimensional_input(data):
    with pytest.raises(ValueError, match='Expected 2D array'):
        RAD(2, **FAST).fit(data[:, 0])


def test_fewer_than_two_features(data):
    with pytest.raises(ValueError, match='minimum of 2 is required'):
        RAD(2, **FAST).fit(data[:, :1])


def test_empty_input():
    with pytest.raises(ValueError, match='0 sample'):
        RAD(2, **FAST).fit(np.empty((0, 3)))


def test_too_few_samples_for_bins(data):
    with pytest.raises(ValueError, match='Too few samples for the histograms'):
        RAD(2, n_bins=50, **FAST).fit(data[:60])


def test_non_numeric_data():
    X = np.array([['a', 'b'], ['c', 'd'], ['e', 'f']], dtype=object)
    with pytest.raises(ValueError, match='could not convert string to float'):
        RAD(2, **FAST).fit(X)


def test_constant_feature_is_handled(data):
    X = data.copy(); X[:, 2] = 1.25
    rad = RAD(2, **FAST).fit(X)
    assert [a.value for a in rad.dictionaries_[2]] == [1.25]  # a point mass at the constant
    assert np.isfinite(rad.score_samples(X)).all()
    other = np.c_[X[:5, :2], X[:5, 2:3] + 1.0, X[:5, 3:]]  # 2.25: not the constant, and 1.25 is no integer lattice
    with pytest.warns(UserWarning, match='never seen in fit'):
        out = rad.score_samples(other)
    np.testing.assert_allclose(out, rad.marginal([0, 1, 3, 4]).logpdf(X[:5, [0, 1, 3, 4]]) - np.log(rad.n_samples_seen_ + 1.0))


def test_dictionary_list_of_wrong_length(data):
    with pytest.raises(ValueError, match='one list per feature'):
        RAD(2, dictionaries=[[gaussian(0, 1)]] * 3, **FAST).fit(data)


@pytest.mark.parametrize('atom', ['gaussian', 3.0, stats.poisson(2)])
def test_atoms_that_are_not_distributions(data, atom):
    with pytest.raises(TypeError, match='not a distribution|must be a frozen continuous'):
        RAD(2, dictionaries=[gaussian(0, 1), atom], **FAST).fit(data)


@pytest.mark.parametrize('params, name', [
    (dict(n_components=0), 'n_components'), (dict(n_projections=-3), 'n_projections'),
    (dict(n_bins=0), 'n_bins'), (dict(n_bins='many'), 'n_bins'),
    (dict(paper_options=PaperOptions(init='spa')), 'init'), (dict(paper_options=PaperOptions(radon='fast')), 'radon'),
    (dict(paper_options='paper'), 'paper_options must be a PaperOptions'), (dict(validation_fraction=0.9), 'validation_fraction'),
    (dict(tol=-1.0), 'tol'), (dict(n_init=0), 'n_init'), (dict(dictionaries='guess'), "'auto'"),
    (dict(paper_options=PaperOptions(accelerate='no')), 'accelerate'), (dict(verbose='loud'), 'verbose'), (dict(smoothing=-1.0), 'smoothing'),
])
def test_bad_hyperparameters(data, params, name):
    kwargs = {**FAST, **params}
    n_components = kwargs.pop('n_components', 2)
    with pytest.raises((ValueError, TypeError), match=name):
        RAD(n_components, **kwargs).fit(data)


def test_score_before_fit(data):
    with pytest.raises(NotFittedError, match='not fitted'):
        RAD(2).score_samples(data)
    assert issubclass(NotFittedError, ValueError)


def test_wrong_feature_count_at_score_time(data):
    rad = RAD(2, **FAST).fit(data)
    with pytest.raises(ValueError, match='features'):
        rad.score_samples(data[:, :3])


def test_paper_init_with_too_many_components(data):
    truth = paper_family('mixed', random_state=0)
    with pytest.raises(ValueError, match="init='paper'"):
        RAD(40, dictionaries=truth.dictionaries, paper_options=PaperOptions.paper(accelerate=True), **FAST).fit(data)


def test_iteration_cap_warns_and_keeps_the_last_iterate(data):
    from sklearn.exceptions import ConvergenceWarning
    with pytest.warns(ConvergenceWarning, match='max_iter=4'):
        rad = RAD(2, n_projections=8, n_init=1, max_iter=4, random_state=0).fit(data)
    assert rad.converged_ is False and rad.n_iter_ == 4 + 5  # the last of 4 iterations, then at least 5 of refit on all data


def test_the_old_solver_keywords_still_work_with_a_warning(data):
    # init, accelerate, rho, n_alt, radon, n_mc moved to paper_options: the old keywords give the same fit, and warn
    # (three columns, in one frame: the paper's start solves every pair slowly, and the later steps would fit it many
    # times over, 33 s on a slow machine, adding nothing here)
    quick, few = dict(FAST, local=False), data[:, :3]
    new = RAD(2, paper_options=PaperOptions.paper(rho=0.5), **quick).fit(few)
    with pytest.warns(FutureWarning, match=r"paper_options=PaperOptions\(init='paper', accelerate=False, rho=0.5\)"):
        old = RAD(2, init='paper', accelerate=False, rho=0.5, **quick).fit(few)
    np.testing.assert_array_equal(old.weights_, new.weights_)

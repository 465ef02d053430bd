"""RAD(solver='em'): the dictionary EM's mixture as the density, fitted without the rows RAD holds out."""
import copy

import numpy as np
import pandas as pd
import radbook.steps as steps
import pytest
from sklearn.utils import check_random_state

import radbook.local as local
from radbook.datapass import held_out_rows
from radbook.dictionaries import DictionaryCPD, gaussian, paper_family
from radbook.rad import RAD
from radbook.solver import PaperOptions


@pytest.fixture(scope='module')
def family():
    "Rows of one of the paper's Gaussian truths (rank 25), and fresh rows of it."
    truth = paper_family('gaussian', random_state=0)
    X, _ = truth.sample(3000, random_state=1)
    X_new, _ = truth.sample(5000, random_state=2)
    return truth, X, X_new


def _held(n_rows, random_state, validation_fraction=0.2):
    "The rows a RAD seeded with the int `random_state` holds out (its first draw seeds the rows' split)."
    seed = int(check_random_state(copy.deepcopy(random_state)).randint(2**31 - 1))
    return held_out_rows(0, n_rows, seed, validation_fraction)


def test_em_fit_is_a_density_near_the_truth(family):
    truth, X, X_new = family
    est = RAD('auto', n_components_grid=(2, 4, 8), solver='em', shape=None, local=False, random_state=0).fit(X)
    assert isinstance(est.density_, DictionaryCPD)
    assert est.n_components_ == max(est.rank_scores_, key=est.rank_scores_.get)
    assert sorted(est.rank_scores_) == [2, 4, 8] and est.n_components_ >= 4
    assert not hasattr(est, 'pairs_') and not hasattr(est, 'directions_')
    gap = truth.logpdf(X_new).mean() - est.score(X_new)
    assert 0 <= gap < 0.15, gap
    radon = RAD(solver='radon', shape=None, local=False, n_init=2, random_state=0).fit(X)
    assert abs(radon.score(X_new) - est.score(X_new)) < 0.1  # the same model class, fitted two ways
    assert est.sample(5, random_state=0)[0].shape == (5, X.shape[1])


def test_em_trains_without_the_held_out_rows(family):
    _, X, _ = family
    held = _held(len(X), 0)
    moved = X.copy()
    moved[held] = 1.3 * moved[held][::-1]  # other held-out rows: they choose where the EM stops, never where it goes
    fit = lambda Z: RAD(4, solver='em', shape=None, local=False, coef_floor=0.0, random_state=0).fit(Z)
    a, b = fit(X), fit(moved)
    assert a.n_iter_ != b.n_iter_  # they stopped at different iterates
    np.testing.assert_array_equal(a.scale_, b.scale_)  # units from the training rows too
    curve = dict(a.validation_curve_)  # the held-out mean log-likelihood of every iterate, in the table's units
    assert abs(curve[a.n_iter_] - a.score(X[held])) < 1e-6  # the E-step's float32 products: 1e-8 apart
    assert abs(curve[b.n_iter_] - b.score(X[held])) < 1e-6  # b's iterate, scored on a's rows: a's curve there
    turned = lambda Z: RAD(4, solver='em', shape='whiten', local=False, random_state=0).fit(Z)
    ta, tb = turned(X), turned(moved)  # the map, too, is fitted on the training rows alone
    np.testing.assert_array_equal(ta.scale_, tb.scale_)
    np.testing.assert_array_equal(ta.shape_.transform(X[:5]), tb.shape_.transform(X[:5]))
    trained = X.copy()
    trained[np.flatnonzero(~held)[:50]] += 0.3  # the other rows are what it fits: moving some moves the fit
    assert not np.array_equal(fit(trained).weights_, a.weights_)


def test_em_rank_scores_are_held_out_scores_in_the_tables_units(family):
    _, X, _ = family
    held = _held(len(X), 0)
    est = RAD('auto', n_components_grid=(2, 4), solver='em', local=False, shape='columns', coef_floor=0.0,
              random_state=0).fit(X)
    assert est.shape_ is not None  # the Yeo-Johnson map's Jacobian is in the scores too
    assert abs(est.rank_scores_[est.n_components_] - est.score(X[held])) < 1e-6


def test_refit_with_em_drops_the_projections(family):
    _, X, _ = family
    est = RAD(4, n_init=2, shape=None, local=False, random_state=0).fit(X[:1000])
    assert hasattr(est, 'pairs_')
    est.set_params(solver='em').fit(X[:1000])
    assert not hasattr(est, 'pairs_') and not hasattr(est, 'bin_lo_')
    est = RAD(4, n_init=2, random_state=0).fit(X[:1000])  # local='auto': the attributes come from its one frame
    est.set_params(solver='em').fit(X[:1000])
    assert not hasattr(est, 'pairs_') and not hasattr(est, 'directions_')


def test_local_parts_of_many_rows_are_em_fits(monkeypatch):
    rng = np.random.default_rng(1)
    X = np.vstack([rng.multivariate_normal([-3, 0], [[1, .9], [.9, 1]], 500),
                   rng.multivariate_normal([3, 0], [[1, -.9], [-.9, 1]], 500)])
    solvers = {}
    for rows in (300, 10**6):  # parts of about 400 fitted rows: at least 300, fewer than a million
        monkeypatch.setattr(local, '_EM_PART_ROWS', rows)
        est = RAD(n_init=2, local=True, random_state=0).fit(X)
        assert est.local_ and len(est.parts_) == 2 and est.global_.solver_ == 'radon'
        solvers[rows] = [p.solver_ for p in est.parts_]
        assert all(hasattr(p, 'pairs_') == (p.solver_ == 'radon') for p in est.parts_)
    assert solvers == {300: ['em', 'em'], 10**6: ['radon', 'radon']}
    monkeypatch.setattr(steps, '_MANY_ROWS', 1_000)  # a table of that many rows: every part by the EM, whatever its size
    est = RAD(n_init=2, local=True, random_state=0).fit(X)
    assert [p.solver_ for p in est.parts_] == ['em', 'em']
    monkeypatch.setattr(local, '_EM_PART_ROWS', 300)  # settings the EM refuses keep the Radon solve: still two parts
    est = RAD(n_init=2, local=True, smoothing=0.05, random_state=0).fit(X)
    assert est.local_ and [p.solver_ for p in est.parts_] == ['radon', 'radon']


@pytest.mark.parametrize('params, message', [
    (dict(solver='lbfgs'), "solver must be 'auto', 'radon' or 'em'"),
    (dict(solver='em', smoothing=0.1), 'smoothing=0.1'),
    (dict(solver='em', smoothing='auto'), "smoothing='auto'"),
    (dict(solver='em', paper_options=PaperOptions.paper()), 'paper_options'),
    (dict(solver='em', dictionaries='marginal'), "dictionaries='marginal'"),
    (dict(solver='em', dictionaries=[gaussian(0, 1), gaussian(1, 1)]), 'dictionaries=given atoms'),
])
def test_em_refuses_what_it_cannot_do(family, params, message):
    _, X, _ = family
    with pytest.raises(ValueError, match=message.replace('(', r'\(').replace(')', r'\)')):
        RAD(4, local=False, shape=None, **params).fit(X[:500])


def test_em_partial_fit_refits_on_every_row_so_far(family):
    _, X, X_new = family
    est = lambda: RAD(4, solver='em', local=False, shape=None, random_state=0)
    one = est().partial_fit(X)
    np.testing.assert_array_equal(one.weights_, est().fit(X).weights_)  # one chunk: the fit
    two = est().partial_fit(X[:1000]).partial_fit(X[1000:])
    assert two.n_samples_seen_ == len(X)
    np.testing.assert_array_equal(two.weights_, one.weights_)  # the summaries merge into the one of every row: the fit
    with pytest.raises(ValueError, match="a stream keeps its solver"):
        est().partial_fit(X[:1000]).set_params(solver='radon').partial_fit(X[1000:])
    with pytest.raises(ValueError, match="a stream keeps its solver"):
        RAD(4, n_init=1, max_iter=30, local=False, shape=None).partial_fit(X[:1000]).set_params(solver='em').partial_fit(X[1000:])


def test_em_stream_refuses_a_category_its_first_chunk_lacked():
    import pandas as pd
    rng = np.random.default_rng(0)
    frame = lambda n, cats: pd.DataFrame({'s': pd.Categorical(rng.choice(cats, n)), 'x': rng.normal(size=n),
                                          'y': rng.normal(size=n)})
    est = RAD(2, solver='em', shape=None, local=False, random_state=0).partial_fit(frame(500, ['a', 'b']))
    with pytest.raises(ValueError, match=r"Column 's' holds a category outside the first chunk's \['a', 'b'\]"):
        est.partial_fit(frame(500, ['c']))


def test_em_reads_tables_as_they_come():
    "A DataFrame with categories, a boolean, an integer column and missing entries, weighted: as the Radon fit reads it."
    import pandas as pd
    rng = np.random.default_rng(0)
    n = 1500
    species = rng.choice(['Adelie', 'Gentoo', 'Chinstrap'], n)
    mass = np.where(species == 'Gentoo', 5000.0, 3700.0) + rng.normal(0, 300, n)
    mass[rng.random(n) < 0.05] = np.nan
    frame = pd.DataFrame({'species': pd.Categorical(species), 'mass_g': mass, 'male': rng.random(n) < 0.5,
                          'year': rng.choice([2007, 2008, 2009], n)})
    est = RAD('auto', n_components_grid=(2, 4), solver='em', local=False, random_state=0).fit(frame)
    assert np.isfinite(est.score_samples(frame)).all()  # rows with a missing mass are scored on what they hold
    sample, _ = est.sample(500, random_state=1)
    assert isinstance(sample, pd.DataFrame) and sample.dtypes.tolist() == frame.dtypes.tolist()
    gentoo = sample['species'] == 'Gentoo'  # the dependence between category and mass survives the fit
    assert sample.loc[gentoo, 'mass_g'].mean() - sample.loc[~gentoo, 'mass_g'].mean() > 800
    conditional = est.conditional({'species': 'Gentoo'})  # exact: no rotation with shape='auto' here
    assert abs(conditional.sample(2000, random_state=2)[0]['mass_g'].mean() - 5000) < 100
    twice = RAD(4, solver='em', local=False, shape=None, random_state=0).fit(frame, sample_weight=np.full(n, 2.0))
    assert twice.n_samples_seen_ == n and np.isfinite(twice.score(frame))


def _two_many_category_columns(n=600, k=20, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, k, n)
    return pd.DataFrame({'x': rng.normal(size=n) + (a % 2), 'y': rng.normal(size=n),
                         'a': pd.Categorical(a), 'b': pd.Categorical((a + rng.integers(0, 2, n)) % k)})


def test_auto_solver_takes_the_em_where_two_category_columns_hold_many_pairs(monkeypatch):
    X = _two_many_category_columns()
    assert RAD(local=False, random_state=0).fit(X).solver_ == 'radon'  # 20 x 20 categories: the Radon solve
    monkeypatch.setattr(steps, '_PAIR_VALUES', 100)  # now past the bound: the dictionary EM
    est = RAD(local=False, random_state=0).fit(X)
    assert est.solver == 'auto' and est.solver_ == 'em' and not hasattr(est, 'pairs_')
    assert np.isfinite(est.score_samples(X)).all()
    assert RAD(local=False, solver='radon', n_init=1, random_state=0).fit(X).solver_ == 'radon'  # as set
    assert RAD(local=False, smoothing=0.05, n_init=1, random_state=0).fit(X).solver_ == 'radon'  # the EM refuses smoothing
    import radbook.stack as st
    judged, inner = [], st.cross_fitted_rows
    monkeypatch.setattr(st, 'cross_fitted_rows', lambda est, *a, **k: judged.append(est.solver) or inner(est, *a, **k))
    rad = RAD(random_state=0).fit(X)  # the whole default pipeline: an EM fit, so no EM twin and no EM alternative
    assert rad.solver_ == 'em' and rad.global_.solver_ == 'em' and rad.em_frame_ is None and rad.em_fit_ is None
    assert rad.kernel_judge_ == 'cross-fitted' and judged == ['em']  # the judge's folds fit by the EM too, as set
    with pytest.raises(ValueError, match='sample_weight'):  # a first chunk's weights are checked before they are read
        RAD(local=False, random_state=0).partial_fit(X[:400], sample_weight=np.ones(3))
    stream = RAD(local=False, random_state=0).partial_fit(X[:400])  # a stream: its first chunk decides, and it keeps that
    assert stream.solver_ == 'em' and stream.partial_fit(X[400:]).solver_ == 'em'
    assert RAD(local=False, random_state=0).partial_fit(X.to_numpy(float)).solver_ == 'radon'  # an array: no categories


def test_auto_takes_the_em_where_the_planned_operators_outgrow_the_atom_budget(monkeypatch, tmp_path):
    X = _two_many_category_columns()  # 20 x 20 categories: within the pairs' bound and the Gram bound
    assert RAD(local=False, random_state=0).fit(X).solver_ == 'radon'
    monkeypatch.setattr(steps, '_GRAM_ENTRIES', 1e4)  # the planned Gram entries now past the bound ...
    monkeypatch.setattr(steps, '_MANY_ROWS', 1_000)   # ... but on too few rows: still the Radon solve
    assert RAD(local=False, random_state=0).fit(X).solver_ == 'radon'
    monkeypatch.setattr(steps, '_MANY_ROWS', 100)
    est = RAD(local=False, random_state=0).fit(X)
    assert est.solver == 'auto' and est.solver_ == 'em' and not hasattr(est, 'pairs_') and not hasattr(est, 'n_bins_')
    assert np.isfinite(est.score_samples(X)).all()
    same = RAD(local=False, solver='em', random_state=0).fit(X)  # the rule decides before anything is fitted
    np.testing.assert_array_equal(est.score_samples(X), same.score_samples(X))
    assert RAD(local=False, random_state=0).fit(X.to_numpy(float)).solver_ == 'em'  # an array too: its columns' values
    assert RAD(local=False, solver='radon', n_init=1, random_state=0).fit(X).solver_ == 'radon'  # as set
    assert RAD(local=False, smoothing=0.05, n_init=1, random_state=0).fit(X).solver_ == 'radon'  # the EM refuses smoothing
    assert RAD(local=False, random_state=0).partial_fit(X.to_numpy(float)).solver_ == 'radon'  # an array's stream keeps the Radon solve
    assert RAD(local=False, random_state=0).partial_fit(X).solver_ == 'em'  # a DataFrame's first chunk is read as a fit's rows
    mm = np.memmap(tmp_path / 'rows.dat', dtype=float, mode='w+', shape=X.shape); mm[:] = X.to_numpy(float); mm.flush()
    assert RAD(local=False, n_init=1, random_state=0).fit(np.memmap(tmp_path / 'rows.dat', dtype=float, mode='r',
                                                                    shape=X.shape)).solver_ == 'radon'  # read in chunks


def test_an_em_one_frame_on_many_rows_doubles_its_rank_while_held_out_rows_gain(monkeypatch):
    X = _two_many_category_columns(2000)  # b follows a: more than 10 components pay
    plain = RAD(solver='em', random_state=0).fit(X)  # 2,000 rows: fewer than _MANY_ROWS, the rank asked for
    assert plain.global_.n_components_ == 10
    monkeypatch.setattr(steps, '_MANY_ROWS', 1_000)
    grown = RAD(solver='em', random_state=0).fit(X)
    assert grown.global_.n_components_ in (20, 40, 80) and grown.n_components_ == grown.global_.n_components_
    assert grown.local_scores_['one'] > plain.local_scores_['one']  # the one frame's score is the grown fit's
    assert not {'_em_start', '_keeps_start'} & set(vars(grown.global_))  # no summary of rows kept
    monkeypatch.setattr(steps, '_GRAM_ENTRIES', 1e4)  # solver='auto' taking the EM by the Gram rule: grown the same way
    auto = RAD(random_state=0).fit(X)
    assert auto.solver_ == 'em' and auto.global_.n_components_ == grown.global_.n_components_
    searched = RAD(n_components='auto', solver='em', local=False, random_state=0).fit(X).n_components_
    assert RAD(n_components='auto', solver='em', random_state=0).fit(X).global_.n_components_ == searched  # no doubling

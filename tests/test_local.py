"""Local frames: the parts are abandoned early only where their bound on the held-out rows trails the one frame."""
import numpy as np
import pytest

import radbook.local as local
from radbook.local import fit_local, with_values, _held_rows
from radbook.rad import RAD


class CountingRAD(RAD):
    "RAD that counts its fits (fit_local clones it, so every clone counts into the class), and the parts' among them."
    fits = parts = 0

    def fit(self, X, y=None, sample_weight=None):
        type(self).fits += 1
        type(self).parts += self.n_components == local.PART_PARAMS['n_components']  # the parts' rank search
        return super().fit(X, y, sample_weight=sample_weight)


@pytest.fixture(scope='module')
def clouds():
    "Two tilted clouds, one leaning each way, and a third tilted cloud: parts in their own frames win."
    rng = np.random.default_rng(1)
    A = rng.multivariate_normal([-3, 0], [[1, .9], [.9, 1]], 500)
    B = rng.multivariate_normal([3, 0], [[1, -.9], [-.9, 1]], 500)
    C = rng.multivariate_normal([0, 4], [[1, .6], [.6, 1]], 300)
    return np.vstack([A, B, C])


def _fit(X, abandon, monkeypatch):
    monkeypatch.setattr(local, '_ABANDON', abandon)
    CountingRAD.fits = CountingRAD.parts = 0
    out = fit_local(CountingRAD(n_init=2, local=False, random_state=0, n_jobs=1), X)  # one process: every fit counted
    assert CountingRAD.fits == 2 + CountingRAD.parts  # the one frame and its EM twin once each (a doubling grows, unfitted)
    return out, CountingRAD.parts


def test_parts_that_win_are_never_abandoned(clouds, monkeypatch):
    kept, fits = _fit(clouds, local._ABANDON, monkeypatch)
    assert kept.parts and 'local' in kept.scores and 'bound_gain' not in kept.scores
    assert fits == kept.partition.n_parts  # every part
    never, _ = _fit(clouds, np.inf, monkeypatch)  # no abandoning at all: the same parts, the same scores
    assert never.scores == kept.scores
    np.testing.assert_array_equal(never.density.logpdf(clouds[:50]), kept.density.logpdf(clouds[:50]))


def test_the_bound_holds_on_every_held_out_row(clouds, monkeypatch):
    fit, _ = _fit(clouds, local._ABANDON, monkeypatch)
    one, mix = fit.one, fit.density
    rows = np.ones(len(clouds), bool)
    mixture = _held_rows(one, mix, clouds, rows)
    labels = fit.partition.assign(one.encode(clouds))
    for c, p in enumerate(fit.parts):  # log pi_c + log p_c(x) <= log sum_c' pi_c' p_c'(x), for rows of part c
        d = with_values(p.density_, one.dictionaries_, p.n_samples_seen_)
        mine = labels == c
        assert (np.log((1 - fit.share) * fit.weights[c]) + _held_rows(one, d, clouds, mine) <= mixture[mine] + 1e-9).all()


def test_the_one_frame_keeps_its_share(clouds, monkeypatch):
    fit, _ = _fit(clouds, local._ABANDON, monkeypatch)
    s = fit.scores
    assert 0 < fit.share < 1 and s['share'] == fit.share  # here both keep a share
    assert fit.share >= local._MIN_SHARE  # the one frame's floor (a defensive mixture)
    if fit.share > local._MIN_SHARE:  # the fitted share: at least either end on the rows that chose it
        assert s['local'] >= max(s['one'], s['parts']) - 1e-12
    else:  # the floor binds: it costs at most -log(1 - floor) nats per row against the parts alone
        assert s['parts'] + np.log1p(-local._MIN_SHARE) - 1e-12 <= s['local']
    alone = local.LocalFit(fit.one, fit.parts, fit.weights).density  # the parts alone
    frame = local.LocalFit(fit.one, [], np.ones(1), None, {}, 1.0, fit.twin, fit.twin_share).density  # with its twin, if kept
    rows = np.ones(len(clouds), bool)
    with np.errstate(divide='ignore'):
        expect = np.logaddexp(np.log(fit.share) + _held_rows(fit.one, frame, clouds, rows),
                              np.log1p(-fit.share) + _held_rows(fit.one, alone, clouds, rows))
    np.testing.assert_allclose(_held_rows(fit.one, fit.density, clouds, rows), expect, rtol=1e-10)
    np.testing.assert_allclose(fit.density.weights.sum(), 1.0)  # still a mixture: every component's weight sums to one


def test_parts_far_behind_stop_after_the_first(clouds, monkeypatch):
    # a threshold every bound passes (more than 100 nats per row *ahead*) makes the first part's rows decide
    out, fits = _fit(clouds, -100.0, monkeypatch)
    assert not out.parts and 'local' not in out.scores and out.scores['bound_gain'] > -100
    assert fits == 1  # the largest part only
    assert out.density is out.one.density_ if out.twin is None else out.density.parts[0] is out.one.density_


def test_a_stacked_fit_serves_every_request(clouds):
    "A table with a category and holes whose kept mixture holds the one frame beside the parts: every request still exact."
    import pandas as pd
    frame = pd.DataFrame(clouds, columns=['a', 'b'])
    frame['kind'] = pd.Categorical(np.where(frame['a'] > 0, 'right', 'left'))
    frame.loc[::17, 'b'] = np.nan
    rad = RAD(n_init=2, random_state=0).fit(frame)
    assert rad.local_ and 0 < rad.global_weight_ < 1
    n_one = rad.global_.density_.n_components + (0 if rad.em_frame_ is None else rad.em_frame_.density_.n_components)
    rad_share = 1 - rad.gaussian_weight_  # Gaussian frames, where kept, come last at weight gamma (notebook 03i_gaussian)
    np.testing.assert_allclose(rad.density_.weights[:n_one].sum(), rad_share * rad.global_weight_)  # the one frame's components first (its twin's after)
    if rad.gaussian_ is not None:
        np.testing.assert_allclose(rad.density_.weights[-rad.gaussian_.n_components:].sum(), rad.gaussian_weight_)
    np.testing.assert_allclose(rad.density_.weights.sum(), 1.0)
    assert np.isfinite(rad.score_samples(frame)).all()  # rows missing b included
    proba = rad.predict_proba(frame)
    assert proba.shape == (len(frame), rad.density_.n_components)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    eps = 1 / (rad.n_samples_seen_ + 1)  # the share of a category the fit never saw (notebook 03e_density): the rest is the seen ones'
    np.testing.assert_allclose(rad.marginal(['kind']).pdf(pd.DataFrame({'kind': ['left', 'right']})).sum(), 1 - eps, rtol=1e-9)
    S, labels = rad.sample(500, random_state=0)
    assert list(S.columns) == ['a', 'b', 'kind'] and S['kind'].dtype == frame['kind'].dtype
    assert labels.min() >= 0 and labels.max() < rad.density_.n_components
    right = rad.conditional({'kind': 'right'}).sample(300, random_state=0)[0]
    assert (right['a'] > 0).mean() > 0.9


def test_parts_skip_a_whitening_that_would_be_refitted(clouds, monkeypatch):
    "Holes in every continuous column but one: no part can whiten two hole-free columns, so each is fitted once, the same fit."
    holey = clouds.copy()
    holey[:500:5, 1] = np.nan  # holes in the first cloud only: the other parts' rows have none, and would whiten both columns
    out, fits = _fit_holey(holey, monkeypatch)
    assert out.partition is not None and out.partition.n_parts > 1
    assert fits == 1 + out.partition.n_parts  # the one frame and each part once: no whitening fit thrown away
    assert all(p.get_params()['shape'] == 'columns' and not len(p.shape_.group) for p in out.parts)
    monkeypatch.setattr(local, '_can_whiten', lambda holes, discrete: True)  # without the shortcut: whiten, then refit
    slow, slow_fits = _fit_holey(holey, monkeypatch)
    assert slow_fits > fits  # some part whitened the column with holes and was fitted again ...
    rows = np.ones(len(holey), bool)  # ... into the same density, bit for bit
    np.testing.assert_array_equal(_held_rows(out.one, out.density, holey, rows), _held_rows(slow.one, slow.density, holey, rows))


def _fit_holey(X, monkeypatch):
    monkeypatch.setattr(local, '_ABANDON', np.inf)  # every part fitted
    CountingRAD.fits = 0
    return fit_local(CountingRAD(n_init=2, local=False, random_state=0, n_jobs=1), X, keep=True), CountingRAD.fits


def test_a_twin_never_whitens_a_column_with_holes():
    "The twin's map comes from the training rows: a column whose only hole is in a held-out row must stay on its own axis."
    from sklearn.utils import check_random_state
    from radbook.datapass import held_out_rows
    rng = np.random.RandomState(1)
    X = rng.multivariate_normal(np.zeros(3), [[1, .9, .8], [.9, 1, .85], [.8, .85, 1]], 800)
    X[:, 0] = np.exp(X[:, 0])
    held = held_out_rows(0, len(X), int(check_random_state(0).randint(2**31 - 1)), 0.2)  # RAD(random_state=0)'s split
    row = np.flatnonzero(held)[:1]
    X[row, 2] = np.nan  # the only hole, in a held-out row
    rad = RAD(random_state=0).fit(X)  # raised a ValueError from the twin's held-out rows before the fix
    assert np.isfinite(rad.score_samples(X[row])).all()
    out = fit_local(RAD(random_state=0, local=False), X)
    assert 'em' in out.scores  # the twin was fitted and scored
    if out.twin is not None: assert 2 not in getattr(out.twin.shape_, 'group', [])


def test_a_kept_twin_that_whitens_names_itself(monkeypatch):
    "A twin kept beside a whitening one frame: a marginal over part of the group is refused, naming the twin."
    rng = np.random.default_rng(0)
    X = rng.multivariate_normal(np.zeros(3), [[1, .95, .9], [.95, 1, .9], [.9, .9, 1]], 600)
    monkeypatch.setattr(local, 'stack_weight', lambda a, b, w=None: 0.5)  # force the twin in at half the one frame
    monkeypatch.setattr(local, '_beats', lambda gain, w, margin: True)
    rad = RAD(random_state=0).fit(X)
    assert rad.em_frame_ is not None and rad.em_weight_ == 0.5 and len(rad.em_frame_.shape_.group) == 3
    with pytest.raises(ValueError, match='whitened together.*em_frame_'):
        rad.marginal([0])
    holed = X[:2].copy(); holed[:, 0] = np.nan  # a row missing part of the twin's group: refused, naming the twin too
    with pytest.raises(ValueError, match=r"2 row\(s\) miss part of a whitened group; the density of the first, observed over 1, 2 "
                                         r".*whitened together.*em_frame_"):
        rad.score_samples(holed)
    assert np.isclose(rad.marginal([0, 1, 2]).pdf(X[:5]), np.exp(rad.score_samples(X[:5]))).all()
    import pickle
    again = pickle.loads(pickle.dumps(rad))
    np.testing.assert_array_equal(again.score_samples(X[:20]), rad.score_samples(X[:20]))


def test_a_kept_twin_doubles_its_rank_only_while_it_scores_higher(monkeypatch):
    "The twin is first fitted at the estimator's rank; kept, its rank doubles while its own held-out mean rises."
    import statsmodels.api as sm
    fair = sm.datasets.fair.load_pandas().data.iloc[:3000]
    monkeypatch.setattr(local, '_TWIN_DOUBLINGS', 0)
    ten = fit_local(RAD(random_state=0, local=False), fair)
    monkeypatch.setattr(local, '_TWIN_DOUBLINGS', 2)
    more = fit_local(RAD(random_state=0, local=False), fair)
    assert ten.twin is not None and ten.twin.n_components_ == 10
    assert more.twin is not None and more.twin.n_components_ in (20, 40)  # measured: 20 (40 scored lower)
    assert more.scores['em'] > ten.scores['em'] and more.scores['frame'] > ten.scores['frame']
    assert more.scores['one'] == ten.scores['one']  # the Radon fit is the same


def test_a_radon_fit_is_judged_before_its_refit():
    "The solution before the refit: the chosen combination's components, scored as combine_scores_; an EM fit has none; a local fit keeps none."
    from sklearn.datasets import load_iris
    from radbook.datapass import held_out_rows
    from sklearn.utils import check_random_state
    X = load_iris().data
    rad = RAD(random_state=0, local=False, combine='best').fit(X)
    before = local.before_refit(rad)
    assert before is not rad.density_ and len(before.cpd.weights if hasattr(before, 'cpd') else before.weights) == rad.n_components_
    held = held_out_rows(0, len(X), int(check_random_state(0).randint(2**31 - 1)), 0.2)
    auto = RAD(random_state=0, local=False).fit(X)
    np.testing.assert_allclose(_held_rows(auto, local.before_refit(auto), X, held).mean(), auto.combine_scores_[auto.combine_], rtol=1e-9)
    em = auto.set_params(solver='em').fit(X)  # a Radon fit, then an EM fit on the same estimator: no stale solution
    assert local.before_refit(em) is em.density_
    mixed = RAD(random_state=0).fit(X)
    assert getattr(mixed, '_held_density', None) is None and getattr(mixed.global_, '_held_density', None) is None


def test_a_kept_twin_grows_from_its_own_atoms(monkeypatch):
    "A doubling learns no dictionaries again: the larger twin is one EM from the smaller one's atoms, in its units."
    import statsmodels.api as sm
    import radbook.rad as rad_module
    import radbook.steps as steps_module
    X = sm.datasets.fair.load_pandas().data.iloc[:3000]
    calls, grow, growing, learned = [], rad_module.em_grow, [False], []
    def spy(summary, fit, rank, *args, **kwargs):
        growing[0] = True
        try: calls.append((fit, grow(summary, fit, rank, *args, **kwargs)))
        finally: growing[0] = False
        return calls[-1][1]
    scan = steps_module.columns_dictionaries
    def counted(*args, **kwargs):
        learned.append(growing[0])
        return scan(*args, **kwargs)
    monkeypatch.setattr(rad_module, 'em_grow', spy)
    monkeypatch.setattr(steps_module, 'columns_dictionaries', counted)
    rad = RAD(random_state=0).fit(X)
    assert rad.em_frame_ is not None and calls  # the twin is kept here, and its rank was doubled at least once
    assert learned and not any(learned)  # 1-D mixtures were fitted, but none while growing
    for small, big in calls:
        assert big.n_components == 2 * small.n_components and big.n_rows == small.n_rows  # the same rows
        np.testing.assert_array_equal(big.center, small.center)
        np.testing.assert_array_equal(big.scale, small.scale)
        assert [len(d) for d in big.dictionaries] == [len(d) for d in small.dictionaries]  # the same atoms, moved
    if rad.em_frame_.n_components_ > 10:  # the kept twin is a grown one
        assert any(rad.em_frame_.weights_ is big.weights for _, big in calls)
    assert '_em_start' not in vars(rad.em_frame_) and '_keeps_start' not in vars(rad.em_frame_)
    out = fit_local(RAD(random_state=0, local=False), X)  # called directly: no summary of rows left behind either
    assert out.twin is not None and '_em_start' not in vars(out.twin) and '_keeps_start' not in vars(out.twin)


def test_the_twin_fits_the_start_its_radon_fit_raced_to(monkeypatch):
    "On 5,000 rows or more the dictionary EM races its starts: the twin fits the Radon fit's winner alone, without a race."
    from radbook.dictionaries import paper_family
    import radbook.rad as rad_module
    X = paper_family('gaussian', random_state=0).sample(7000, random_state=1)[0]
    starts, em = [], rad_module.em_fit
    def spy(*args, **kwargs):
        starts.append(args[7] if len(args) > 7 else kwargs.get('start'))
        return em(*args, **kwargs)
    monkeypatch.setattr(rad_module, 'em_fit', spy)
    out = fit_local(RAD(random_state=0, local=False, n_init=2, n_jobs=1), X)  # (one process: its EM fits seen here)
    asked = starts[0]  # the twin is the first EM fit
    assert asked is not None and asked == out.one._dictionary_start  # the Radon fit raced, and the twin took its winner
    assert 'em' in out.scores


def test_a_rank_search_skips_ranks_with_fewer_than_ten_rows_a_component(monkeypatch):
    "A small part (or table) searches only the ranks its rows can hold: 10 (weighted) rows a component at least."
    import radbook.rad as rad
    grids = []
    solve = rad.solve_counts
    monkeypatch.setattr(rad, 'solve_counts', lambda *a, **k: grids.append(a[7]) or solve(*a, **k))
    X = np.random.default_rng(0).normal(size=(60, 3))
    RAD('auto', local=False, shape=None, random_state=0).fit(X)
    assert grids[-1] == (2, 4)  # 60 rows: not 8 components (7.5 rows each), nor 16 or 32
    RAD('auto', local=False, shape=None, random_state=0).fit(X, sample_weight=np.full(60, 0.25))
    assert grids[-1] == (2,)  # the weights sum to 15: the smallest rank, though it has fewer
    RAD('auto', local=False, shape=None, random_state=0).fit(np.tile(X, (3, 1)))
    assert grids[-1] == (2, 4, 8, 16)  # 180 rows

"The last step of RAD's fit (notebook 03k_stack): RAD, RAD by its EM, Gaussian frames sized by BIC and kernel frames, their shares chosen out of fold."
import pickle

import numpy as np
import pytest

from radbook.rad import RAD
from models import curve_table


@pytest.fixture(scope='module')
def small():
    "40 cars' worth of rows: three continuous columns on a curve, a category and an integer count that follow them."
    return curve_table()


def test_cross_fitted_rows_score_each_row_without_it(small):
    # a row's score comes from fits to the other folds: changing one row leaves the scores of its fold-mates alone,
    # and moves the scores of the rows in the other folds (whose fits it joined)
    from radbook.stack import cross_fitted_rows
    out = cross_fitted_rows(RAD(random_state=0), small, random_state=0, em=True, em_shape=None)
    rows, k_rows, b_rows = out.rad, out.kernel, out.bic
    assert out.em is not None and np.isfinite(out.em).all()  # the EM's map the identity (shape=None): still fitted
    fold = np.random.default_rng(0).permutation(len(small)) % 3
    moved = small.copy()
    i = int(np.flatnonzero(fold == 0)[0])
    moved.iloc[i, :3] = moved.iloc[i, :3] * 3 + 5
    again = cross_fitted_rows(RAD(random_state=0), moved, random_state=0)
    assert again.em is None  # not asked for
    mates = (fold == 0) & (np.arange(len(small)) != i)
    for before, after in ((rows, again.rad), (k_rows, again.kernel), (b_rows, again.bic)):
        np.testing.assert_array_equal(after[mates], before[mates])
        assert not np.allclose(after[fold != 0], before[fold != 0]) and np.isfinite(before).all()


def test_the_cross_fitted_judge_keeps_what_the_held_out_rows_flatter_away():
    # wine, 120 rows: the 29 held-out rows chose RAD's rank, stopping and frames, and score it 3.4 nats a row above
    # fresh rows; judged on them the kernel is dropped. Judged out of fold, RAD by its EM and the kernel take most of
    # the weight (RAD by its EM more than a fifth, beside Gaussian frames sized by BIC at about a third), and the 58
    # rows left out of the fit agree
    from sklearn.datasets import load_wine
    from radbook.kernel import with_kernel
    from radbook.gaussian import with_gaussian
    from radbook.local import fit_local
    W = load_wine().data
    idx = np.random.default_rng(0).permutation(len(W))
    fitted, fresh = W[idx[:120]], W[idx[120:]]
    rad = RAD(random_state=0).fit(fitted)
    assert rad.kernel_judge_ == 'cross-fitted' and rad.em_fit_ is not None and rad.em_fit_.solver == 'em'
    assert 0.2 < rad.em_fit_weight_ < 0.8 and 0.1 < rad.kernel_weight_ < 0.5, (rad.em_fit_weight_, rad.kernel_weight_)
    assert rad.em_fit_weight_ + rad.kernel_weight_ > 0.5  # most of the weight
    np.testing.assert_allclose(rad.density_.weights.sum(), 1.0)
    before = rad.density_.parts[0]
    assert rad.score(fresh) > max(before.logpdf(fresh).mean(), rad.em_fit_.score(fresh)) + 0.3
    assert np.isfinite(rad.sample(50, random_state=0)[0]).all()
    again = pickle.loads(pickle.dumps(rad))
    np.testing.assert_array_equal(again.score_samples(fresh), rad.score_samples(fresh))
    held_only = with_kernel(with_gaussian(fit_local(RAD(random_state=0), fitted, keep='auto'), fitted), fitted)  # no with_stack
    assert held_only.kernel is None and held_only.alt is None and held_only.kernel_judge == 'held-out'


def test_gaussian_frames_sized_by_bic_join_where_the_rows_out_of_fold_want_them():
    # iris, 100 rows: the 20 held-out rows cannot tell two full Gaussians from RAD (with_gaussian drops them); the rows
    # out of fold give them more than half the weight, and the 50 fresh rows agree
    from sklearn.datasets import load_iris
    X = load_iris().data
    idx = np.random.default_rng(0).permutation(150)
    fitted, fresh = X[idx[:100]], X[idx[100:]]
    rad = RAD(random_state=0).fit(fitted)
    bic = rad.gaussian_bic_
    assert rad.gaussian_ is None and bic is not None and (bic.n_components, bic.diagonal) == (2, False)
    assert 0.4 < rad.gaussian_bic_weight_ < 0.8, rad.gaussian_bic_weight_
    k = rad.kernel_.n_components if rad.kernel_ is not None else 0
    w = rad.density_.weights  # its components between em_fit_'s and the kernel's
    np.testing.assert_allclose(w[len(w) - k - bic.n_components:len(w) - k].sum(), rad.gaussian_bic_weight_, atol=1e-12)
    np.testing.assert_allclose(w.sum(), 1.0)
    assert rad.score(fresh) > max(bic.logpdf(fresh).mean(), rad.density_.parts[0].logpdf(fresh).mean()) + 0.05
    assert rad.predict_proba(fresh).shape[1] == len(w)
    margin = rad.marginal([0])  # exact: a 1-D marginal integrates to one
    t = np.linspace(0, 12, 4001)
    np.testing.assert_allclose(np.trapezoid(np.exp(margin.score_samples(t[:, None])), t), 1.0, atol=1e-3)
    again = pickle.loads(pickle.dumps(rad))
    np.testing.assert_array_equal(again.score_samples(fresh), rad.score_samples(fresh))


def test_a_table_within_the_judges_bound_is_judged_out_of_fold():
    # 28 pairs times 800 rows: 22,400, past the 20,000 of earlier versions and within `_CROSS_WORK`
    from radbook.stack import _CROSS_WORK
    rng = np.random.default_rng(1)
    z = rng.normal(size=800)
    X = np.column_stack([z + 0.3 * rng.normal(size=800) for _ in range(4)] + [rng.laplace(size=800) for _ in range(4)])
    assert 20_000 < 28 * 800 <= _CROSS_WORK
    rad = RAD(random_state=0).fit(X)
    assert rad.kernel_judge_ == 'cross-fitted'


def test_a_wide_table_is_judged_on_held_out_rows():
    # thirty columns, 300 rows: 435 pairs times 300 rows is past the cross-fitted judge's budget (`_CROSS_WORK`)
    from radbook.stack import _CROSS_WORK
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.laplace(size=300) for _ in range(18)] + [rng.uniform(size=300) for _ in range(12)])
    assert 435 * 300 > _CROSS_WORK
    rad = RAD(random_state=0).fit(X)
    assert rad.kernel_judge_ == 'held-out' and rad.kernel_ is None and rad.em_fit_ is None and rad.gaussian_bic_ is None


def test_stack_shares_maximise_the_mixture_likelihood():
    from radbook.stack import stack_shares
    from radbook.local import stack_weight
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=300), rng.normal(size=300) - 0.3
    np.testing.assert_allclose(stack_shares(np.c_[a, b])[0], stack_weight(a, b), atol=1e-5)
    L = rng.normal(size=(400, 3)) + np.array([0.0, 0.4, -0.2])
    L[:50, 2] += 4  # rows only the third explains
    pi = stack_shares(L)
    mean = lambda p: np.log(np.exp(L) @ p).mean()
    assert np.isclose(pi.sum(), 1) and (pi > 0).all()
    for trial in rng.dirichlet(np.ones(3), 200): assert mean(pi) >= mean(trial) - 1e-9
    L[:, 1] = -np.inf  # a density that explains nothing gets no share
    assert stack_shares(L)[1] == 0.0


def test_a_marginal_that_splits_the_em_fits_whitened_columns_is_refused():
    # RAD by its EM sits beside the fit: a marginal over some of the columns it whitened together has no exact form
    rng = np.random.default_rng(1)
    t = rng.normal(size=(300, 1))
    X = np.c_[t + 0.2 * rng.normal(size=(300, 3)), rng.gamma(2, size=300)]
    rad = RAD(random_state=0, local=False, shape='columns').fit(X)
    rad.marginal([0, 3])  # per-column maps: served
    rad.em_fit_ = RAD(random_state=0, solver='em', local=False, shape='whiten').fit(X)
    assert len(rad.em_fit_.shape_.group) >= 2
    with pytest.raises(ValueError, match='em_fit_'):
        rad.marginal([int(rad.em_fit_.shape_.group[0])])


def test_rows_of_weight_zero_are_not_scored_out_of_fold(small):
    from radbook.stack import cross_fitted_rows
    w = np.ones(len(small)); w[::7] = 0.0
    out = cross_fitted_rows(RAD(random_state=0), small, w, random_state=0)
    for rows in (out.rad, out.kernel, out.bic):
        assert (rows[w == 0] == 0).all() and np.isfinite(rows[w > 0]).all() and (rows[w > 0] != 0).all()


def test_rows_of_weight_zero_leave_the_shares_alone():
    # every other row at weight 0: the judge's halves must not be made of them (no NaN shares, no warning)
    import warnings
    from sklearn.datasets import load_wine
    W = load_wine().data[np.random.default_rng(0).permutation(178)[:160]]
    w = np.tile([1.0, 0.0], 80)
    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)
        rad = RAD(random_state=0).fit(W, sample_weight=w)
    assert rad.kernel_judge_ in ('cross-fitted', 'held-out')
    np.testing.assert_allclose(rad.density_.weights.sum(), 1.0)
    assert np.isfinite(rad.score_samples(W)).all()


def test_bic_counts_each_weighted_row_once():
    # unequal weights draw the candidates' rows by weight, with repeats; BIC on those copies rewarded tight components
    # (24 on iris at seed 0); on the weighted rows it finds iris' two Gaussians whatever the seed, as without weights
    from sklearn.datasets import load_iris
    from radbook.gaussian import gaussian_by_bic
    X = load_iris().data
    w = np.r_[np.ones(75), 2 * np.ones(75)][np.random.default_rng(0).permutation(150)]
    sizes = [gaussian_by_bic(X, [0, 1, 2, 3], [None] * 4, w, random_state=seed).n_components for seed in range(3)]
    assert sizes == [2, 2, 2], sizes


def test_holes_under_a_rotation_on_small_folds_leave_the_judge_to_the_held_out_rows():
    # twelve columns moving together, 90 rows: the fit whitens them, and each fold's RAD is fitted in that map. With
    # holes, each fold would choose its own map, on five folds of its 60 rows (fewer than 15 held out): five times the
    # work, past the judge's budget, so the held-out rows judge (R's Cars93 took 18 of 22 s a fold that way)
    from radbook.local import _frame_kind
    from radbook.stack import _fold_choice
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, 1)) + 0.3 * rng.normal(size=(90, 12))
    whole = RAD(random_state=0).fit(X)
    assert _frame_kind(whole.global_) == 'whiten' and whole.kernel_judge_ == 'cross-fitted'
    X[rng.choice(90, 6, replace=False), rng.choice(12, 6)] = np.nan
    holes = RAD(random_state=0).fit(X)
    assert _frame_kind(holes.global_) == 'whiten' and holes.kernel_judge_ == 'held-out'
    assert _fold_choice(RAD(), 90) == 5 and _fold_choice(RAD(), 300) == 1


def test_verbose_reports_each_step_of_the_fit(capsys):
    # one line per step, with its seconds and what it kept; the twin and the parts fit quietly
    from sklearn.datasets import load_wine
    RAD(random_state=0, verbose=1).fit(load_wine().data[:120])
    out = capsys.readouterr().out.splitlines()
    steps = [line for line in out if line.startswith('RAD ')]
    assert [line.split(' (')[0] for line in steps] == ['RAD local frames', 'RAD Gaussian frames', 'RAD kernel frames',
                                                       'RAD out of fold', 'RAD seeds'], out
    assert 'shares chosen on every row' in steps[-2] and 'nan' not in '\n'.join(out)
    assert 'not tried' in steps[-1]  # a continuous column: the fit at one seed
    assert sum(line.startswith('start 0:') for line in out) == 1  # the one frame's starts, once


def test_a_small_table_weighs_gaussian_frames_sized_by_bic_on_the_shape_steps_folds():
    # 40 rows of three correlated Gaussian columns: too few held-out rows, so the shape step's five folds judge; one full
    # Gaussian, sized by BIC, takes most of the weight there, and 2,000 fresh rows agree
    rng = np.random.default_rng(0)
    C = np.array([[1, .8, .6], [.8, 1, .7], [.6, .7, 1]])
    draw = lambda n: rng.multivariate_normal([0, 0, 0], C, n) * [1, 5, 0.2] + [3, -2, 10]
    X, fresh = draw(40), draw(2000)
    rad = RAD(random_state=0).fit(X)
    bic = rad.gaussian_bic_
    assert rad.kernel_judge_ == 'folds' and bic is not None and (bic.n_components, bic.diagonal) == (1, False)
    assert rad.gaussian_bic_weight_ > 0.5, rad.gaussian_bic_weight_
    np.testing.assert_allclose(rad.density_.weights.sum(), 1.0)
    assert rad.score(fresh) > rad.density_.parts[0].logpdf(fresh).mean() + 0.02


def test_verbose_names_the_small_tables_folds(capsys):
    # on a small table the last step chooses its shares on the shape step's folds, and says so
    rng = np.random.default_rng(0)
    C = np.array([[1, .8, .6], [.8, 1, .7], [.6, .7, 1]])
    RAD(random_state=0, verbose=1).fit(rng.multivariate_normal([0, 0, 0], C, 40))
    last = [line for line in capsys.readouterr().out.splitlines() if line.startswith('RAD out of fold')]
    assert len(last) == 1 and "shares chosen on the shape step's folds" in last[0] and 'Gaussian frames by BIC' in last[0], last


def _independent_table(n, rng):
    "Four independent columns: two skewed, one of four values, one Gaussian."
    return np.column_stack([rng.exponential(size=n), rng.gamma(2, size=n), rng.integers(0, 4, n), rng.normal(size=n)])


def test_a_small_table_weighs_rad_at_rank_one_on_the_shape_steps_folds():
    # 40 rows of independent columns: the folds give the independent model (RAD at rank one in the per-column map) most
    # of the weight, the fresh rows agree, and the whole is one density: shares summing to one, samples in the table's
    # form, the same scores after pickling, the independent member's own rows those of a rank-one fit
    from radbook.stack import fit_independent
    rng = np.random.default_rng(5)
    X, fresh = _independent_table(40, rng), _independent_table(4000, rng)
    rad = RAD(random_state=0).fit(X)
    solo = rad.independent_
    assert rad.kernel_judge_ == 'folds' and solo is not None and solo.n_components_ == 1 and not solo.local_
    assert rad.independent_weight_ > 0.5 and rad.local_scores_['independent_share'] == rad.independent_weight_
    assert rad.score(fresh) > rad.density_.parts[0].logpdf(fresh).mean() + 0.3
    np.testing.assert_allclose(np.exp(rad.density_.log_weights).sum(), 1.0)
    again = fit_independent(RAD(random_state=0), X, random_state=rad.global_.random_state)
    np.testing.assert_array_equal(again.score_samples(fresh), solo.score_samples(fresh))  # fitted to every row, as refitted
    S, labels = rad.sample(50, random_state=1)
    seen = np.isin(S[:, 2], [0.0, 1.0, 2.0, 3.0])  # an unseen integer at its share, one row's worth of 41
    assert S.shape == (50, 4) and seen.sum() >= 45 and (S[~seen, 2] == np.round(S[~seen, 2])).all()
    own = rad.density_.n_components - (rad.kernel_.n_components if rad.kernel_ is not None else 0) - 1  # its one component
    assert (labels == own).mean() > 0.3  # drawn at its share, more than half
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(rad)).score_samples(fresh), rad.score_samples(fresh))
    params = solo.get_params()  # its parameters name the model; refitting it, or streaming it, fits that model
    assert (params['shape'], params['n_components'], params['local']) == ('columns', 1, False)
    assert not hasattr(solo, '_shape_as')
    again.partial_fit(fresh[:1500]); again.partial_fit(fresh[1500:])
    assert again.n_components_ == 1 and np.isfinite(again.score_samples(fresh)).all()


def test_the_folds_floor_rank_ones_coefficients_as_its_fit_does():
    # a discrete column whose values a fold may never see: the independent model's out-of-fold rows floor its
    # coefficients by RAD's coef_floor, as its fit will; the candidates' rows do not depend on it
    from radbook.datapass import summarize
    from radbook.shape import choose_shape, _STACKED
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.exponential(size=40), rng.normal(size=40), rng.choice(8, 40, p=[.4, .3, .1, .1, .04, .03, .02, .01])])
    summary = summarize(X, 0, seed=3, validation_fraction=0.2)
    a = ({}, {})
    low = choose_shape(summary, [0, 1], per_row=a[0])[1]
    high = choose_shape(summary, [0, 1], per_row=a[1], coef_floor=0.5)[1]
    assert {k: v for k, v in low.items() if k != _STACKED} == {k: v for k, v in high.items() if k != _STACKED}
    assert low[_STACKED] != high[_STACKED] and np.isfinite(a[0]['independent']).all()
    rad = RAD(random_state=0, coef_floor=0.5).fit(X)
    assert rad.global_.shape_scores_[_STACKED] != RAD(random_state=0).fit(X).global_.shape_scores_[_STACKED]


def test_rad_at_rank_one_is_not_weighed_where_the_settings_forbid_it():
    # with a smoothing prior (the Radon solver's alone) the shape step has no rank-one candidates, so the folds do not
    # score the independent model and the last step never keeps it
    from radbook.stack import fit_independent
    X = _independent_table(40, np.random.default_rng(5))
    rad = RAD(random_state=0, smoothing=1e-3).fit(X)
    assert rad.independent_ is None and rad.independent_weight_ == 0.0 and 'independent' not in rad.local_scores_
    assert 'columns, independent' not in rad.global_.shape_scores_
    assert fit_independent(RAD(smoothing=1e-3), X) is None


def test_the_folds_try_only_the_steps_the_judged_fit_kept(monkeypatch):
    # the judge scores the density the fit is: a step the fit dropped on its held-out rows (an EM twin, parts,
    # Gaussian frames) is not tried in the folds, for RAD's fit and for its EM fit alike; a kept one is
    import radbook.stack as st
    from sklearn.datasets import load_iris
    calls, gauss, alts = [], [], []
    fit_local, with_gaussian, fit_by_em = st.fit_local, st.with_gaussian, st.fit_by_em
    def spy_local(est, *args, **kwargs):
        calls.append((est.solver, kwargs.get('twin', True), kwargs.get('parts', True)))
        return fit_local(est, *args, **kwargs)
    def spy_gaussian(fit, *args, **kwargs):
        gauss.append(fit.one.solver)
        return with_gaussian(fit, *args, **kwargs)
    def spy_em(*args, **kwargs):
        alts.append(fit_by_em(*args, **kwargs))
        return alts[-1]
    monkeypatch.setattr(st, 'fit_local', spy_local)
    monkeypatch.setattr(st, 'with_gaussian', spy_gaussian)
    monkeypatch.setattr(st, 'fit_by_em', spy_em)
    X = load_iris().data[np.random.default_rng(0).permutation(150)[:100]]
    est = RAD(random_state=0, n_jobs=1).fit(X)  # one process: every fold's fit seen here
    assert est.kernel_judge_ == 'cross-fitted' and len(alts) == 1 and alts[0] is not None
    alt = alts[0]
    kept = (est.em_frame_ is not None, bool(est.local_), est.gaussian_ is not None)
    em_kept = (alt.em_frame_ is not None, bool(alt.local_), alt.gaussian_ is not None)
    assert not all(kept) and not all(em_kept)  # something to leave out on both sides
    # RAD's default solver: 'auto'; every fold's RAD, then every fold's EM
    assert calls == [('em', True, True)] + [('auto',) + kept[:2]] * 3 + [('em',) + em_kept[:2]] * 3
    assert gauss == ['em'] + ['auto'] * 3 * kept[2] + ['em'] * 3 * em_kept[2]


def test_cross_fitted_rows_pass_each_side_its_own_kept_steps(monkeypatch, small):
    # RAD's folds get `kept`'s twin and parts and run Gaussian frames as it says; the EM's get `em_kept`'s
    import radbook.stack as st
    from radbook.local import fit_local
    from radbook.stack import Kept, cross_fitted_rows
    calls, gauss = [], []
    inner, with_gaussian = st.fit_local, st.with_gaussian
    monkeypatch.setattr(st, 'fit_local', lambda est, *a, **k: calls.append((est.solver, k['twin'], k['parts'])) or inner(est, *a, **k))
    monkeypatch.setattr(st, 'with_gaussian', lambda fit, *a, **k: gauss.append(fit.one.solver) or with_gaussian(fit, *a, **k))
    out = cross_fitted_rows(RAD(random_state=0), small, random_state=0, em=True, em_shape=None,
                            kept=Kept(twin=True, parts=False, gauss=False), em_kept=Kept(twin=False, parts=True, gauss=True))
    assert out is not None and calls == [('auto', True, False)] * 3 + [('em', False, True)] * 3 and gauss == ['em'] * 3
    with pytest.raises(ValueError, match='parts=False'):
        fit_local(RAD(random_state=0), small, keep=True, parts=False)


def test_the_judge_cuts_two_folds_from_500_rows(monkeypatch):
    # on 500 rows or more (of positive weight) the cross-fitted judge's folds are two, below that three
    import radbook.stack as st
    seen = []
    monkeypatch.setattr(st, 'cross_fitted_rows', lambda est, X, w, folds, *a, **k: seen.append((folds, k['n_fitted'])))  # None: the fit stands
    X = np.random.default_rng(0).normal(size=(500, 2)) @ np.array([[1.0, 0.8], [0.0, 0.6]])
    for n, w in ((500, None), (499, None), (500, np.r_[0.0, np.ones(499)])):
        RAD(random_state=0).fit(X[:n], sample_weight=w)
    assert seen == [(2, 1), (3, 3), (3, 3)]  # from 500 rows one of the two folds is fitted: half the rows judge


def test_the_judge_fitting_one_fold_scores_that_fold_as_all_folds_would(small):
    # n_fitted=1: only the first fold's fits are made; its rows score as in the full cross-fit, the other fold's stay 0
    from radbook.stack import cross_fitted_rows, _judge_fold
    full = cross_fitted_rows(RAD(random_state=0), small, folds=2, random_state=0)
    half = cross_fitted_rows(RAD(random_state=0), small, folds=2, random_state=0, n_fitted=1)
    first = _judge_fold(len(small), 2, 0) == 0
    for a, b in zip(full, half):
        if a is None: assert b is None; continue
        np.testing.assert_array_equal(b[first], a[first])
        assert (b[~first] == 0).all() and (a[~first] != 0).all()


def test_verbose_says_why_no_seeds_were_averaged():
    from radbook.local import LocalFit
    from radbook.rad import _StepReport
    fit = LocalFit(None, [], np.ones(1), scores={})
    assert 'not discrete' in _StepReport.describe('seeds', fit)
    fit.scores['seeds'] = 0
    assert 'more than 15 rows per free parameter' in _StepReport.describe('seeds', fit)
    fit.scores['seeds'] = 1
    assert "no other seed's fit" in _StepReport.describe('seeds', fit)
    fit.seeds, fit.scores['seeds'] = [None, None], 3
    assert _StepReport.describe('seeds', fit) == 'the mean of the fit at 3 seeds'

"""The widget explorer's logic without a browser: set a control, check the outputs, the figure, the history and the caches."""
import numpy as np
import pytest

from radbook.explorer import Explorer, explorer_app
from radbook.rad import auto_bins
from radbook.rad import RAD
from radbook.dictionaries import paper_family

SMALL = dict(n_samples=500, n_projections=4, jsd_samples=1000, n_cells=30)


def snapshot(ex):
    "What the user sees: the JSD text, the message and the figure's PNG bytes."
    return ex.summary.value, ex.message.value, bytes(ex.figure.value)


@pytest.fixture
def ex():
    return Explorer('mixed', **SMALL)


def test_first_update_shows_everything(ex):
    text, message, png = snapshot(ex)
    assert 'JSD(truth, RAD) =' in text and 'fit ' in text and 'M=4' in text
    assert message == '' and ex.error == ''
    assert png[:8] == b'\x89PNG\r\n\x1a\n'
    assert len(ex.history) == 1 and ex.history[0]['M'] == 4 and ex.history[0]['bins'] == auto_bins(500)


@pytest.mark.parametrize('control, value', [('n_projections', 7), ('n_samples', 1000), ('seed', 3),
                                            ('family', 'laplacian')])
def test_control_that_needs_a_fit(ex, control, value):
    before = snapshot(ex)
    ex.controls[control].value = value
    after = snapshot(ex)
    assert after[0] != before[0] and after[2] != before[2]   # the JSD text and the figure changed
    assert len(ex.history) == 2                              # the history grew by the new setting
    assert ex.history[-1]['M' if control == 'n_projections' else 'K' if control == 'n_samples' else
                          'seed' if control == 'seed' else 'family'] == value
    assert ex.error == ''


@pytest.mark.parametrize('control, value', [('direction', 3), ('pair', (1, 3)), ('history_x', 'bins')])
def test_control_that_only_redraws(ex, control, value):
    before = snapshot(ex)
    ex.controls[control].value = value
    after = snapshot(ex)
    assert after[2] != before[2] and after[0] == before[0]   # a new figure, the same fit
    assert len(ex.history) == 1 and set(ex.timings) == {'draw'}


def test_history_builds_the_trade_off(ex):
    for M in (1, 2, 8, 16):
        ex.controls['n_projections'].value = M
    assert [h['M'] for h in ex.history] == [4, 1, 2, 8, 16]
    assert all(0 <= h['jsd'] < np.log(2) and h['se'] > 0 for h in ex.history)
    ex.controls['n_projections'].value = 2                   # tried before: from the cache, no new entry
    assert len(ex.history) == 5 and set(ex.timings) == {'draw'}


def test_fit_matches_a_direct_rad_star_fit(ex):
    truth = paper_family('mixed', random_state=0)
    X, _ = truth.sample(500, random_state=1)
    direct = RAD(truth.n_components, dictionaries=truth.dictionaries, n_projections=4, n_bins=auto_bins(500),
                 n_init=1, random_state=0).fit(X)
    rad = ex.fit('mixed', 0, 500, 4, auto_bins(500)).rad
    np.testing.assert_allclose(rad.weights_, direct.weights_)
    np.testing.assert_array_equal(ex.sample('mixed', 0, 500), X)


def test_bad_combination_shows_a_message(ex):
    ex.controls['auto_bins'].value = False
    ex.controls['n_samples'].value = 250
    good = snapshot(ex)
    n_fits = len(ex.history)
    ex.controls['n_bins'].value = 200
    text, message, png = snapshot(ex)
    assert 'Cannot show this setting' in message and 'need at least 400 samples' in message
    assert 'Traceback' not in message
    assert png == good[2] and text == good[0] and len(ex.history) == n_fits   # the panels keep the last valid setting
    ex.controls['n_samples'].value = 500                     # enough samples now: the message goes away
    assert ex.message.value == '' and ex.error == '' and len(ex.history) == n_fits + 1


def test_unexpected_errors_become_messages(ex, monkeypatch):
    def boom(*args, **kwargs): raise RuntimeError('solver exploded')
    monkeypatch.setattr(ex, 'fit', boom)
    ex.controls['n_projections'].value = 9
    assert 'RuntimeError: solver exploded' in ex.message.value and 'Traceback' not in ex.message.value


def test_auto_bins_follow_k_and_lock_the_slider(ex):
    assert ex.controls['n_bins'].disabled and ex.controls['n_bins'].value == auto_bins(500)
    ex.controls['n_samples'].value = 5000
    assert ex.controls['n_bins'].value == auto_bins(5000) == 18 and ex.history[-1]['bins'] == 18
    ex.controls['auto_bins'].value = False
    assert not ex.controls['n_bins'].disabled


def test_family_change_updates_pairs_and_direction_follows_m(ex):
    ex.controls['family'].value = 'mixed_features'
    options = [o[1] for o in ex.controls['pair'].options]
    assert len(options) == 21 and ex.controls['pair'].value == (0, 1)
    assert any('discrete' in o[0] for o in ex.controls['pair'].options)
    ex.controls['pair'].value = (4, 6)                       # a discrete pair draws too
    assert ex.error == ''
    ex.controls['direction'].value = 4
    ex.controls['n_projections'].value = 2
    assert ex.controls['direction'].max == 2 and ex.controls['direction'].value == 2 and ex.error == ''


def test_app_widget_holds_the_explorer():
    app = explorer_app(family='mixed', **SMALL)
    assert app.explorer.figure in app.children and 'radbook-explorer' in app._dom_classes


def test_bad_arguments():
    with pytest.raises(ValueError, match='Unknown family'):
        Explorer('gauss')
    with pytest.raises(ValueError, match='n_samples must be one of'):
        Explorer('mixed', n_samples=123)


def test_a_user_array_with_missing_entries():
    rng = np.random.default_rng(0)
    X = np.c_[rng.normal(size=600), rng.integers(0, 3, 600)]
    X = np.c_[X, X[:, 0] + X[:, 1] + rng.normal(0, 0.3, 600)]
    X[rng.random(X.shape) < 0.1] = np.nan
    ex = Explorer(data=X, n_projections=4, n_cells=20)
    assert ex.error == '' and 'held-out log-likelihood' in ex.summary.value
    assert ex.sizes == (250, 480) and ex.settings()['K'] == 480 and len(ex._held) == 120
    assert [o[0] for o in ex.controls['pair'].options] == ['x1, x2', 'x1, x3', 'x2, x3']
    assert 'value' in ex.history[-1] and 'jsd' not in ex.history[-1]
    ex.controls['n_samples'].value = 250
    assert len(ex.history) == 2 and ex.history[-1]['K'] == 250
    # the score is the held-out rows' mean log density under the fit, as RAD computes it
    rec = ex._fits['table', 0, 250, 4, ex.settings()['bins']]
    assert rec.value == pytest.approx(np.mean(rec.rad.score_samples(X[ex._held])))


def test_a_fit_averaged_over_seeds_shows_its_one_frame():
    # an all-discrete table: RAD() averages five seeds (a MixtureDensity); the profile is the one frame's fit
    from radbook.explorer import projection_profile
    rng = np.random.default_rng(0)
    group = rng.random(400) < 0.4
    X = np.column_stack([np.where(group, rng.integers(0, 3, 400), rng.integers(2, 6, 400)), rng.integers(0, 4, 400) + 2 * group,
                         (rng.random(400) < np.where(group, 0.8, 0.3))]).astype(float)
    est = RAD(random_state=0).fit(X)
    assert len(est.seeds_) == 4
    p = projection_profile(est, X, 0, 1, 0)
    np.testing.assert_allclose(p.model.sum(), 1.0, atol=1e-6)
    one = projection_profile(RAD(random_state=0, local=False).fit(X), X, 0, 1, 0)  # the same one frame, fitted alone
    np.testing.assert_allclose(p.model, one.model, atol=1e-12)
    W = np.c_[X, rng.normal(size=400)]  # a per-column map: its fit in one frame is not on the table's own axes
    with pytest.raises(ValueError, match='shape=None'):
        projection_profile(RAD(random_state=0, local=False, shape='columns').fit(W), W, 0, 1, 0)

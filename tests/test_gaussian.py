"Gaussian frames beside RAD's fit (notebook 03i_gaussian): kept where they win, exact wherever they are kept."
import numpy as np
import pandas as pd
import pytest

from radbook.gaussian import GaussianFrames
from radbook.rad import RAD


@pytest.fixture(scope='module')
def tilted():
    "Three tilted clouds, a category that follows the first column, and holes in the second: Gaussian frames win there."
    rng = np.random.default_rng(1)
    X = np.vstack([rng.multivariate_normal([-3, 0], [[1, .9], [.9, 1]], 500),
                   rng.multivariate_normal([3, 0], [[1, -.9], [-.9, 1]], 500),
                   rng.multivariate_normal([0, 4], [[1, .6], [.6, 1]], 300)])
    frame = pd.DataFrame(X, columns=['a', 'b'])
    frame['kind'] = pd.Categorical(np.where(frame['a'] > 0, 'right', 'left'))
    frame.loc[::17, 'b'] = np.nan
    return frame, RAD(n_init=2, random_state=0).fit(frame)


def test_kept_frames_are_the_last_components_at_their_share(tilted):
    frame, rad = tilted
    assert isinstance(rad.gaussian_, GaussianFrames) and 0 < rad.gaussian_weight_ < 1
    assert rad.local_scores_['gaussian_gain'] > 0
    np.testing.assert_allclose(rad.density_.weights[-rad.gaussian_.n_components:].sum(), rad.gaussian_weight_)
    np.testing.assert_allclose(rad.density_.weights.sum(), 1.0)
    assert np.isfinite(rad.score_samples(frame)).all()


def test_missing_entries_marginals_and_conditionals_stay_exact(tilted):
    # the density with a hole in b is the marginal over a and kind, and p(a, b, kind) = p(a, kind) p(b | a, kind)
    frame, rad = tilted
    rows = frame.dropna().iloc[:5]
    holed = rows.assign(b=np.nan)
    np.testing.assert_allclose(rad.score_samples(holed), rad.marginal(['a', 'kind']).logpdf(rows), rtol=1e-10)
    joint = rad.score_samples(rows)
    for i in range(len(rows)):
        given = {'a': rows['a'].iloc[i], 'kind': rows['kind'].iloc[i]}
        cond = rad.conditional(given).logpdf(rows[['b']].iloc[i:i + 1])[0]
        np.testing.assert_allclose(joint[i], rad.marginal(['a', 'kind']).logpdf(rows.iloc[i:i + 1])[0] + cond, rtol=1e-9)
    S, labels = rad.sample(400, random_state=0)
    assert labels.max() < rad.density_.n_components and (labels >= rad.density_.n_components - rad.gaussian_.n_components).any()


def test_a_continuous_column_that_is_not_smooth_leaves_rad_alone(tilted):
    # a zero-inflated column (a heavy value at 0) has no factor in the Gaussian frames: they are not fitted
    frame, _ = tilted
    spiky = frame.assign(c=np.where(np.arange(len(frame)) % 3 == 0, 0.0, np.random.default_rng(0).gamma(2.0, 1.0, len(frame))))
    rad = RAD(n_init=2, random_state=0).fit(spiky)
    assert rad.gaussian_ is None and rad.gaussian_weight_ == 0.0 and 'gaussian' not in rad.local_scores_


def test_too_few_held_out_rows_skip_the_gaussian_frames(tilted):
    frame, _ = tilted
    rad = RAD(n_init=2, random_state=0).fit(frame.iloc[::30])  # 44 rows: about 9 held out
    assert rad.gaussian_ is None and 'gaussian' not in rad.local_scores_
    one_frame = RAD(n_init=2, random_state=0, local=False).fit(frame)
    assert one_frame.gaussian_ is None and one_frame.gaussian_weight_ == 0.0  # local=False: RAD's one frame alone


def test_a_whitened_one_frame_beside_gaussian_frames_refuses_part_of_its_group(monkeypatch):
    # RAD's one frame whitens all three columns; with Gaussian frames kept beside it (forced here), a marginal over one
    # of them has no exact form in RAD's half of the mixture: the error names the one frame and the Gaussian frames
    import radbook.gaussian as gaussian
    monkeypatch.setattr(gaussian, '_beats', lambda gain, w, margin: True)
    X = np.random.default_rng(0).multivariate_normal([0, 0, 0], [[1, .9, .8], [.9, 1, .85], [.8, .85, 1]], 1500)
    rad = RAD(n_init=2, random_state=0).fit(X)
    assert rad.gaussian_ is not None and not rad.local_ and len(rad.global_.shape_.group) == 3
    with pytest.raises(ValueError, match=r"kept beside Gaussian frames \(gaussian_\)"):
        rad.marginal([0])
    np.testing.assert_allclose(rad.marginal([0, 1, 2]).logpdf(X[:5]), rad.score_samples(X[:5]))


def test_two_instruments_with_one_row_in_common_fit():
    # two continuous columns measured on mostly separate rows: one row holds both, too few for any Gaussian mixture;
    # the Gaussian frames are then not tried, and the fit is RAD's own
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=400), rng.normal(size=400)
    a[200:], b[:199] = np.nan, np.nan
    frame = pd.DataFrame({'a': a, 'b': b, 'kind': pd.Categorical(rng.choice(['x', 'y'], 400))})
    rad = RAD(n_init=2, random_state=0).fit(frame)
    assert rad.gaussian_ is None and np.isfinite(rad.score_samples(frame)).all()


def test_the_order_of_the_gaussian_columns_does_not_matter():
    # the same density given its Gaussian columns as [2, 0] or [0, 2]: the same log densities, marginals and conditionals
    rng = np.random.default_rng(0)
    S = np.array([[[2.0, 0.8], [0.8, 1.0]], [[1.0, -0.3], [-0.3, 0.5]]])
    m, w = rng.normal(size=(2, 2)), np.array([0.4, 0.6])
    from radbook.dictionaries import DictionaryCPD, point_mass
    rest = DictionaryCPD(w, [np.array([[0.3, 0.9], [0.7, 0.1]])], [[point_mass(0.0), point_mass(1.0)]])
    ab = GaussianFrames(w, m, S, [0, 2], 3, np.array([1.0, -1.0]), np.array([2.0, 0.5]), rest)
    ba = GaussianFrames(w, m[:, ::-1], S[:, ::-1, ::-1], [2, 0], 3, np.array([-1.0, 1.0]), np.array([0.5, 2.0]), rest)
    X = np.array([[0.5, 1.0, -1.2], [2.0, 0.0, 0.3]])
    np.testing.assert_allclose(ba.logpdf(X), ab.logpdf(X))
    np.testing.assert_allclose(ba.marginal([2, 1]).logpdf(X[:, [2, 1]]), ab.marginal([2, 1]).logpdf(X[:, [2, 1]]))
    x = np.array([np.nan, 1.0, np.nan])
    np.testing.assert_allclose(ba.conditional(x).logpdf(X[:, [0, 2]]), ab.conditional(x).logpdf(X[:, [0, 2]]))

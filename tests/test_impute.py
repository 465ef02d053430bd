"""RADImputer: scikit-learn's checks, DataFrames, draws, and agreement with the conditional density."""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from radbook.impute import RADImputer, impute_rows
from radbook.rad import RAD

FAST = dict(n_init=1, max_iter=60, n_projections=6, random_state=0)


@parametrize_with_checks([RADImputer(RAD(2, **FAST))])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # ConvergenceWarning of the short fits
        check(estimator)


@pytest.fixture(scope='module')
def frame():
    rng = np.random.default_rng(0)
    n = 1200
    kind = rng.choice(['low', 'mid', 'high'], n)
    size = np.select([kind == 'low', kind == 'mid'], [1.0, 3.0], 5.0) + rng.normal(0, 0.3, n)
    df = pd.DataFrame({'kind': kind, 'size': size, 'noise': rng.normal(size=n)})
    holes = df.copy()
    holes.loc[:199, 'kind'] = None
    holes.loc[200:399, 'size'] = np.nan
    return df, holes


def test_data_frame_comes_back_filled_with_its_categories(frame):
    df, holes = frame
    out = RADImputer(random_state=0).fit(holes).transform(holes)
    assert isinstance(out, pd.DataFrame) and list(out.columns) == list(df.columns)
    assert not out.isna().any().any()
    pd.testing.assert_frame_equal(out.iloc[400:].reset_index(drop=True), df.iloc[400:].reset_index(drop=True), check_dtype=False)
    assert (out.loc[:199, 'kind'] == df.loc[:199, 'kind']).mean() > 0.95  # the size tells the kind
    assert np.sqrt(np.mean((out.loc[200:399, 'size'] - df.loc[200:399, 'size']) ** 2)) < 0.5  # the kind tells the size


def test_fill_is_the_mean_of_the_conditional_density(frame):
    _, holes = frame
    imp = RADImputer(random_state=0).fit(holes)
    est = imp.estimator_
    out = imp.transform(holes)
    for i in (200, 250, 399):
        cond = est.conditional({'kind': holes.loc[i, 'kind'], 'noise': holes.loc[i, 'noise']})
        mean = (cond.weights @ cond.component_means())[list(cond.features).index(1)]
        assert out.loc[i, 'size'] == pytest.approx(mean, rel=1e-12)


def test_sample_posterior_is_seeded_and_varies():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(800, 3)); X[:, 1] += 2 * X[:, 0]
    Xm = X.copy(); Xm[:100, 1] = np.nan
    est = RAD(3, shape=None, random_state=0).fit(Xm)  # conditional means need the table as it is
    a = impute_rows(est.density_, Xm, sample_posterior=True, random_state=5)
    b = impute_rows(est.density_, Xm, sample_posterior=True, random_state=5)
    c = impute_rows(est.density_, Xm, sample_posterior=True, random_state=6)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a[:100, 1], c[:100, 1])
    np.testing.assert_array_equal(a[100:], X[100:])
    # draws scatter around the conditional mean with the conditional spread, not collapse on it
    mean = impute_rows(est.density_, Xm)
    assert 0.5 < np.std(a[:100, 1] - mean[:100, 1]) < 2.0

"""Determined columns (notebook `03l_determined`): RAD fits the other columns and gives a column that another discrete
column fixes its parent's value, exactly: scores, missing parents, marginals, conditionals and draws agree with the
rule, and the settings that fit every column in the mixture do."""
import warnings

import numpy as np
import pandas as pd
import pytest

from radbook.determined import DeterminedDensity
from radbook.local import MixtureDensity
from radbook.rad import RAD

DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri']


def table(n=240, seed=0, broken=0):
    "A day's name and its number (the number determined by the name), a count that depends on the day, two sizes."
    rng = np.random.default_rng(seed)
    day = rng.integers(0, 5, n)
    x = rng.normal(size=n) + 0.8 * day
    frame = pd.DataFrame({'day': pd.Categorical(np.array(DAYS)[day], categories=DAYS), 'visits': rng.poisson(1 + day),
                          'x': x, 'y': x + 0.3 * rng.normal(size=n), 'number': day + 1})
    frame.loc[:broken - 1, 'number'] = 9 if broken else frame['number']
    return frame


@pytest.fixture(scope='module')
def fitted():
    frame = table()
    fit, held = frame.iloc[:180], frame.iloc[180:]
    return fit, held, RAD(local=False, shape='columns', n_components=3, random_state=0).fit(fit)


def test_the_rule_is_found_and_named(fitted):
    fit, _, est = fitted
    assert est.determined_ == {'number': 'day'}
    np.testing.assert_array_equal(est.kept_columns_, [0, 1, 2, 3])
    assert isinstance(est.density_, DeterminedDensity) and est.n_features_in_ == 5 and len(est.dictionaries_) == 5
    assert [a.value for a in est.dictionaries_[4]] == [1, 2, 3, 4, 5]
    assert RAD(local=False, n_components=3, determined=None, random_state=0).fit(fit).determined_ == {}


def test_scores_are_the_kept_fit_times_the_rule(fitted):
    fit, held, est = fitted
    kept = RAD(local=False, shape='columns', n_components=3, determined=None, random_state=0).fit(fit.drop(columns='number'))
    slack = np.full(5, 1 / (len(fit) + 1))  # the table's slack: every fitted row holds both columns
    q = fit['number'].value_counts(normalize=True).sort_index().to_numpy()
    day = held['day'].cat.codes.to_numpy()
    rule = np.log(1 - slack[day] + slack[day] * q[day])  # a held-out row on its rule: 1 - slack + slack * q(its number)
    eps = 1 / (len(fit) + 1)  # the child's own unseen share, as every discrete column's
    expected = kept.score_samples(held.drop(columns='number')) + rule + np.log1p(-eps)
    np.testing.assert_allclose(est.score_samples(held), expected, rtol=1e-10)


def test_a_broken_rule_scores_its_slack_not_minus_inf(fitted):
    _, held, est = fitted
    row = held.iloc[:1].copy()
    row['number'] = 5 if row['day'].iloc[0] != 'Fri' else 1
    s = est.score_samples(row)[0]
    assert np.isfinite(s) and s < est.score_samples(held.iloc[:1])[0] - 1


def test_the_child_sums_to_one_over_its_values(fitted):
    _, held, est = fitted
    row = held.iloc[:1]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the unseen numbers warn
        grid = pd.concat([row.assign(number=v) for v in range(-30, 36)])
        total = np.exp(est.score_samples(grid)).sum()
    free = row.assign(number=np.nan)
    np.testing.assert_allclose(total, np.exp(est.score_samples(free))[0], rtol=1e-6)  # the tails beyond: 2^-31


def test_a_missing_parent_is_summed_over_its_values(fitted):
    _, held, est = fitted
    row = held.iloc[:1].assign(day=np.nan)
    each = pd.concat([held.iloc[:1].assign(day=pd.Categorical([d], categories=DAYS)) for d in DAYS])
    eps = 1 / (est.n_samples_seen_ + 1)  # each row with the day observed holds its seen share 1 - eps
    np.testing.assert_allclose(np.exp(est.score_samples(row))[0], np.exp(est.score_samples(each)).sum() / (1 - eps), rtol=1e-9)
    post = est.predict_proba(row)
    assert post.shape == (1, est.density_.n_components) and np.isclose(post.sum(), 1)


def test_marginals_and_conditionals_are_exact(fitted):
    _, held, est = fitted
    m = est.marginal(['number'])
    values = pd.DataFrame({'number': [1, 2, 3, 4, 5]})
    eps = 1 / (est.n_samples_seen_ + 1)
    np.testing.assert_allclose(np.exp(m.logpdf(values)).sum(), 1 - eps, rtol=1e-9)  # the rest: unseen numbers
    both = est.marginal(['number', 'x'])
    rows = held[['number', 'x']].iloc[:5]
    free = held.iloc[:5].assign(day=np.nan, visits=np.nan, y=np.nan)
    np.testing.assert_allclose(both.logpdf(rows), est.score_samples(free), rtol=1e-9)
    c = est.conditional({'day': 'Wed'})
    draws = c.sample(4000, random_state=0)[0]
    assert 0.9 < np.mean(draws['number'] == 3) < 1.0
    g = est.conditional({'number': 3})  # the child without its parent: a mixture over the parent's values
    assert isinstance(g.density, MixtureDensity)
    days = g.sample(2000, random_state=0)[0]['day']
    assert np.mean(days == 'Wed') > 0.9


def test_sample_follows_the_rule(fitted):
    _, _, est = fitted
    X, _ = est.sample(20_000, random_state=0)
    on_rule = (X['number'] == X['day'].cat.codes + 1).mean()
    slack = eps = 1 / (est.n_samples_seen_ + 1)
    assert abs(on_rule - (1 - slack * 0.8) * (1 - eps)) < 0.005  # off: the slack (less its own value's share), unseen numbers


def test_whitened_groups_are_named_in_the_tables_columns():
    frame = table(300, seed=1)[['day', 'number', 'x', 'y', 'visits']]
    est = RAD(local=False, shape='whiten', n_components=3, random_state=0).fit(frame)
    assert est.determined_ == {'number': 'day'} and list(est.kept_columns_) == [0, 2, 3, 4]
    row = frame.iloc[:1].assign(y=np.nan)
    with pytest.raises(ValueError, match="'x', 'y'"):
        est.score_samples(row)


def test_settings_that_fit_every_column():
    frame = table()
    with pytest.raises(ValueError, match='determined must be'):
        RAD(determined='yes').fit(frame)
    est = RAD(local=False, n_components=3, random_state=0).partial_fit(frame)
    assert est.determined_ == {} and est.kept_columns_ is None
    two = frame[['day', 'number']]  # one column would be left: no rule
    assert RAD(local=False, n_components=2, random_state=0).fit(two).determined_ == {}
    broken = table(broken=2)  # two rows break it
    assert RAD(local=False, n_components=3, random_state=0).fit(broken).determined_ == {}


def test_missing_parents_of_many_values_are_summed_quickly():
    rng = np.random.default_rng(3)
    n = 1200
    model, city = rng.integers(0, 120, n), rng.integers(0, 100, n)
    frame = pd.DataFrame({'model': pd.Categorical(model.astype(str)), 'maker': (model % 10).astype(str),
                          'city': pd.Categorical(city.astype(str)), 'region': (city % 10).astype(str),
                          'x': rng.normal(size=n) + model % 10})
    frame = frame.astype({'maker': 'category', 'region': 'category'})
    est = RAD(local=False, shape=None, n_components=3, random_state=0).fit(frame)
    assert est.determined_ == {'maker': 'model', 'region': 'city'}
    rows = frame.iloc[:50].assign(model=np.nan, city=np.nan)
    s = est.score_samples(rows)  # 11 x 11 evaluations per group of rows with the same children's values
    assert np.isfinite(s).all()
    each = pd.concat([frame.iloc[:1].assign(city=np.nan, model=pd.Categorical([m], categories=frame['model'].cat.categories))
                      for m in frame['model'].cat.categories])
    eps = 1 / (est.n_samples_seen_ + 1)
    np.testing.assert_allclose(np.exp(est.score_samples(frame.iloc[:1].assign(model=np.nan, city=np.nan, region=np.nan)))[0],
                               np.exp(est.score_samples(each.assign(region=np.nan))).sum() / (1 - eps), rtol=1e-8)


def test_steps_called_alone_and_refits():
    from radbook.local import fit_local, before_refit
    frame = table(600)
    fit = fit_local(RAD(random_state=0), frame, keep=True)  # fit_local's own clones read every column
    assert fit.one.determined_ == {}
    est = RAD(local=False, n_components=3, random_state=0).fit(frame)
    assert before_refit(est).n_features == 5
    est = RAD(local=False, n_components=3, solver='radon', random_state=0).fit(frame.drop(columns='number'))
    assert hasattr(est, 'directions_')
    est.set_params(solver='em').fit(frame)  # an earlier fit's projections do not survive
    assert est.determined_ == {'number': 'day'} and not hasattr(est, 'directions_')


def test_unseen_none_keeps_a_slack_and_names_and_generators():
    frame = table()
    est = RAD(local=False, n_components=3, unseen=None, random_state=0).fit(frame.iloc[:180])
    row = frame.iloc[180:181].copy()
    row['number'] = 5 if row['day'].iloc[0] != 'Fri' else 1  # seen values, never seen together: not an unseen value
    assert np.isfinite(est.score_samples(row)).all()
    named = frame.set_axis(range(5), axis=1)  # integer column names
    assert RAD(local=False, n_components=3, random_state=0).fit(named).determined_ == {4: 0}
    rs = np.random.RandomState(0)
    a = RAD(local=False, n_components=3, random_state=rs).fit(frame)
    b = RAD(local=False, n_components=3, random_state=rs).fit(frame)  # the generator advanced, as in any fit
    assert not np.allclose(a.score_samples(frame.iloc[:5]), b.score_samples(frame.iloc[:5]))


def test_inside_scikit_learns_meta_estimators():
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import FunctionTransformer
    frame = table()
    pipe = make_pipeline(FunctionTransformer(), RAD(local=False, shape='columns', n_components=3, random_state=0)).fit(frame)
    assert pipe[-1].determined_ == {'number': 'day'} and np.isfinite(pipe.score_samples(frame.iloc[:5])).all()
    search = GridSearchCV(RAD(local=False, shape='columns', random_state=0), {'n_components': [2, 3]}, cv=2,
                          error_score='raise').fit(frame)
    assert search.best_estimator_.determined_ == {'number': 'day'}


def weights_table(n=240, seed=3):
    "A birth weight, `low` = weight under 2,500 (a step function of it), the mother's age, and a count."
    rng = np.random.default_rng(seed)
    age = rng.normal(25, 5, n)
    bwt = 3000 + 20 * (age - 25) + rng.normal(0, 500, n)
    return pd.DataFrame({'bwt': bwt, 'age': age, 'visits': rng.poisson(2, n), 'low': (bwt < 2500).astype(int)})


@pytest.fixture(scope='module')
def by_intervals():
    frame = weights_table()
    fit, held = frame.iloc[:180], frame.iloc[180:]
    return fit, held, RAD(local=False, shape='columns', n_components=3, random_state=0).fit(fit)  # the default reads it


def test_a_step_function_of_a_continuous_column_is_a_rule(by_intervals):
    fit, held, est = by_intervals
    assert est.determined_ == {'low': 'bwt'}
    np.testing.assert_array_equal(est.kept_columns_, [0, 1, 2])
    kept = RAD(local=False, shape='columns', n_components=3, determined=None, random_state=0).fit(fit.drop(columns='low'))
    rule = est.density_.rules[0]
    inside = (held['bwt'] < rule.hi[0]) | (held['bwt'] > rule.lo[1])  # off the gap between the two runs
    q = fit['low'].value_counts(normalize=True).sort_index().to_numpy()
    slack = 1 / (len(fit) + 1)
    eps = 1 / (len(fit) + 1)  # the child's own unseen share
    low = held['low'].to_numpy()
    expected = kept.score_samples(held.drop(columns='low')) + np.log(1 - slack + slack * q[low]) + np.log1p(-eps)
    np.testing.assert_allclose(est.score_samples(held)[inside], expected[inside], rtol=1e-10)


def test_the_child_without_its_parent_is_the_integral_over_the_parent(by_intervals):
    from scipy.integrate import quad
    _, held, est = by_intervals
    rule = est.density_.rules[0]
    row = held.iloc[:1].copy()
    def over_bwt(f):  # piece by piece between the rule's breaks, where the step is constant
        edges = np.r_[-np.inf, rule.breaks(), np.inf]  # the whole line: the atoms have tails beyond the data
        return sum(quad(f, a, b, epsabs=0, epsrel=1e-10)[0] for a, b in zip(edges[:-1], edges[1:]))
    at = lambda t, frame: frame.assign(bwt=t)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        want = over_bwt(lambda t: np.exp(est.score_samples(at(t, row)))[0])
        missing = row.assign(bwt=np.nan)
        np.testing.assert_allclose(est.score_samples(missing), np.log(want), rtol=1e-7)
        np.testing.assert_allclose(est.marginal(['low', 'age', 'visits']).logpdf(row), np.log(want), rtol=1e-7)
        both = est.marginal(['low'])
        total = np.exp(both.logpdf(pd.DataFrame({'low': [0, 1]}))).sum()
        assert 0.99 < total <= 1.0  # the rest is an unseen value's share
        given = est.conditional({'low': 1})  # the other columns given the child alone: bwt below the threshold, mostly
        draws, _ = given.sample(2000, random_state=0)
        assert (draws['bwt'] < rule.lo[1]).mean() > 0.95
        joint = est.marginal(['bwt', 'low']).logpdf(pd.DataFrame({'bwt': [2300.0], 'low': [1]}))
        np.testing.assert_allclose(given.marginal(['bwt']).logpdf(pd.DataFrame({'bwt': [2300.0]})),
                                   joint - both.logpdf(pd.DataFrame({'low': [1]})), rtol=1e-9)
    three = est.density_.marginal([1, 3, 0])  # age, low, bwt in the density's coding
    assert np.isfinite(three.logpdf(np.array([[25.0, 1.0, np.nan]]))).all()


def test_a_whitened_parent_refuses_its_child_alone_and_own_axis_serves_it():
    fit = weights_table()
    est = RAD(local=False, shape='whiten', n_components=3, random_state=0).fit(fit)
    assert est.determined_ == {'low': 'bwt'} and 0 in est.shape_.group  # bwt, the kept table's column 0, whitened
    with pytest.raises(ValueError, match="column 'low' is fixed by intervals of the continuous column 'bwt'.*own_axis"):
        est.marginal(['low'])
    axed = RAD(local=False, shape='whiten', n_components=3, own_axis=['bwt'], random_state=0).fit(fit)
    assert 0 not in axed.shape_.group
    low = axed.marginal(['low'])
    assert 0.99 < np.exp(low.logpdf(pd.DataFrame({'low': [0, 1]}))).sum() <= 1.0
    assert np.isfinite(axed.conditional({'low': 1}).logpdf(fit.head(3).drop(columns='low'))).all()


def test_own_axis_keeps_the_named_columns_off_every_rotation():
    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    frame = pd.DataFrame({'x': x, 'y': x + 0.3 * rng.normal(size=400), 'z': x - 0.5 * rng.normal(size=400)})
    whitened = RAD(local=False, shape='whiten', n_components=3, random_state=0).fit(frame)
    assert whitened.shape_.group.tolist() == [0, 1, 2]
    kept = RAD(local=False, shape='whiten', n_components=3, own_axis=['x'], random_state=0).fit(frame)
    assert kept.shape_.group.tolist() == [1, 2]
    assert np.isfinite(kept.marginal(['x']).logpdf(frame.head(3))).all()  # x alone: a marginal the rotation keeps
    by_position = RAD(local=False, shape='whiten', n_components=3, own_axis=[0], random_state=0).fit(frame.to_numpy())
    assert by_position.shape_.group.tolist() == [1, 2]
    with pytest.raises(ValueError, match="own_axis names 'w', which is no column"): RAD(own_axis=['w']).fit(frame)
    with pytest.raises(TypeError, match="own_axis must be None or a list"): RAD(own_axis='x').fit(frame)


def test_a_parent_whitened_with_others_is_named_where_a_request_needs_the_child_without_it():
    from radbook.determined import IntervalRule
    from radbook.dictionaries import DictionaryCPD, gaussian
    from radbook.shape import Shape, ShapedDensity
    cpd = DictionaryCPD([0.5, 0.5], [np.array([[0.7, 0.2], [0.3, 0.8]])] * 2, [[gaussian(-1, 1), gaussian(1, 1)]] * 2)
    shape = Shape(2, columns=[0, 1], center=[0, 0], scale=[1, 1], lam=[1, 1], mean=[0, 0], std=[1, 1], group=[0, 1],
                  W=np.array([[1.0, 0.5], [0.0, 1.0]]))
    rule = IntervalRule(2, 0, np.array([-3.0, 0.5]), np.array([0.0, 3.0]), np.array([0.0, 1.0]), 0.01,
                        np.array([0.0, 1.0]), np.array([0.5, 0.5]))
    d = DeterminedDensity(ShapedDensity(cpd, shape), [0, 1], [rule], ["column 'a'", "column 'b'", "column 'kind'"])
    with pytest.raises(ValueError, match="column 'kind' is fixed by intervals of the continuous column 'a'.*"
                                         "whitens that column with others.*determined='discrete'"):
        d.marginal([2])
    with pytest.raises(ValueError, match="column 'kind' is fixed by intervals"): d.conditional(np.array([np.nan, np.nan, 1.0]))
    assert np.isfinite(d.logpdf(np.array([[0.2, 0.1, 1.0]]))).all()  # with its parent: exact


def test_draws_follow_the_intervals(by_intervals):
    _, _, est = by_intervals
    X, _ = est.sample(4000, random_state=0)  # a DataFrame, as fitted
    rule = est.density_.rules[0]
    far = (X['bwt'] < rule.hi[0]) | (X['bwt'] > rule.lo[1])
    agree = (X['low'][far] == (X['bwt'][far] < 2500).astype(int)).mean()
    assert agree > 0.98, agree  # the slack is 1/181 of the draws, spread over both values


def test_a_cyclic_or_broken_step_is_no_rule():
    frame = weights_table()
    frame['low'] = ((frame['bwt'] // 250) % 2).astype(int)  # alternating bands: many runs of each value
    assert RAD(local=False, n_components=3, random_state=0)._determined_rules(frame) == []
    frame = weights_table()
    frame.loc[5, 'low'] = 1 - frame.loc[5, 'low']  # one row breaks it
    assert RAD(local=False, n_components=3, random_state=0)._determined_rules(frame) == []


def test_a_table_sorted_by_the_child_is_probed_across_its_rows():
    frame = weights_table(n=3000).sort_values('low', kind='stable').reset_index(drop=True)  # 2,000+ rows of one value
    rules = RAD(local=False, n_components=3, random_state=0)._determined_rules(frame)
    assert [(r.child, r.parent) for r in rules] == [(3, 0)]
    frame.loc[2900, 'low'] = 1 - frame.loc[2900, 'low']  # one late row breaks it: no rule, however the rows are sorted
    assert RAD(local=False, n_components=3, random_state=0)._determined_rules(frame) == []


def test_discrete_reads_no_rule_by_intervals_and_a_bad_setting_is_named(by_intervals):
    fit, held, _ = by_intervals
    est = RAD(local=False, shape='columns', n_components=3, determined='discrete', random_state=0).fit(fit)
    assert est.determined_ == {}  # the discrete rules alone: `low` in the mixture
    assert np.isfinite(est.marginal(['low']).logpdf(np.array([[0.0], [1.0]]))).all()
    with pytest.raises(ValueError, match="'auto', 'discrete' or None"): RAD(determined='intervals').fit(fit)


def test_two_parents_in_one_gaussian_block_are_named_where_both_must_be_summed():
    from radbook.determined import IntervalRule
    from radbook.gaussian import GaussianFrames
    frames = GaussianFrames([0.4, 0.6], [[0.0, 1.0], [1.0, -1.0]], np.array([[[1.0, 0.6], [0.6, 2.0]], [[0.5, -0.2], [-0.2, 0.8]]]),
                            [0, 1], 2, center=[0.0, 0.0], scale=[1.0, 1.0])
    rule = lambda child, parent: IntervalRule(child, parent, np.array([-3.0, 0.5]), np.array([0.0, 3.0]), np.array([0.0, 1.0]),
                                              0.01, np.array([0.0, 1.0]), np.array([0.5, 0.5]))
    d = DeterminedDensity(frames, [0, 1], [rule(2, 0), rule(3, 1)], ["column 'a'", "column 'b'", "column 'ka'", "column 'kb'"])
    assert np.isfinite(d.marginal([2]).logpdf(np.array([[1.0]]))).all()  # one parent summed: its normal given the other
    with pytest.raises(ValueError, match="column 'ka' is fixed by intervals.*rectangle.*determined='discrete'"):
        d.marginal([2, 3]).logpdf(np.array([[1.0, 0.0]]))
    with pytest.raises(ValueError, match="rectangle"): d.logpdf(np.array([[np.nan, np.nan, 1.0, 0.0]]))

"""The benchmark's peers are scored as densities: their smoothed frequencies of a discrete column sum to one over every
value it can take, on an integer column too (`benchmarks/peers.py`, `_frequencies`, `_lattice`, `_unseen_shares`)."""
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent.parent / 'benchmarks'))
import peers  # noqa: E402


def test_frequencies_sum_to_one_over_the_integers():
    a = np.array([0.0, 2.0, 2.0, 5.0, np.nan])
    grid = np.arange(-60.0, 66.0)  # the tails beyond hold under 2**-60
    assert abs(np.exp(peers._frequencies(a, grid, lattice=True)).sum() - 1) < 1e-12
    # without the lattice every unseen integer took the whole unseen share: a sum far above one
    assert np.exp(peers._frequencies(a, grid)).sum() > 10  # 123 unseen integers at 1/8 each
    p = np.exp(peers._frequencies(a, np.array([2.0, 3.0, np.nan]), lattice=True))
    assert np.allclose(p, [3 / 8, (1 / 8) * 0.5 / 3, 1.0])  # add-one: (2 + 1) / (4 + 3 + 1); 3 is one of 3 gaps inside


def test_a_category_keeps_one_unseen_value():
    a, b = np.array([0.0, 1.0, 1.0]), np.array([0.0, 1.0, 2.0])  # codes; 2: the one code of every label never seen
    assert abs(np.exp(peers._frequencies(a, b)).sum() - 1) < 1e-12


def test_lattice_columns():
    frame = pd.DataFrame({'count': [1, 2, 3, 2, 1, 2, 3, 1], 'whole': [1.0, 4.0, 4.0, np.nan, 1.0, 4.0, 4.0, 1.0],
                          'ratio': [0.5, 1.0] * 4, 'label': pd.Categorical(list('abababab')),
                          'flag': [True, False, True, True] * 2, 'size': [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]})
    A, _, discrete = peers._encode(frame, frame)
    assert discrete.tolist() == [True, True, True, True, True, False]  # 8 values in 8 rows: continuous
    assert peers._lattice(frame, A, discrete).tolist() == [True, True, False, False, False, False]
    assert peers._lattice(A, A, discrete).tolist() == [True, True, False, True, True, False]  # an array: numbers alone


def test_independent_peer_is_a_density_on_a_discrete_table():
    fit = pd.DataFrame({'count': [0, 2, 2, 5, 3, 3], 'label': pd.Categorical(list('aabbab'))})
    grid = pd.DataFrame([(x, c) for x in range(-40, 46) for c in 'abz'], columns=['count', 'label'])
    grid['label'] = pd.Categorical(grid['label'])  # 'z': a label the fit never saw
    total = np.exp(peers.peer_scores('independent', fit, grid)).sum()
    assert abs(total - 1) < 1e-9


def test_peers_read_discrete_columns_as_rad_does():
    # RAD's rule (`_few_values`): at most 16 values, each seen twice on average; 13 values in 21 rows is continuous
    # (spector's TUCE on two folds), as is every column of a 16-row fold with 16 values each (copper's)
    from radbook.dictionaries import is_discrete
    from radbook.rad import RAD
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({'score': rng.permutation(np.r_[np.arange(13), np.arange(8)]).astype(float),  # 13 values, 21 rows
                          'grade': rng.integers(0, 3, 21).astype(float), 'size': rng.normal(size=21)})
    A, _, discrete = peers._encode(frame, frame)
    assert discrete.tolist() == [False, True, False]
    fitted = RAD(2, shape=None, local=False, random_state=0).fit(frame)
    assert [is_discrete(d) for d in fitted.dictionaries_] == discrete.tolist()

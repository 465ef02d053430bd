"""Fig. 1's drawing (`radbook.experiments.plot_results`) on a small synthetic results table in results.csv's format:
what a reader relies on (shared scales, labelled ticks that bracket the data, the bands and the missing lines
explained, text readable at column width), checked on the figure's objects rather than its pixels; and
tools/make_figures.py redrawing it with its recipe recorded."""
import subprocess
import sys
from pathlib import Path

import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.text import Text
from matplotlib.ticker import LogLocator, NullFormatter

from radbook.experiments import CONTINUOUS_ONLY, RESULT_FIELDS, plot_results, read_csv, write_csv

ROOT = Path(__file__).resolve().parents[1]


def synthetic_rows(n_trials=2, sizes=(500, 2000, 8000)):
    "Every field of a results row; the Gaussian mixtures skip mixed_features as in a real run; one value far below the rest."
    rng = np.random.default_rng(0)
    base = {'RAD*': .035, 'RAD': .06, 'JUPAD': .035, 'GMM': .45, 'GMM-Diag': .4}
    rows = []
    for family in ('gaussian', 'laplacian', 'mixed', 'mixed_features'):
        for K in sizes:
            for method, b in base.items():
                if family == 'mixed_features' and method in CONTINUOUS_ONLY: continue
                for trial in range(n_trials):
                    v = b * (K / 500) ** -0.5 * np.exp(rng.normal(0, .15))
                    if family == 'laplacian' and method == 'JUPAD' and K == sizes[-1]: v = 0.0047  # below 0.005
                    rows.append(dict(family=family, K=K, trial=trial, method=method, jsd=v, jsd_se=1e-3, fit_seconds=1.0,
                                     heldout_loglik=-3.0, truth_loglik=-2.9, n_components=13))
    return rows


@pytest.fixture
def fig(tmp_path):
    path = tmp_path / 'results.csv'
    write_csv(synthetic_rows(), path)  # through the file, as tools/make_figures.py reads it
    assert path.read_text().splitlines()[0] == ','.join(RESULT_FIELDS)
    fig = plot_results(read_csv(path))
    yield fig
    plt.close(fig)


def panels(fig):
    return [ax for ax in fig.axes if ax.get_visible() and ax.axison]


def test_two_by_two_at_column_width_with_readable_text(fig):
    axes = panels(fig)
    assert len(axes) == 4
    assert sorted((ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start) for ax in axes) == \
        [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert fig.get_size_inches()[0] <= 7.5
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]
    assert sizes and min(sizes) >= 9


def test_y_shared_within_each_row(fig):
    axes = panels(fig)
    rows = {}
    for ax in axes: rows.setdefault(ax.get_subplotspec().rowspan.start, []).append(ax)
    for row in rows.values():
        for ax in row[1:]:
            assert row[0].get_shared_y_axes().joined(row[0], ax)
            assert ax.get_ylim() == row[0].get_ylim()


def test_same_tick_kinds_on_every_panel_and_no_minor_labels(fig):
    axes = panels(fig)
    for axis in ('xaxis', 'yaxis'):
        for which in ('major', 'minor'):
            kinds = {type(getattr(getattr(ax, axis), f'get_{which}_locator')()) for ax in axes}
            assert len(kinds) == 1, (axis, which, kinds)
            formatters = {type(getattr(getattr(ax, axis), f'get_{which}_formatter')()) for ax in axes}
            assert len(formatters) == 1, (axis, which, formatters)
        assert all(isinstance(getattr(ax, axis).get_minor_formatter(), NullFormatter) for ax in axes)
    assert all(isinstance(ax.yaxis.get_major_locator(), LogLocator) for ax in axes)


def test_y_limits_are_labelled_ticks(fig):
    "The lowest and highest labelled ticks bracket the data: no point below the lowest labelled tick."
    fig.canvas.draw()
    for ax in panels(fig):
        lo, hi = ax.get_ylim()
        ticks = [t for t in ax.yaxis.get_major_locator().tick_values(lo, hi) if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
        labelled = [t for t in ticks if ax.yaxis.get_major_formatter()(t).strip()]
        assert np.isclose(min(labelled), lo) and np.isclose(max(labelled), hi)
        if ax.get_subplotspec().colspan.start == 0:  # the left column shows them
            shown = [label.get_text() for label in ax.get_yticklabels() if label.get_visible() and label.get_text()]
            assert len(shown) >= 3
    assert panels(fig)[0].get_ylim()[0] == pytest.approx(0.002)  # 0.0047 lies above the tick 0.002, not below 0.005


def test_every_plotted_point_within_the_axes(fig):
    n_points = 0
    for ax in panels(fig):
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        points = [line.get_xydata() for line in ax.get_lines()]
        points += [p.vertices for c in ax.collections if isinstance(c, PolyCollection) for p in c.get_paths()]
        for xy in points:
            n_points += len(xy)
            assert np.all((xy[:, 0] >= x0 * (1 - 1e-9)) & (xy[:, 0] <= x1 * (1 + 1e-9)))
            assert np.all((xy[:, 1] >= y0 * (1 - 1e-9)) & (xy[:, 1] <= y1 * (1 + 1e-9)))
    assert n_points > 0


def test_bands_and_missing_lines_explained(fig):
    legend = ' '.join(t.get_text() for lg in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
                      for t in lg.get_texts())
    assert 'band' in legend and 'min' in legend and 'max' in legend and '2 trials' in legend
    for method in ('RAD*', 'RAD', 'JUPAD', 'GMM', 'GMM-Diag'): assert method in legend.split()
    mixed_features = next(ax for ax in panels(fig) if ax.get_title() == 'mixed_features')
    note = ' '.join(t.get_text() for t in mixed_features.texts)
    assert 'GMM' in note and 'GMM-Diag' in note and 'not run' in note and 'discrete' in note
    assert all(not ax.texts for ax in panels(fig) if ax is not mixed_features)


def test_one_family_and_one_trial():
    rows = [r for r in synthetic_rows(n_trials=1) if r['family'] == 'mixed']
    fig = plot_results(rows)
    try:
        assert len(panels(fig)) == 1 and fig.get_size_inches()[0] <= 3.6
        assert 'no band' in ' '.join(t.get_text() for t in fig.legends[0].get_texts())
    finally:
        plt.close(fig)


def test_make_figures_redraws_fig1_with_its_recipe(tmp_path):
    results, out = tmp_path / 'results.csv', tmp_path / 'fig1.png'
    write_csv(synthetic_rows(), results)
    res = subprocess.run([sys.executable, str(ROOT / 'tools' / 'make_figures.py'), 'fig1', '--results', str(results),
                          '--out', str(out)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    from PIL import Image
    with Image.open(out) as im:
        assert im.size[0] == 1050 and 'plot_results' in im.info['Source'] and '108 rows' in im.info['Source']
    assert out.stat().st_size < 300_000

"""The radbook-experiment command: bad input gets a one-line message and exit status 2, never a traceback."""
import subprocess
import sys

import pytest

from radbook.experiments import QUICK, ExperimentConfig, tasks


def run_cli(*args, cwd=None):
    code = "import sys; from radbook.experiments import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, '-c', code, *args, '--no-progress'], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


@pytest.mark.parametrize('args, message', [
    (['--families', 'cauchy'], "Unknown family 'cauchy'"),
    (['--methods', 'RAD*', 'NMF'], "Unknown method 'NMF'"),
    (['--full', '--sizes', '50000'], 'larger than the 40000 samples available'),
    (['--jobs', '0'], '--jobs must be at least 1'),
    (['--trials', '0'], 'n_trials must be at least 1'),
])
def test_bad_arguments(args, message):
    res = run_cli(*args)
    assert res.returncode == 2
    assert message in res.stderr and 'Traceback' not in res.stderr


def test_out_is_a_file(tmp_path):
    path = tmp_path / 'taken'; path.write_text('x')
    res = run_cli('--out', str(path), '--families', 'mixed', '--methods', 'RAD*', '--sizes', '500', '--trials', '1')
    assert res.returncode == 2 and 'is not a directory' in res.stderr and 'Traceback' not in res.stderr


def test_tiny_run_end_to_end(tmp_path):
    res = run_cli('--out', str(tmp_path), '--families', 'laplacian', '--methods', 'RAD*', 'GMM-Diag',
                  '--sizes', '500', '--trials', '1')
    assert res.returncode == 0, res.stderr
    assert 'RAD*' in res.stdout and 'claims' in res.stdout
    assert (tmp_path / 'results.csv').read_text().count('\n') == 3  # header + 2 rows
    assert (tmp_path / 'fig1.png').stat().st_size > 1000


def test_mixed_features_skips_continuous_only_methods():
    cfg = ExperimentConfig(families=('mixed_features', 'mixed'), sizes=(500,), n_trials=1, methods=('RAD', 'GMM', 'KDE'))
    assert {(f, m) for f, _, _, m in tasks(cfg)} == {('mixed_features', 'RAD'), ('mixed', 'RAD'), ('mixed', 'GMM'), ('mixed', 'KDE')}


def test_quick_preset_is_valid():
    QUICK.validate()
    assert set(QUICK.families) == {'gaussian', 'laplacian', 'mixed', 'mixed_features'}


def test_cache_key_follows_the_methods_version_and_the_settings(monkeypatch, tmp_path):
    from dataclasses import replace
    from radbook.experiments import METHODS, METHOD_VERSIONS, _cache_file
    rad, gmm = ('gaussian', 500, 0, 'RAD'), ('gaussian', 500, 0, 'GMM')
    before = _cache_file(tmp_path, rad, QUICK), _cache_file(tmp_path, gmm, QUICK)
    monkeypatch.setitem(METHOD_VERSIONS, 'RAD', METHOD_VERSIONS['RAD'] + 1)
    assert _cache_file(tmp_path, rad, QUICK) != before[0]  # RAD's old results are not reused
    assert _cache_file(tmp_path, gmm, QUICK) == before[1]  # the Gaussian mixtures' still are
    assert _cache_file(tmp_path, gmm, replace(QUICK, n_jsd_samples=5000)) != before[1]
    assert set(METHOD_VERSIONS) == set(METHODS)

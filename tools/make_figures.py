"""Regenerate the README's figures from their sources, and say how each was made.

    python tools/make_figures.py                  # list the figures: what each shows and how the committed PNG was made
    python tools/make_figures.py fig1 --results radbook-results/results.csv   # redraw docs/fig1.png from a results table
    python tools/make_figures.py fig1 --results results.csv --made-by 'radbook-experiment --full --jobs 2'
    python tools/make_figures.py fig1 --quick     # run `radbook-experiment --quick` (about a minute on 2 cores), then draw
    python tools/make_figures.py peers --json peers.json more.json           # redraw docs/peers.png from peers.py's rows
    python tools/make_figures.py explorer         # the browser test's screenshot (needs chromium) as docs/explorer.png

The figures can drift from their sources: `docs/fig1.png` when `radbook.experiments.plot_results` or the experiment's
results change, `docs/peers.png` when `benchmarks/peers.py`'s picture or its saved rows change, `docs/explorer.png`
when the widget changes. Each figure written here records its recipe in the PNG's `Source` text chunk (the command, the
input's size and SHA-256, the radbook version), which the listing prints; a figure without one predates this script.

Inputs that are not committed (a results table, peers' JSON lines) stay where they are: keep them beside the run, the
recipe names them and their hash. `--out` writes elsewhere than `docs/` (a check, or a draft).
"""
import argparse
import hashlib
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's radbook, not whichever is installed

FIGURES = {
    'fig1': dict(path='docs/fig1.png', shows="the paper's Fig. 1: JSD against K on the four families",
                 recipe="radbook.experiments.plot_results on a results.csv written by radbook-experiment "
                        "(`make_figures.py fig1 --results FILE` or `--quick`)"),
    'peers': dict(path='docs/peers.png', shows='held-out log-likelihood against fit time on the peers\' tables',
                  recipe="benchmarks/peers.py --from-json ROWS.json ... --plot docs/peers.png (`make_figures.py peers --json ...`)"),
    'explorer': dict(path='docs/explorer.png', shows='the widget explorer in a browser (Voila, chromium)',
                     recipe="the screenshot tests/test_explorer_browser.py takes on the paper family after moving the "
                            "projections slider (`make_figures.py explorer`)"),
}
DPI = 150  # fig1: 7 in wide, so 1,050 px; about 130 kB


def sha256(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:12]


def radbook_version() -> str:
    "radbook's version and this checkout's commit (marked when radbook/, benchmarks/ or tools/ have uncommitted changes)."
    import radbook
    git = lambda *a: subprocess.run(['git', *a], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    commit = git('rev-parse', '--short', 'HEAD') or 'unknown commit'
    dirty = ' with uncommitted changes' if git('status', '--porcelain', '--', 'radbook', 'benchmarks', 'tools') else ''
    return f"{getattr(radbook, '__version__', '?')} at {commit}{dirty}"


def source_of(path) -> str | None:
    "The recipe recorded in a PNG's `Source` text chunk, if any."
    from PIL import Image
    with Image.open(path) as im:
        return im.info.get('Source')


def stamp(path, source: str):
    "Record `source` in the PNG at `path` (a `Source` text chunk; the pixels are unchanged)."
    from PIL import Image
    from PIL.PngImagePlugin import PngInfo
    with Image.open(path) as im:
        im.load()
        info = PngInfo()
        for k, v in im.info.items():
            if isinstance(v, str) and k != 'Source': info.add_text(k, v)
        info.add_text('Source', source)
        dpi = im.info.get('dpi')
        im.save(path, pnginfo=info, optimize=True, **({'dpi': dpi} if dpi else {}))


def list_figures() -> int:
    for name, f in FIGURES.items():
        path = ROOT / f['path']
        print(f"{f['path']}: {f['shows']}")
        if not path.exists():
            print("    missing")
        else:
            from PIL import Image
            with Image.open(path) as im: size = im.size
            src = source_of(path)
            print(f"    {size[0]}x{size[1]} px, {path.stat().st_size / 1000:.0f} kB")
            print(f"    made by: {src}" if src else "    no recorded source (made before tools/make_figures.py)")
        print(f"    recipe: {f['recipe']}")
    return 0


def fig1(args) -> int:
    from radbook.experiments import format_claims, main as experiment, plot_results, read_csv
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    how = ''
    if args.quick:
        work = Path(args.work)
        argv = ['--quick', '--out', str(work), '--no-progress'] + (['--jobs', str(args.jobs)] if args.jobs else [])
        print(f"radbook-experiment {' '.join(argv)}", flush=True)
        start = time.perf_counter()
        code = experiment(argv)
        if code: return code
        how = f"radbook-experiment {' '.join(argv)} ({time.perf_counter() - start:.0f} s wall); "
        results = work / 'results.csv'
    else:
        results = Path(args.results)
        if args.made_by: how = f"{args.made_by}; "
    rows = read_csv(results)
    families = sorted({r['family'] for r in rows}); sizes = sorted({r['K'] for r in rows})
    trials = sorted({r['trial'] for r in rows}); methods = sorted({r['method'] for r in rows})
    out = Path(args.out or ROOT / FIGURES['fig1']['path'])
    fig = plot_results(rows)
    source = (f"{how}tools/make_figures.py fig1 --results {results} ({len(rows)} rows, sha256 {sha256(results)}: "
              f"{len(families)} families, K={','.join(map(str, sizes))}, {len(trials)} trials, {' '.join(methods)}); "
              f"radbook {radbook_version()}, radbook.experiments.plot_results, dpi {DPI}")
    fig.savefig(out, dpi=DPI, metadata={'Source': source})
    plt.close(fig)
    print(format_claims(rows))
    print(f"wrote {out} ({out.stat().st_size / 1000:.0f} kB)\n  {source}")
    return 0


def peers(args) -> int:
    out = Path(args.out or ROOT / FIGURES['peers']['path'])
    cmd = [sys.executable, str(ROOT / 'benchmarks' / 'peers.py'), '--from-json', *args.json, '--plot', str(out)]
    res = subprocess.run(cmd, cwd=ROOT)
    if res.returncode: return res.returncode
    n = sum(1 for f in args.json for line in open(f) if line.strip())
    inputs = ', '.join(f"{f} (sha256 {sha256(f)})" for f in args.json)
    stamp(out, f"benchmarks/peers.py --from-json {' '.join(args.json)} --plot {out.name}: {n} rows from {inputs}; "
               f"radbook {radbook_version()}")
    print(f"wrote {out} ({out.stat().st_size / 1000:.0f} kB)")
    return 0


def explorer(args) -> int:
    if shutil.which('chromium') is None:
        print("explorer: Debian's chromium is not installed (.ci/browser-setup.sh); the screenshot needs it.")
        return 1
    out = Path(args.out or ROOT / FIGURES['explorer']['path'])
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, '-m', 'pytest', 'tests/test_explorer_browser.py', '-k', 'family', '-q',
               '-p', 'no:cacheprovider', f'--basetemp={tmp}']
        res = subprocess.run(cmd, cwd=ROOT)
        shots = sorted(Path(tmp).rglob('explorer.png'))
        if res.returncode or not shots:
            print("explorer: the browser test failed or took no screenshot; nothing written.")
            return res.returncode or 1
        shutil.copyfile(shots[0], out)
    stamp(out, f"tests/test_explorer_browser.py[family] screenshot of .radbook-explorer (viewport 1200x1100, after two "
               f"ArrowRight on the projections slider); radbook {radbook_version()}")
    print(f"wrote {out} ({out.stat().st_size / 1000:.0f} kB)")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='figure')
    f = sub.add_parser('fig1', help=FIGURES['fig1']['shows'])
    src = f.add_mutually_exclusive_group(required=True)
    src.add_argument('--results', help='a results.csv written by radbook-experiment (quick, full or any subset)')
    src.add_argument('--quick', action='store_true', help='run radbook-experiment --quick into --work first')
    f.add_argument('--made-by', help="how --results was made, recorded in the figure (e.g. 'radbook-experiment --full --jobs 2')")
    f.add_argument('--work', default='radbook-results-quick', help='the quick run\'s output directory (its cache resumes)')
    f.add_argument('--jobs', type=int, help="radbook-experiment's --jobs (default: every core)")
    f.add_argument('--out', help=f"default: {FIGURES['fig1']['path']}")
    q = sub.add_parser('peers', help=FIGURES['peers']['shows'])
    q.add_argument('--json', nargs='+', required=True, help='JSON lines written by benchmarks/peers.py (later files win)')
    q.add_argument('--out', help=f"default: {FIGURES['peers']['path']}")
    e = sub.add_parser('explorer', help=FIGURES['explorer']['shows'])
    e.add_argument('--out', help=f"default: {FIGURES['explorer']['path']}")
    args = p.parse_args(argv)
    if args.figure is None: return list_figures()
    return {'fig1': fig1, 'peers': peers, 'explorer': explorer}[args.figure](args)


if __name__ == '__main__':
    sys.exit(main())

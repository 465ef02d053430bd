"""End to end: Voila serves nbs/08_explorer.ipynb (a paper family), and a notebook with the explorer on the Palmer
penguins (a real table, missing entries and all); Debian's chromium (driven by Playwright) moves the projections
slider with the keyboard, and the score text (JSD, or held-out log-likelihood) and the figure must change.

Needs the apt package `chromium` (`.ci/browser-setup.sh` installs it); Playwright never downloads a browser here.
Every request to a host other than the loopback is aborted, so the test works offline and leaks nothing.
"""
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / 'nbs' / '08_explorer.ipynb'
CHROMIUM = shutil.which('chromium')
CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
                 '--disable-sync', '--no-first-run']
LOOPBACK = {'127.0.0.1', 'localhost', '::1'}
START_TIMEOUT = 60      # s for Voila to listen
PAGE_TIMEOUT = 90_000   # ms for Voila to run the notebook and send the page, and for the app to render
UPDATE_TIMEOUT = 60_000  # ms for one update (a fit and a redraw) to reach the page

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed: run .ci/browser-setup.sh "
                                                         "(apt-get install chromium); Playwright's own browsers are never used")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def wait_for_port(port, proc, log, timeout=START_TIMEOUT):
    "Wait until something accepts connections on the port (a socket connect: Voila answers HTTP only after running the notebook)."
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"Voila exited with status {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with socket.create_connection(('127.0.0.1', port), timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"Voila did not listen on port {port} within {timeout} s:\n{log.read_text()[-3000:]}")


def table_notebook(path) -> Path:
    "A one-cell notebook that shows the explorer on the Palmer penguins as they ship."
    import nbformat
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import palmerpenguins\nfrom radbook.explorer import explorer_app\n"
                                          "explorer_app(data=palmerpenguins.load_penguins(), n_projections=6)")]
    nb.metadata['kernelspec'] = {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}
    nbformat.write(nb, path)
    return path


@pytest.fixture(params=['family', 'table'])
def voila(request, tmp_path):
    "A Voila server on 127.0.0.1 serving the explorer (08 on a paper family, or on a real table); yields its URL, the log and the score's text."
    notebook = NOTEBOOK if request.param == 'family' else table_notebook(tmp_path / 'penguins.ipynb')
    port, log = free_port(), tmp_path / 'voila.log'
    cmd = [sys.executable, '-m', 'voila', str(notebook), f'--port={port}', '--Voila.ip=127.0.0.1',
           '--Voila.port_retries=0', '--no-browser']
    with open(log, 'w') as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_port(port, proc, log)
        yield f'http://127.0.0.1:{port}/', log, 'JSD(truth, RAD) =' if request.param == 'family' else 'held-out log-likelihood ='

    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # Voila and the kernel it started, nothing else
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL); proc.wait()


def local_only(route):
    "Let loopback, data: and blob: requests through; abort everything else."
    url = route.request.url
    if url.startswith(('data:', 'blob:')) or urlparse(url).hostname in LOOPBACK:
        route.continue_()
    else:
        route.abort()


def test_projections_slider_updates_score_and_plot(voila, tmp_path):
    from playwright.sync_api import sync_playwright
    url, log, score = voila
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={'width': 1200, 'height': 1100})
            context.route('**/*', local_only)
            page = context.new_page()
            page.set_default_timeout(PAGE_TIMEOUT)
            page.goto(url, timeout=PAGE_TIMEOUT)
            summary = page.locator('.radbook-summary')
            figure = page.locator('img.radbook-figure')
            readout = page.locator('.radbook-n_projections .widget-readout')
            summary.filter(has_text=score).wait_for(timeout=PAGE_TIMEOUT)
            page.wait_for_function("document.querySelector('img.radbook-figure')?.naturalWidth > 0", timeout=PAGE_TIMEOUT)
            text0, src0, m0 = summary.inner_text(), figure.get_attribute('src'), int(readout.inner_text())
            assert f'M={m0},' in text0

            handle = page.locator('.radbook-n_projections .noUi-handle')
            handle.focus()
            page.keyboard.press('ArrowRight')
            page.keyboard.press('ArrowRight')
            page.wait_for_function(
                """([m, text, src]) => {
                    const s = document.querySelector('.radbook-summary'), img = document.querySelector('img.radbook-figure');
                    return s && img && s.innerText.includes('M=' + m + ',') && s.innerText !== text
                           && img.getAttribute('src') !== src && img.naturalWidth > 0;
                }""", arg=[m0 + 2, text0, src0], timeout=UPDATE_TIMEOUT)

            assert int(readout.inner_text()) == m0 + 2
            text1 = summary.inner_text()
            assert text1 != text0 and f'M={m0 + 2},' in text1 and score in text1
            assert figure.get_attribute('src') != src0
            assert page.locator('.radbook-message').inner_text().strip() == ''
            shot = tmp_path / 'explorer.png'
            page.locator('.radbook-explorer').screenshot(path=str(shot))
            assert shot.stat().st_size > 10_000
        finally:
            browser.close()

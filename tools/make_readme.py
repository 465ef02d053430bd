"""Write README.md from nbs/index.ipynb.

Quarto cannot be installed here, so `nbdev_readme` cannot run. This does the same job offline: nbdev's own
notebook processors (drop hidden and exported cells, directives and magics), then nbconvert's MarkdownExporter.

    python tools/make_readme.py          # rewrite README.md
    python tools/make_readme.py --check  # exit 1 if README.md is stale
"""
import json
import sys
from pathlib import Path

import nbformat
from nbconvert import MarkdownExporter
from nbdev.process import NBProcessor
from nbdev.processors import clean_magics, hide_, hide_line, rm_export, rm_header_dash, strip_hidden_metadata

ROOT = Path(__file__).resolve().parents[1]
HEADER = "<!-- Generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, not this file. -->\n\n"


def render(path=ROOT / 'nbs' / 'index.ipynb') -> str:
    "The README text for the notebook at `path`."
    proc = NBProcessor(path, procs=[hide_, rm_export, clean_magics, hide_line, rm_header_dash, strip_hidden_metadata])
    proc.process()
    nb = json.loads(json.dumps(proc.nb, default=str))
    nb.setdefault('metadata', {})['language_info'] = {'name': 'python'}
    for cell in nb['cells']:
        for key in [k for k in cell if k.endswith('_')]: del cell[key]
        cell.setdefault('metadata', {})
        if cell['cell_type'] == 'code':
            cell.setdefault('outputs', []); cell.setdefault('execution_count', None)
    body, _ = MarkdownExporter().from_notebook_node(nbformat.from_dict(nb))
    return HEADER + body.strip() + '\n'


def main(argv):
    text, readme = render(), ROOT / 'README.md'
    if '--check' in argv:
        if not readme.exists() or readme.read_text(encoding='utf-8') != text:
            print("README.md is stale: run `python tools/make_readme.py` and commit it.")
            return 1
        print("README.md is current.")
        return 0
    readme.write_text(text, encoding='utf-8')
    print(f"wrote {readme}")
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))

"""Screenshots of dashboard pages for the README, taken in headless Chromium (tests/browser.py).

    .venv/bin/gpu-finops sweep data/sweep-tiny.toml --out sweep-out
    .venv/bin/python -m tests.make_screenshots --db sweep-out/gpu-finops.duckdb \\
        --page "scenarios?run=tiny-gang-v1.37_LeastAllocated" --out docs/images/scenarios.png

The page must draw without an exception and with at least ``--min-charts`` charts, or no
file is written.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from dashboards.serve import serve
from tests.browser import _find_chromium, _free_port, _stop, _wait_healthy, open_pages_in_chromium


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--db", required=True)
    parser.add_argument("--page", required=True, help="URL path and query, e.g. scenarios?run=RUN_ID")
    parser.add_argument("--out", required=True, help="PNG to write")
    parser.add_argument("--size", default="1366x1000", help="viewport WIDTHxHEIGHT")
    parser.add_argument("--min-charts", type=int, default=1)
    parser.add_argument("--budgets", help="budgets file the dashboard reads (the Budgets page)")
    args = parser.parse_args(argv)
    chromium = _find_chromium()
    if chromium is None:
        print("Chromium is not installed (apt-get install -y chromium)", file=sys.stderr)
        return 2
    width, height = (int(v) for v in args.size.split("x"))
    port = _free_port()
    server = serve(Path(args.db), port=port, host="127.0.0.1", block=False,
                   budgets=Path(args.budgets) if args.budgets else None)
    assert server is not None
    with tempfile.TemporaryDirectory(prefix="screenshot-") as folder:
        try:
            _wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server)
            shot = Path(folder) / "page.png"
            state = open_pages_in_chromium(chromium, [(f"http://127.0.0.1:{port}/{args.page}", shot)],
                                           Path(folder) / "profile", args.min_charts, (width, height))[0]
        finally:
            _stop(server)
        if state.get("exception") or state.get("traceback") or state.get("charts", 0) < args.min_charts:
            print(f"the page did not draw: {({k: v for k, v in state.items() if k != 'dom'})}", file=sys.stderr)
            return 1
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, args.out)
    print(f"{args.out}: {state.get('title')!r}, {state.get('charts')} charts")
    return 0


if __name__ == "__main__":
    sys.exit(main())

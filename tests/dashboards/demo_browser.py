"""Every page of the dashboard on the demo's database, loaded once per width in headless
Chromium (one server): what the session fixture ``demo_pages`` (conftest.py) holds for the
reconciliation tests and the layout test."""

from __future__ import annotations

from pathlib import Path

# URL path -> charts to wait for
DEMO_PAGES = {"": 5, "teams": 5, "idle": 5, "queues": 2, "pending": 2, "preemption": 5,
              "scenarios": 3, "workload": 2, "sql": 1, "budgets": 0, "advice": 0}
DEMO_WIDTHS = (1366, 1920)


def browse_demo_pages(demo_db: Path, folder: Path) -> tuple[str, dict[tuple[int, str], dict]]:
    """The run shown and what was drawn per (width, path), with its layout and a screenshot in
    ``folder``."""
    from dashboards import data
    from dashboards.serve import serve
    from tests.browser import (
        _free_port,
        _stop,
        _wait_healthy,
        chromium_or_skip,
        open_pages_in_chromium,
    )

    chromium = chromium_or_skip()
    port = _free_port()
    server = serve(demo_db, port=port, host="127.0.0.1", block=False)
    assert server is not None
    found = {}
    try:
        _wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server)
        run = data.list_runs(data.connect_read_only(demo_db))["run_id"].iloc[0]
        for width in DEMO_WIDTHS:
            urls = [(f"http://127.0.0.1:{port}/{path}?run={run}", folder / f"{width}-{path or 'overview'}.png")
                    for path in DEMO_PAGES]
            states = open_pages_in_chromium(chromium, urls, folder / f"profile-{width}", list(DEMO_PAGES.values()),
                                            viewport=(width, 1400))
            for path, state in zip(DEMO_PAGES, states, strict=True):
                found[(width, path)] = state
    finally:
        _stop(server)
    return run, found

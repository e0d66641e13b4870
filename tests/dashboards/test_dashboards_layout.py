"""Every page of the dashboard on the demo's database, in headless Chromium at 1366 and 1920 px
wide: no chart drawn zero pixels wide, no text of a chart (legend, axis, label) cut at the edge
of its drawing, no metric label cut short. Sizes are measured in the page through DevTools
(tests/browser.py LAYOUT)."""

from __future__ import annotations

import pytest

from dashboards import data
from dashboards.serve import serve
from tests.browser import _free_port, _stop, _wait_healthy, chromium_or_skip, open_pages_in_chromium

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# URL path -> charts to wait for
PAGES = {"": 5, "teams": 5, "idle": 5, "queues": 2, "pending": 2, "preemption": 2,
         "scenarios": 3, "workload": 2, "sql": 1, "budgets": 0, "advice": 0}
WIDTHS = (1366, 1920)


@pytest.fixture(scope="module")
def layouts(demo_db, tmp_path_factory):
    chromium = chromium_or_skip()
    folder = tmp_path_factory.mktemp("layout")
    port = _free_port()
    server = serve(demo_db, port=port, host="127.0.0.1", block=False)
    assert server is not None
    found = {}
    try:
        _wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server)
        run = data.list_runs(data.connect_read_only(demo_db))["run_id"].iloc[0]
        for width in WIDTHS:
            urls = [(f"http://127.0.0.1:{port}/{path}?run={run}", folder / f"{width}-{path or 'overview'}.png")
                    for path in PAGES]
            states = open_pages_in_chromium(chromium, urls, folder / f"profile-{width}", list(PAGES.values()),
                                            viewport=(width, 1400))
            for path, state in zip(PAGES, states, strict=True):
                found[(width, path)] = state
    finally:
        _stop(server)
    return found


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", list(PAGES))
def test_charts_are_drawn_whole(layouts, path, width):
    state = layouts[(width, path)]
    layout = state.get("layout", {})
    charts = layout.get("charts", [])
    assert len(charts) >= PAGES[path], (path, width, state.get("charts"))
    for chart in charts:
        assert chart["width"] >= 50 and chart["svgWidth"] >= 50, (path, width, chart)
        assert not chart["cut"], (path, width, chart)
    cut_labels = [m["text"] for m in layout.get("metrics", []) if m["cut"]]
    assert not cut_labels, (path, width, cut_labels)

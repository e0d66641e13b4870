"""Every page of the dashboard on the demo's database, in headless Chromium at 1366 and 1920 px
wide: no chart drawn zero pixels wide, no text of a chart (legend, axis, label) cut at the edge
of its drawing, no metric label cut short. Sizes are measured in the page through DevTools
(tests/browser.py LAYOUT)."""

from __future__ import annotations

import pytest
from demo_browser import DEMO_PAGES, DEMO_WIDTHS

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


@pytest.fixture(scope="module")
def layouts(demo_pages):
    """Every page at both widths: the session's one browser pass (demo_browser.py)."""
    return demo_pages[1]


@pytest.mark.parametrize("width", DEMO_WIDTHS)
@pytest.mark.parametrize("path", list(DEMO_PAGES))
def test_charts_are_drawn_whole(layouts, path, width):
    state = layouts[(width, path)]
    layout = state.get("layout", {})
    charts = layout.get("charts", [])
    assert len(charts) >= DEMO_PAGES[path], (path, width, state.get("charts"))
    for chart in charts:
        assert chart["width"] >= 50 and chart["svgWidth"] >= 50, (path, width, chart)
        assert not chart["cut"], (path, width, chart)
    cut_labels = [m["text"] for m in layout.get("metrics", []) if m["cut"]]
    assert not cut_labels, (path, width, cut_labels)

"""Every page of the dashboard on the demo's own database, in headless Chromium: what a reader
sees reconciles. Each page's "Adds up:" line adds its parts to its headline (to the cent, the
tenth of a GPU-hour or the workload), the headline shown is the data layer's figure for the
window the page states, and no internal name (``__idle__``, a snake_case column) is shown."""

from __future__ import annotations

import re

import pytest

from dashboards import data, ui

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

PAGES = ("", "teams", "idle", "queues", "pending", "preemption", "scenarios", "workload", "sql")
SNAKE = re.compile(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b")
ADDS_UP = re.compile(r"Adds up: (.+?) = (.+)$", re.MULTILINE)
NUMBER = re.compile(r"(\$)?(-?[\d,]+(?:\.\d+)?)( GPU-h)?\s*$")


def _value(term: str) -> float:
    match = NUMBER.search(term.strip())
    assert match, f"no figure at the end of {term!r}"
    return float(match.group(2).replace(",", ""))


def adds_up_lines(text: str) -> list[tuple[list[float], float, str]]:
    """Each "Adds up: a + b + … = whole" line: its parts, its whole, and the line."""
    found = []
    for match in ADDS_UP.finditer(text):
        parts = [_value(term) for term in match.group(1).split(" + ")]
        found.append((parts, _value(match.group(2)), match.group(0)))
    return found


@pytest.fixture(scope="module")
def pages(demo_pages):
    """The pages at 1366 px of the session's one browser pass (demo_browser.py)."""
    run, states = demo_pages
    return run, {path: states[(1366, path)] for path in PAGES}


@pytest.mark.parametrize("path", list(PAGES))
def test_page_draws_and_shows_no_internal_name(pages, path):
    _, states = pages
    state = states[path]
    summary = {k: v for k, v in state.items() if k not in ("dom", "mainText")}
    assert not state.get("traceback") and not state.get("exception") and not state.get("errors"), summary
    text = state["mainText"]
    for icon in set(state.get("icons", [])):  # drawn as glyphs, never read as words
        text = text.replace(icon, "")
    if path == "sql":
        # The SQL page shows SQL and its raw result: the marts' names are the point there. Its
        # default chart (two runs of one cluster) draws one panel per run, never their sum.
        assert "one panel per run" in text
        return
    assert "__idle__" not in text
    assert not SNAKE.findall(text), (path, sorted(set(SNAKE.findall(text))))


@pytest.mark.parametrize("path", ["", "teams", "idle", "pending", "preemption"])
def test_page_parts_add_up_to_its_headline(pages, path):
    _, states = pages
    lines = adds_up_lines(states[path]["mainText"])
    assert lines, f"/{path} shows no Adds up line"
    for parts, whole, line in lines:
        tolerance = 0.011 * len(parts) if "$" in line else 0.051 * len(parts)
        assert sum(parts) == pytest.approx(whole, abs=max(tolerance, 1e-9)), line


def test_headlines_are_the_data_layers_figures_for_the_window_shown(pages, demo_db):
    run, states = pages
    con = data.connect_read_only(demo_db)
    filters = data.with_phase(con, data.Filters(run), data.DEFAULT_PHASE)
    metrics = data.headline_metrics(con, filters)
    overview = dict(states[""]["metricPairs"])
    assert overview["Total cost"] == ui.compact_usd(metrics["total_cost"])
    assert overview["Idle cost"] == ui.compact_usd(metrics["idle_cost"])
    # the window every figure covers is the one the caption states
    assert ui.window_text(filters) in states[""]["mainText"]
    teams_text = states["teams"]["mainText"]
    assert f"total cost (Overview) ${metrics['total_cost']:,.2f}" in teams_text
    idle = dict(states["idle"]["metricPairs"])
    assert idle["Idle cost"] == ui.compact_usd(metrics["idle_cost"])
    lost = data.preemption_loss(con, filters)
    assert dict(states["preemption"]["metricPairs"])["Lost cost"] == ui.compact_usd(lost["lost_cost"])
    chains = data.preemption_chains(con, filters)  # the demo preempts: its chains are on the page
    assert not chains.empty
    assert dict(states["preemption"]["metricPairs"])["Chains"] == f"{len(chains):,}"
    end = filters.params()["ts_to"]
    assert f"waiting is judged at {end:%Y-%m-%d %H:%M} UTC" in states["pending"]["mainText"]

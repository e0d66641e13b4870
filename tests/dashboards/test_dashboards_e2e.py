"""End to end: serve() the fixture db, load EVERY page by its URL path in headless Chromium at
1366x768, save a screenshot per page, and see charts and no Streamlit exception.

Chromium's --dump-dom returns before Streamlit has rendered over its websocket, so the pages
are driven through the DevTools protocol (tests/browser.py) and the live DOM is polled until
the charts are drawn or a deadline passes.
"""

from __future__ import annotations

import sys

import pytest

from dashboards.serve import serve
from tests.browser import _free_port, _stop, _wait_healthy, chromium_or_skip, open_pages_in_chromium

pytestmark = pytest.mark.e2e

# URL path → (page title, charts at least). demo-a is the fixture run with queues, a
# preemption and waiting workloads, so every page has something to draw.
PAGES = {
    "": ("GPU cost overview", 5),
    "teams": ("Cost per team", 4),
    "idle": ("Idle GPUs", 6),
    "queues": ("Queues: quota use and borrowing", 3),
    "pending": ("Why is it pending?", 3),
    "preemption": ("Preemption", 5),  # lost over time, victims; who preempts whom, depths, chains
    "scenarios": ("Scenarios ranked", 4),
    "workload": ("Workload detail", 2),
    "sql": ("SQL", 1),
}


@pytest.fixture(scope="module")
def chromium() -> str:
    return chromium_or_skip()


def test_every_page_renders_in_a_real_browser(fixture_db, chromium, tmp_path, capsys):
    port = _free_port()
    server = serve(fixture_db, port=port, host="127.0.0.1", block=False)
    assert server is not None
    try:
        assert f"http://127.0.0.1:{port}/" in capsys.readouterr().out
        _wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server)
        pages = [(f"http://127.0.0.1:{port}/{path}?run=demo-a", tmp_path / f"{path or 'overview'}.png")
                 for path in PAGES]
        # wait on each page for the charts it must draw: a loaded machine draws them slowly
        states = open_pages_in_chromium(chromium, pages, tmp_path / "chromium-profile",
                                        min_charts=[charts for _, charts in PAGES.values()])
        for (path, (title, charts)), state, (_, screenshot) in zip(
                PAGES.items(), states, pages, strict=True):
            summary = {k: v for k, v in state.items() if k != "dom"}
            assert not state.get("traceback") and not state.get("apiError"), summary
            assert not state.get("exception") and not state.get("errors"), summary
            assert state.get("title") == title, summary
            assert state.get("charts", 0) >= charts, summary
            assert "vega-embed" in state["dom"], path
            assert screenshot.read_bytes().startswith(b"\x89PNG"), path
        preemption = states[list(PAGES).index("preemption")]
        assert "Cascades" in preemption["mainText"] and "Preempted in a cascade" in preemption["mainText"]
    finally:
        _stop(server)


def test_serve_refuses_a_missing_db_and_warns_off_loopback(tmp_path, fixture_db, capsys):
    from dashboards.errors import DashboardError
    from dashboards.serve import is_loopback, streamlit_command, warn_if_exposed

    with pytest.raises(DashboardError, match="not found"):
        serve(tmp_path / "missing.duckdb", block=False)
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")
    command = streamlit_command(fixture_db, 8502, "127.0.0.1")
    assert command[:4] == [sys.executable, "-m", "streamlit", "run"]
    flag = command.index("--browser.gatherUsageStats")
    assert command[flag + 1] == "false"
    assert command[command.index("--server.address") + 1] == "127.0.0.1"
    assert warn_if_exposed("0.0.0.0")
    assert "warning: serving on 0.0.0.0" in capsys.readouterr().err
    assert not warn_if_exposed("127.0.0.1")
    assert capsys.readouterr().err == ""


def test_dashboard_on_a_busy_port_is_one_line_and_exit_2(fixture_db, capsys):
    import socket

    from gpu_finops.cli import main

    with socket.socket() as other:  # another server listening on the port
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        assert main(["dashboard", "--db", str(fixture_db), "--port", str(port)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no URL of the other server
    assert captured.err.strip().splitlines() == [
        f"gpu-finops dashboard: port {port} on 127.0.0.1 is in use (another dashboard?): stop it or "
        "pick another with --port"]

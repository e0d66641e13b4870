"""The Scenarios page on a real sweep database, in headless Chromium against a real Streamlit
server: the four scenarios ranked, the baseline from the link, every chart drawn."""

from __future__ import annotations

import pytest
from sweeps import TINY_SCENARIOS

from dashboards.serve import serve
from tests.browser import _free_port, _stop, _wait_healthy, chromium_or_skip, open_pages_in_chromium

pytestmark = pytest.mark.e2e


def test_the_scenarios_page_ranks_a_sweep_in_a_real_browser(local_sweep, tmp_path, capsys):
    chromium = chromium_or_skip()
    port = _free_port()
    server = serve(local_sweep / "gpu-finops.duckdb", port=port, host="127.0.0.1", block=False)
    assert server is not None
    try:
        _wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server)
        baseline = f"tiny4-{TINY_SCENARIOS[2]}"
        shot = tmp_path / "scenarios.png"
        state = open_pages_in_chromium(chromium, [(f"http://127.0.0.1:{port}/scenarios?baseline={baseline}", shot)],
                                       tmp_path / "profile", min_charts=4, viewport=(1366, 1000))[0]
    finally:
        _stop(server)
    summary = {k: v for k, v in state.items() if k != "dom"}
    assert not state.get("traceback") and not state.get("exception") and not state.get("errors"), summary
    assert state.get("title") == "Scenarios ranked" and state.get("charts", 0) >= 4, summary
    for name in TINY_SCENARIOS:
        assert name in state["dom"], name
    assert f"{TINY_SCENARIOS[2]}</strong>, rank" in state["dom"]  # the linked baseline
    assert shot.read_bytes().startswith(b"\x89PNG")

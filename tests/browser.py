"""Real-browser helpers for end-to-end tests: find (or install) Debian's Chromium, wait for a
Streamlit server, and drive Chromium through the DevTools protocol.

Chromium's --dump-dom returns before Streamlit has rendered over its websocket, so pages are
driven through DevTools (with the `websockets` package Streamlit already depends on) and the
live DOM is polled until the charts are drawn or a deadline passes.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from tests.machine_lock import machine_wide_lock

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
RENDER_TIMEOUT_S = 60
# Evaluated in the page: what is drawn so far.
PROBE = """
(() => {
  const text = document.body ? document.body.innerText : "";
  return JSON.stringify({
    charts: document.querySelectorAll(
      '.vega-embed canvas, .vega-embed svg.marks, [data-testid="stVegaLiteChart"] canvas').length,
    metrics: document.querySelectorAll('[data-testid="stMetric"]').length,
    traceback: text.includes("Traceback"),
    apiError: text.includes("StreamlitAPIException"),
    exception: document.querySelectorAll('[data-testid="stException"]').length,
    running: !!document.querySelector('[data-testid="stStatusWidget"] [data-testid*="unning"]')
      || text.includes("Running..."),
    errors: document.querySelectorAll('[data-testid="stAlertContentError"]').length,
    title: document.querySelector("h1") ? document.querySelector("h1").innerText : "",
    // what the page itself says (the sidebar's pickers and database path left out)
    mainText: (document.querySelector('[data-testid="stMainBlockContainer"]') || document.body || {}).innerText || "",
    // Material icons are ligatures (keyboard_arrow_right): words the font draws as a glyph
    icons: Array.from(document.querySelectorAll('[data-testid="stIconMaterial"]')).map(e => e.innerText),
    metricPairs: Array.from(document.querySelectorAll('[data-testid="stMetric"]')).map(m => [
      (m.querySelector('[data-testid="stMetricLabel"]') || {}).innerText || "",
      (m.querySelector('[data-testid="stMetricValue"]') || {}).innerText || ""]),
  });
})()
"""


# Evaluated in the page once drawn: how the charts and metric labels are laid out, for the
# layout checks (a chart drawn zero pixels wide, chart text cut at the edge of its drawing, a
# metric label cut short). Charts are drawn as SVG (dashboards/cache.py), so every text of a
# chart has a box to measure.
LAYOUT = """
(() => {
  const charts = Array.from(document.querySelectorAll('.vega-embed')).map((embed, i) => {
    const box = embed.getBoundingClientRect();
    const svg = embed.querySelector('svg');
    const frame = svg ? svg.getBoundingClientRect() : box;
    // a text past the drawing's edge (by more than a glyph's side bearing, 3 px), or shortened
    // by Vega's label limit
    // (Vega hides an overlapping or out-of-bounds axis label by making it transparent.)
    const shown = t => { for (let e = t; e && e !== svg; e = e.parentElement) {
      if (getComputedStyle(e).opacity === '0' || e.getAttribute('opacity') === '0') return false; }
      return true; };
    const cut = svg ? Array.from(svg.querySelectorAll('text')).filter(shown).filter(t => {
      const r = t.getBoundingClientRect();
      return r.width > 0 && (r.left < frame.left - 3 || r.right > frame.right + 3
                             || t.textContent.endsWith('…'));
    }).map(t => {
      const r = t.getBoundingClientRect();
      return t.textContent + ' [' + Math.round(r.left - frame.left) + ',' + Math.round(frame.right - r.right) + ']';
    }) : [];
    return {index: i, width: box.width, height: box.height, svg: !!svg,
            svgWidth: svg ? frame.width : 0, cut: cut};
  });
  const metrics = Array.from(document.querySelectorAll('[data-testid="stMetricLabel"]')).map(m => {
    const boxes = [m, ...m.querySelectorAll('*')];
    return {text: m.innerText, cut: boxes.some(e => e.scrollWidth > e.clientWidth + 1)};
  });
  return JSON.stringify({charts: charts, metrics: metrics});
})()
"""


def _find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


def chromium_or_skip() -> str:
    found = _find_chromium()
    if found is None and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        # Test setup may install the browser when it can (CI images run as root), one worker
        # at a time (tests/machine_lock.py).
        with machine_wide_lock("chromium"):
            found = _find_chromium()
            if found is None:
                subprocess.run(["apt-get", "install", "-y", "-q", "chromium"], check=False,
                               capture_output=True, timeout=600)
                found = _find_chromium()
    if found is None:
        pytest.skip("Chromium is not installed (apt-get install -y chromium); e2e test skipped")
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, process: subprocess.Popen, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"streamlit exited early with code {process.returncode}")
        with contextlib.suppress(OSError), urllib.request.urlopen(url, timeout=2) as response:
            if response.status == 200 and response.read().strip() == b"ok":
                return
        time.sleep(0.25)
    raise AssertionError(f"{url} not healthy after {timeout_s}s")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=15)


def _devtools_ws(profile: Path, browser: subprocess.Popen, timeout_s: float = 30) -> str:
    """The page target's websocket URL, once Chromium has written its DevTools port."""
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if browser.poll() is not None:
            raise AssertionError(f"chromium exited early with code {browser.returncode}")
        if port_file.is_file():
            lines = port_file.read_text().split()
            if lines:
                targets_url = f"http://127.0.0.1:{lines[0]}/json/list"
                with contextlib.suppress(OSError, ValueError), urllib.request.urlopen(
                    targets_url, timeout=2
                ) as response:
                    for target in json.loads(response.read()):
                        if target.get("type") == "page":
                            return target["webSocketDebuggerUrl"]
        time.sleep(0.2)
    raise AssertionError("chromium DevTools endpoint did not come up")


async def _render(ws_url: str, pages: list[tuple[str, Path]], min_charts: int | list[int],
                  viewport: tuple[int, int]) -> list[dict]:
    """Load each (url, screenshot) in turn in one tab; return what was drawn on each.
    ``min_charts``: the charts to wait for, on every page or one count per page."""
    import websockets

    async with websockets.connect(ws_url, max_size=64 * 2**20) as ws:
        next_id = 0

        async def call(method: str, **params):
            nonlocal next_id
            next_id += 1
            await ws.send(json.dumps({"id": next_id, "method": method, "params": params}))
            while True:  # skip events until our reply comes
                message = json.loads(await ws.recv())
                if message.get("id") == next_id:
                    if "error" in message:
                        raise AssertionError(f"{method}: {message['error']}")
                    return message.get("result", {})

        width, height = viewport
        await call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                   deviceScaleFactor=1, mobile=False)
        await call("Page.enable")
        states = []
        wanted = min_charts if isinstance(min_charts, list) else [min_charts] * len(pages)
        for (url, screenshot), charts in zip(pages, wanted, strict=True):
            await call("Page.navigate", url="about:blank")  # nothing of the previous page is read as this one's
            await call("Page.navigate", url=url)
            state = await _wait_drawn(call, charts)
            shot = await call("Page.captureScreenshot", format="png")
            screenshot.write_bytes(base64.b64decode(shot["data"]))
            dom = await call("Runtime.evaluate", expression="document.documentElement.outerHTML",
                             returnByValue=True)
            state["dom"] = dom.get("result", {}).get("value", "")
            layout = await call("Runtime.evaluate", expression=LAYOUT, returnByValue=True)
            state["layout"] = json.loads(layout.get("result", {}).get("value") or "{}")
            state["url"] = url
            states.append(state)
        return states


async def _wait_drawn(call, min_charts: int) -> dict:
    """Poll the page until it stopped running with at least ``min_charts`` charts drawn and
    the count steady, an exception shows, or the deadline passes."""
    state: dict = {}
    steady = 0
    last_charts = -1
    deadline = time.monotonic() + RENDER_TIMEOUT_S
    await asyncio.sleep(0.3)  # let the navigation replace the previous page
    while time.monotonic() < deadline:
        result = await call("Runtime.evaluate", expression=PROBE, returnByValue=True)
        value = result.get("result", {}).get("value")
        state = json.loads(value) if value else {}
        if state.get("traceback") or state.get("apiError") or state.get("exception"):
            break
        charts = state.get("charts", 0)
        # steady: the same charts, not running, and something drawn (a page of one message has
        # no chart to wait for, but its text comes only once Streamlit's websocket is up)
        drawn = bool(state.get("mainText", "").strip())
        steady = steady + 1 if charts == last_charts and not state.get("running") and drawn else 0
        last_charts = charts
        if charts >= min_charts and steady >= 3:
            await asyncio.sleep(0.3)  # let the last canvas paint before the screenshot
            break
        await asyncio.sleep(0.25)
    return state


def open_pages_in_chromium(chromium: str, pages: list[tuple[str, Path]], profile: Path,
                           min_charts: int | list[int] = 1,
                           viewport: tuple[int, int] = (1366, 768)) -> list[dict]:
    """Load each url at ``viewport`` in one headless Chromium, wait until it is drawn, save a
    screenshot per page; returns what was drawn on each (charts, metrics, title, errors, dom)."""
    profile.mkdir(parents=True, exist_ok=True)
    browser = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
         "--remote-debugging-port=0", f"--window-size={viewport[0]},{viewport[1]}",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        ws_url = _devtools_ws(profile, browser)
        return asyncio.run(_render(ws_url, pages, min_charts, viewport))
    finally:
        _stop(browser)


def open_in_chromium(chromium: str, url: str, profile: Path, screenshot: Path,
                     min_charts: int = 4) -> dict:
    """Load one url at 1366x768, wait for its charts, save a screenshot; what was drawn."""
    return open_pages_in_chromium(chromium, [(url, screenshot)], profile, min_charts)[0]

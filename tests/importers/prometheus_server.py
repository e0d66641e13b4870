"""A real Prometheus server for the live import tests: Debian's ``prometheus`` package (installed
by the test where it can be, as the dashboard tests install Chromium), its TSDB backfilled from
an OpenMetrics file by ``promtool tsdb create-blocks-from openmetrics``, started on 127.0.0.1 on a
free port, stopped and its data removed when the test is done.

The OpenMetrics file is written from the same query_range answers the file importer reads
(`openmetrics`), so a live import and a file import read the same series. Backfilled blocks hold
no staleness markers (a scraping Prometheus writes one when a series disappears, which ends it at
its last scrape), so the server looks back less than the samples' interval
(``--query.lookback-delta``): each series ends at its last sample, as staleness would end it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

LOOKBACK = "1m"  # below the fixtures' 5-minute sample interval


def prometheus_or_skip() -> tuple[str, str]:
    """The ``prometheus`` and ``promtool`` binaries, installing Debian's package when run as root."""
    found = shutil.which("prometheus"), shutil.which("promtool")
    if None in found and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", "prometheus"], check=False,
                       capture_output=True, timeout=600)
        found = shutil.which("prometheus"), shutil.which("promtool")
    if None in found:
        pytest.skip("Prometheus is not installed (apt-get install -y prometheus); live import test skipped")
    return found  # type: ignore[return-value]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def openmetrics(paths: list[Path]) -> str:
    """The series of query_range answer files as one OpenMetrics exposition with timestamps,
    each metric family together (a series without ``__name__`` takes its file's name)."""
    families: dict[str, list[str]] = {}
    for path in paths:
        document = json.loads(path.read_text(encoding="utf-8"))
        for answer in document if isinstance(document, list) else [document]:
            for series in answer["data"]["result"]:
                labels = dict(series["metric"])
                name = labels.pop("__name__", path.stem)
                shown = ",".join(f'{k}="{_escaped(str(v))}"' for k, v in sorted(labels.items()) if v != "")
                for moment, value in series.get("values") or [series["value"]]:
                    families.setdefault(name, []).append(f"{name}{{{shown}}} {value} {moment}")
    return "".join(f"{line}\n" for name in sorted(families) for line in families[name]) + "# EOF\n"


@contextmanager
def prometheus_server(folder: Path, exposition: str, *, web_config: str | None = None,
                      flags: tuple[str, ...] = ()) -> Iterator[str]:
    """A Prometheus serving ``exposition`` (OpenMetrics) on 127.0.0.1; yields its URL
    (``https`` when ``web_config`` sets TLS). ``flags``: more of the server's flags. Stopped
    and its data removed afterwards."""
    prometheus, promtool = prometheus_or_skip()
    folder.mkdir(parents=True, exist_ok=True)
    source, data = folder / "series.om", folder / "tsdb"
    source.write_text(exposition, encoding="utf-8")
    made = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(source), str(data)],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr[-2000:]
    config = folder / "prometheus.yml"
    config.write_text("global:\n  scrape_interval: 1h\n", encoding="utf-8")  # scrapes nothing
    flags = [f"--config.file={config}", f"--storage.tsdb.path={data}", "--storage.tsdb.retention.time=100y",
             f"--query.lookback-delta={LOOKBACK}", *flags]
    scheme = "http"
    if web_config is not None:
        (folder / "web.yml").write_text(web_config, encoding="utf-8")
        flags.append(f"--web.config.file={folder / 'web.yml'}")
        scheme = "https" if "tls_server_config" in web_config else "http"
    port = free_port()
    log = (folder / "prometheus.log").open("wb")
    process = subprocess.Popen([prometheus, *flags, f"--web.listen-address=127.0.0.1:{port}"], stdout=log,
                               stderr=subprocess.STDOUT, cwd=folder)
    try:
        _wait_ready(process, port, folder / "prometheus.log")
        yield f"{scheme}://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=20)
        log.close()
        shutil.rmtree(data, ignore_errors=True)


def _wait_ready(process: subprocess.Popen, port: int, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"prometheus exited {process.returncode}: {log.read_text()[-2000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0 and _ready(port):
                return
        time.sleep(0.2)
    raise AssertionError(f"prometheus did not get ready in 60 s: {log.read_text()[-2000:]}")


def _ready(port: int) -> bool:
    """Ready, or listening behind TLS or basic auth (which this plain request cannot pass)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/ready", timeout=2) as answer:
            return answer.status == 200
    except urllib.error.HTTPError as error:
        return error.code in (400, 401)  # 400: plain HTTP to a TLS port; 401: basic auth
    except (urllib.error.URLError, ConnectionError, OSError):
        return False

"""`gpu-finops import prometheus --url` against a real Prometheus server (prometheus_server.py:
Debian's package, a TSDB backfilled from the series the file importer tests export): the live
import writes the file import's trace, pages under the server's point limit, retries a 5xx and a
timeout, and says in one line what a 401, a bad URL or a server that keeps failing is."""

from __future__ import annotations

import contextlib
import csv
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest
import requests
from prometheus_export import write_export_with_dcgm
from prometheus_server import free_port, openmetrics, prometheus_server

from gpu_finops.cli import main
from gpu_finops.importers.prometheus import import_prometheus_live
from gpu_finops.importers.prometheus_http import (
    QUERIES,
    LiveRange,
    PrometheusError,
    fetch_answers,
    live_range,
)

START, END, STEP = "2026-03-02T08:00:00Z", "2026-03-02T12:00:00Z", "5m"


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> list[Path]:
    return write_export_with_dcgm(tmp_path_factory.mktemp("export"))


@pytest.fixture(scope="module")
def server(export, tmp_path_factory) -> Iterator[str]:
    with prometheus_server(tmp_path_factory.mktemp("prometheus"), openmetrics(export)) as url:
        yield url


@pytest.fixture(scope="module")
def file_import(export, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("file") / "imported"
    assert main(["import", "prometheus", "--series", *map(str, export), "--out", str(out), "-q"]) == 0
    return out


def live(url: str, out: Path, *extra: str) -> int:
    return main(["import", "prometheus", "--url", url, "--start", START, "--end", END, "--step", STEP,
                 "--out", str(out), "-q", *extra])


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def quick(url: str, **settings) -> LiveRange:
    """The live range of the fixtures, retrying without the long waits of the defaults."""
    base = live_range(url, START, END, STEP)
    settings.setdefault("timeout_s", (2.0, 5.0))
    return LiveRange(base.url, base.start_ms, base.end_ms, base.step_ms, backoff_s=0.01, **settings)


def test_the_live_import_writes_the_file_imports_trace(server, file_import, tmp_path):
    out = tmp_path / "live"
    assert live(server, out) == 0
    for name in ("trace.csv", "cluster.csv", "prices.csv"):
        assert (out / name).read_bytes() == (file_import / name).read_bytes(), name
    assert "0.8" in (out / "trace.csv").read_text()  # the DCGM series were queried too
    # pods.csv and rejected.csv name the query a pod or row came from, not a file
    def without_source(path: Path) -> list[list[str]]:
        return sorted(list(r.values())[2:] for r in rows(path))
    assert without_source(out / "pods.csv") == without_source(file_import / "pods.csv")
    assert {r["source"] for r in rows(out / "pods.csv")} == {"kube_pod_created"}
    # the export's node_load1 is not one of the documented queries: never asked for
    assert without_source(out / "rejected.csv") == [
        r for r in without_source(file_import / "rejected.csv") if not r[-1].startswith("NotUsed")]
    manifest = json.loads((out / "import.json").read_text())
    assert list(manifest["inputs"]) == list(QUERIES)
    assert manifest["prometheus"] == {"url": server, "start": START, "end": END, "step_s": 300.0,
                                      "pages_per_query": 1}


def test_pages_split_the_range_on_the_one_querys_grid(server, file_import, tmp_path):
    result = import_prometheus_live(quick(server, max_points=7), tmp_path / "paged")  # 49 steps: 7 pages
    assert (tmp_path / "paged" / "trace.csv").read_bytes() == (file_import / "trace.csv").read_bytes()
    assert result.origin["pages_per_query"] == 7


def test_a_range_past_the_servers_point_limit_is_paged(server):
    second = LiveRange(server, quick(server).start_ms, quick(server).end_ms, 1000)  # 14,401 points a series
    refused = requests.get(f"{server}/api/v1/query_range", params={
        "query": "kube_node_labels", "start": second.start_ms / 1000, "end": second.end_ms / 1000, "step": 1},
        timeout=30)
    assert refused.status_code == 400 and "exceeded maximum resolution" in refused.json()["error"]
    [(_, answer)] = fetch_answers(second, ("kube_node_labels",))
    [(_, finer)] = fetch_answers(LiveRange(server, second.start_ms, second.end_ms, 1000, max_points=3000),
                                 ("kube_node_labels",))
    assert answer == finer  # two pages and five pages: one answer
    for series in answer["data"]["result"]:
        moments = [moment for moment, _ in series["values"]]
        assert moments == sorted(set(moments))
        assert (moments[0], moments[-1]) == (second.start_ms / 1000, second.end_ms / 1000)


def _team_costs(db: Path) -> dict[str, tuple[float, ...]]:
    with duckdb.connect(str(db), read_only=True) as con:
        return {row[0]: tuple(round(v, 6) for v in row[1:]) for row in con.execute(
            """select e.tenant, sum(e.active_gpu_hours), sum(e.allocated_idle_gpu_hours), sum(e.allocated_idle_cost),
                      (select sum(EffectiveCost) from focus_cost_records f where f.x_Tenant = e.tenant)
               from fct_gpu_efficiency e group by e.tenant order by 1""").fetchall()}


def _replay_and_build(imported: Path, folder: Path) -> Path:
    start = json.loads((imported / "import.json").read_text())["start"]
    assert main(["replay", "--trace", str(imported / "trace.csv"), "--cluster", str(imported / "cluster.csv"),
                 "--start", start, "--run-id", "imported", "--out", str(folder / "run"), "-q"]) == 0
    db = folder / "finops.duckdb"
    assert main(["build", str(folder / "run"), "--prices", str(imported / "prices.csv"), "--db", str(db), "-q"]) == 0
    return db


@pytest.mark.slow
def test_live_import_replay_and_build_give_the_file_imports_team_costs(server, file_import, tmp_path):
    assert live(server, tmp_path / "live") == 0
    from_live = _team_costs(_replay_and_build(tmp_path / "live", tmp_path / "live-build"))
    from_files = _team_costs(_replay_and_build(file_import, tmp_path / "file-build"))
    assert set(from_live) == {"ml", "research"} and all(cost[-1] > 0 for cost in from_live.values())
    assert from_live == from_files


# the bcrypt hash (cost 4: quick to check) of the password "not-this-one"
BASIC_AUTH = "basic_auth_users:\n  gpu-finops: $2b$04$xinzJQFRJp2n/4QED/.jiOIrd2KRYsZVED1p8KUUuYYzNMxEyrAGm\n"


def test_a_refused_token_is_one_line_naming_the_server_and_query(export, tmp_path, capsys):
    token = tmp_path / "token"
    token.write_text("a-very-secret-token\n")
    with prometheus_server(tmp_path / "guarded", openmetrics(export[:1]), web_config=BASIC_AUTH) as url:
        assert live(url, tmp_path / "out", "--bearer-token-file", str(token)) == 2
    error = capsys.readouterr().err
    assert error.splitlines() == [f"gpu-finops import prometheus: {url}: query kube_pod_created: 401 Unauthorized: "
                                  "the server refused the credentials (check --bearer-token-file)"]
    assert "secret" not in error and not (tmp_path / "out").exists()


def test_a_bad_url_is_one_line(server, tmp_path, capsys):
    assert live("prometheus:9090", tmp_path / "out") == 2
    assert capsys.readouterr().err.strip() == ("gpu-finops import prometheus: --url: 'prometheus:9090' is not an "
                                               "http(s) URL of a Prometheus server (http://prometheus:9090)")
    assert live(f"{server}/grafana", tmp_path / "out") == 2  # not the server's root: a 404
    assert capsys.readouterr().err.strip() == (
        f"gpu-finops import prometheus: {server}/grafana: query kube_pod_created: 404 Not Found: not a Prometheus "
        "API answer (is the URL the server's root?)")
    closed = f"http://user:password@127.0.0.1:{free_port()}"
    with pytest.raises(PrometheusError) as refused:
        import_prometheus_live(quick(closed, retries=2), tmp_path / "out")
    assert str(refused.value).startswith(f"http://127.0.0.1:{closed.rsplit(':', 1)[1]}: query kube_pod_created: "
                                         "no answer after 3 tries: ")
    assert "password" not in str(refused.value) and not (tmp_path / "out").exists()


class _Flaky(BaseHTTPRequestHandler):
    """Forwards to the real server, after answering 503 (or waiting) for the first requests."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        proxy = self.server
        with proxy.lock:  # type: ignore[attr-defined]
            proxy.seen += 1  # type: ignore[attr-defined]
            number = proxy.seen  # type: ignore[attr-defined]
        if number <= proxy.failures:  # type: ignore[attr-defined]
            body = b'{"status":"error","errorType":"unavailable","error":"restarting"}'
            self.send_response(503)
        else:
            if number <= proxy.slow:  # type: ignore[attr-defined]
                time.sleep(1.5)
            with urllib.request.urlopen(proxy.upstream + self.path, timeout=30) as answer:  # type: ignore[attr-defined]
                body = answer.read()
            self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):  # the client gave up waiting (the timeout test)
            self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def flaky(server) -> Iterator[ThreadingHTTPServer]:
    proxy = ThreadingHTTPServer(("127.0.0.1", 0), _Flaky)
    proxy.upstream, proxy.lock, proxy.seen, proxy.failures, proxy.slow = (  # type: ignore[attr-defined]
        server, threading.Lock(), 0, 0, 0)
    thread = threading.Thread(target=proxy.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        proxy.shutdown()
        proxy.server_close()
        thread.join(timeout=10)


def test_a_5xx_is_retried(flaky, file_import, tmp_path):
    flaky.failures = 2
    assert live(f"http://127.0.0.1:{flaky.server_port}", tmp_path / "out") == 0  # waits 0 s, then 1 s
    assert (tmp_path / "out" / "trace.csv").read_bytes() == (file_import / "trace.csv").read_bytes()
    assert flaky.seen == 2 + len(QUERIES)


def test_a_server_that_keeps_failing_is_one_line_and_nothing_written(flaky, tmp_path):
    flaky.failures = 1_000
    with pytest.raises(PrometheusError) as failed:
        import_prometheus_live(quick(f"http://127.0.0.1:{flaky.server_port}", retries=3), tmp_path / "out")
    assert str(failed.value) == (f"http://127.0.0.1:{flaky.server_port}: query kube_pod_created: 503 Service "
                                 "Unavailable after 4 tries: restarting")
    assert flaky.seen == 4 and not (tmp_path / "out").exists()


def test_a_timeout_is_retried(flaky, file_import, tmp_path):
    flaky.slow = 1  # the first answer comes after 1.5 s, past the read timeout
    import_prometheus_live(quick(f"http://127.0.0.1:{flaky.server_port}", timeout_s=(2.0, 0.5)), tmp_path / "out")
    assert (tmp_path / "out" / "trace.csv").read_bytes() == (file_import / "trace.csv").read_bytes()
    assert flaky.seen == 1 + len(QUERIES)


def test_the_server_is_stopped_and_removed(export, tmp_path):
    with prometheus_server(tmp_path / "once", openmetrics(export[:1])) as url:
        assert requests.get(f"{url}/-/ready", timeout=10).status_code == 200
    assert not (tmp_path / "once" / "tsdb").exists()
    with pytest.raises(requests.exceptions.ConnectionError):
        requests.get(f"{url}/-/ready", timeout=2)


def test_basic_auth_in_the_url_is_sent_and_never_written(export, tmp_path):
    with prometheus_server(tmp_path / "guarded", openmetrics(export), web_config=BASIC_AUTH) as url:
        guarded = url.replace("http://", "http://gpu-finops:not-this-one@")
        assert live(guarded, tmp_path / "out") == 0
    manifest = (tmp_path / "out" / "import.json").read_text()
    assert json.loads(manifest)["prometheus"]["url"] == url and "not-this-one" not in manifest


def _certificate(folder: Path) -> tuple[Path, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "server.crt", folder / "server.key"
    made = subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                           "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key),
                           "-out", str(cert)], capture_output=True, text=True, timeout=60)
    if made.returncode != 0:
        pytest.skip(f"openssl cannot make a certificate here: {made.stderr[-300:]}")
    return cert, key


def test_tls_is_checked_against_the_ca_file(export, file_import, tmp_path, capsys):
    cert, key = _certificate(tmp_path / "tls")
    web = f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
    with prometheus_server(tmp_path / "tls-server", openmetrics(export), web_config=web) as url:
        assert url.startswith("https://")
        assert live(url, tmp_path / "unknown-ca") == 2
        error = capsys.readouterr().err
        assert error.startswith(f"gpu-finops import prometheus: {url}: query kube_pod_created: TLS failed (")
        assert error.rstrip().endswith("give the server's CA with --ca-file (or --insecure to skip the check)")
        assert len(error.splitlines()) == 1 and not (tmp_path / "unknown-ca").exists()
        assert live(url, tmp_path / "ca", "--ca-file", str(cert)) == 0
        assert live(url, tmp_path / "insecure", "--insecure") == 0
        assert capsys.readouterr().err == f"warning: the TLS certificate of {url} is not checked (--insecure)\n"
    for out in ("ca", "insecure"):
        assert (tmp_path / out / "trace.csv").read_bytes() == (file_import / "trace.csv").read_bytes()


@pytest.mark.parametrize(("arguments", "line"), [
    (["--series", "x.json", "--start", START], "--start: only with --url (a live Prometheus); --series files hold "
                                               "their range"),
    (["--url", "http://p:9090", "--end", END], "--start: required with --url: the range to import"),
    (["--url", "http://p:9090", "--start", END, "--end", START], f"--end: {START} is not after --start {END}"),
    (["--url", "http://p:9090", "--start", START, "--end", END, "--step", "5 min"],
     "--step: '5 min' is not a duration (60, 30s, 5m, 1h)"),
    (["--url", "http://p:9090", "--start", "2026-03-02T08:00:00", "--end", END],
     "--start: '2026-03-02T08:00:00' has no time zone: add Z for UTC"),
    (["--url", "http://p:9090", "--start", START, "--end", END, "--bearer-token-file", "no-such-token"],
     "no-such-token: field '--bearer-token-file': file not found"),
    *((["--url", "http://127.0.0.1:1", "--start", START, "--end", END, "--bearer-token-file", name],
       f"{name}: field '--bearer-token-file': not one line of text: a token file holds the token alone")
      for name in ("two-lines", "binary")),
    (["--url", "http://p:9090", "--start", "inf", "--end", END], "--start: 'inf' is not within 1970-2199"),
    (["--url", "http://p:9090", "--start", START, "--end", "1e300"], "--end: '1e300' is not within 1970-2199"),
    (["--url", "http://p:9090", "--start", START, "--end", END, "--step", "0"],
     "--step: '0': the step must be at least 1 ms and less than the calendar"),
])
def test_options_are_checked_before_any_query(arguments, line, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "two-lines").write_text("a-secret\nsecond\n")
    (tmp_path / "binary").write_bytes(b"\xff\xfe\x00secret")
    assert main(["import", "prometheus", *arguments, "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == f"gpu-finops import prometheus: {line}\n"
    assert not (tmp_path / "out").exists()


def test_the_readmes_live_import_block_runs_as_written(server, file_import, tmp_path):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- import-prometheus -->\n```sh\n(.*?)```", readme, re.S)
    assert block, "README.md has no import-prometheus block"
    shim = tmp_path / "bin" / "gpu-finops"  # the installed command, as the block calls it
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m gpu_finops.cli "$@"\n')
    shim.chmod(0o755)
    environment = {**os.environ, "PROM": server, "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
                   "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block.group(1)], cwd=tmp_path, env=environment,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "my-cluster" / "trace.csv").read_bytes() == (file_import / "trace.csv").read_bytes()


def test_a_page_past_the_servers_sample_limit_is_halved(export, file_import, tmp_path):
    # 32 series of kube_pod_status_phase: 200 samples hold 6 steps of them, not a 49-step page
    with prometheus_server(tmp_path / "small", openmetrics(export), flags=("--query.max-samples=200",)) as url:
        refused = requests.get(f"{url}/api/v1/query_range", params={
            "query": "kube_pod_status_phase", "start": START, "end": END, "step": 300}, timeout=30)
        assert refused.status_code == 422 and "too many samples" in refused.json()["error"]
        import_prometheus_live(quick(url), tmp_path / "out")
    assert (tmp_path / "out" / "trace.csv").read_bytes() == (file_import / "trace.csv").read_bytes()

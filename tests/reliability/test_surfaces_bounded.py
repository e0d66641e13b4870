"""Surfaces closed to other sites and bounded for user SQL (issue 20, items 9 and 11).

The dashboard is started for real (`gpu-finops dashboard` in a child process) and asked for
pages and its websocket with a foreign Host and a foreign Origin; user SQL runs in a child
process whose peak memory is measured.
"""

from __future__ import annotations

import http.client
import socket
import sqlite3
import time
from pathlib import Path

import pytest

from tests.browser import _free_port, _stop, _wait_healthy
from tests.reliability.processes import assert_one_line_error, in_process, run_cli

HEAVY = "SELECT length(string_agg(repeat('x', 1000000), '')) FROM range(10000)"  # 10 GB of text


@pytest.fixture(scope="module")
def db(workspace, tmp_path_factory) -> Path:
    from pipeline.build import build

    path = tmp_path_factory.mktemp("bounded") / "marts.duckdb"
    build([workspace.run_a], workspace.inputs / "prices.csv", path, show_progress=False)
    return path


# -------------------------------------------------------------------------- the dashboard


def _get(port: int, host: str, path: str = "/", origin: str | None = None) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        headers = {"Host": host} | ({"Origin": origin} if origin else {})
        connection.request("GET", path, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


def _websocket(port: int, host: str, origin: str | None) -> int:
    """The status of a websocket handshake on Streamlit's stream (101: the socket opened)."""
    request = (
        f"GET /_stcore/stream HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        "Sec-WebSocket-Protocol: streamlit\r\n" + (f"Origin: {origin}\r\n" if origin else "") + "\r\n"
    )
    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        connection.sendall(request.encode("latin-1"))
        status_line = connection.recv(4096).split(b"\r\n", 1)[0]
    return int(status_line.split()[1])


@pytest.mark.e2e
def test_the_dashboard_refuses_a_foreign_host_and_a_foreign_origin(db):
    """Item 9: a page on another site rebinding its name to 127.0.0.1 read cost data over the
    websocket. A real server: HTTP and websocket, own and foreign names."""
    import subprocess

    from tests.reliability.processes import cli_command, environment

    port = _free_port()
    server = subprocess.Popen(cli_command("dashboard", "--db", str(db), "--port", str(port),
                                          "--allow-host", "finops.example.test"),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=environment())
    try:
        _wait_healthy(f"http://127.0.0.1:{port}/_stcore/health", server)
        own = f"127.0.0.1:{port}"
        assert _get(port, own) == 200
        assert _get(port, f"localhost:{port}") == 200
        assert _get(port, f"finops.example.test:{port}") == 200  # --allow-host
        for foreign in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}",
                        f"192.168.1.20:{port}", "", "127.0.0.1:notaport"):
            assert _get(port, foreign) == 403, foreign
            assert _get(port, foreign, "/_stcore/health") == 403, foreign
        assert _get(port, own, origin="http://evil.example") == 403
        # the websocket: the page's own origin opens it; a rebinding page or another site does not
        assert _websocket(port, own, f"http://{own}") == 101
        assert _websocket(port, own, None) == 101  # not a browser
        assert _websocket(port, f"evil.example:{port}", f"http://evil.example:{port}") == 403
        assert _websocket(port, own, f"http://evil.example:{port}") == 403
        assert _websocket(port, own, "null") == 403
    finally:
        _stop(server)


def test_the_guard_allows_only_the_bound_address_loopback_and_given_names():
    from dashboards.guard import AllowedHosts, refusal

    loopback = AllowedHosts.for_address("127.0.0.1")
    assert refusal({"host": "127.0.0.1:8501"}, loopback) is None
    assert refusal({"host": "[::1]:8501", "origin": "http://[::1]:8501"}, loopback) is None
    assert refusal({"host": "evil.example:8501"}, loopback)
    assert refusal({"host": "10.0.0.5:8501"}, loopback)
    assert refusal({}, loopback), "no Host at all"
    lan = AllowedHosts.for_address("10.0.0.5", ["dash.internal"])
    assert refusal({"host": "10.0.0.5:8501"}, lan) is None
    assert refusal({"host": "dash.internal", "origin": "https://dash.internal"}, lan) is None
    assert refusal({"host": "10.0.0.6:8501"}, lan)
    everywhere = AllowedHosts.for_address("0.0.0.0")
    assert refusal({"host": "10.0.0.6:8501"}, everywhere) is None  # an IP cannot be rebound
    assert refusal({"host": "evil.example:8501"}, everywhere)


# ------------------------------------------------------------------------------- user SQL


def test_user_sql_stays_within_its_memory_bound(db):
    """Item 11: one string_agg(repeat(…)) took 8.5 GB in 17 s."""
    finished = run_cli("sql", "--db", str(db), "--memory-limit", "256MB", HEAVY, timeout_s=120)
    line = assert_one_line_error("sql", finished.code, finished.err)
    assert "memory limit of 256MB" in line and "--memory-limit" in line
    assert finished.peak_rss_mib < 800, f"peak {finished.peak_rss_mib:.0f} MiB under a 256 MB limit"


def test_user_sql_reads_its_default_bound_from_the_environment(db):
    finished = run_cli("sql", "--db", str(db), HEAVY, env={"GPU_FINOPS_SQL_MEMORY_LIMIT": "300MB"}, timeout_s=120)
    assert "memory limit of 300MB" in assert_one_line_error("sql", finished.code, finished.err)
    assert finished.peak_rss_mib < 800
    from dashboards.data import SqlLimits

    assert SqlLimits() == SqlLimits("2GB", "4GB", 60.0)  # without flags or environment


def test_user_sql_stops_at_its_statement_timeout(db):
    began = time.monotonic()
    code, _, err = in_process("sql", "--db", str(db), "--timeout", "1",
                              "SELECT count(*) FROM range(100000000000) t(i) WHERE hash(i) = 42")
    assert "statement timeout" in assert_one_line_error("sql", code, err)
    assert time.monotonic() - began < 30


def test_user_sql_stops_at_its_temp_space_limit(db):
    code, _, err = in_process("sql", "--db", str(db), "--memory-limit", "64MB", "--temp-limit", "32MB",
                              "SELECT count(*) FROM (SELECT i, repeat('x', 100) || i AS s FROM range(5000000) t(i) "
                              "ORDER BY s DESC)")
    assert "temp-space limit of 32MB" in assert_one_line_error("sql", code, err)


def test_the_dashboards_sql_page_has_the_same_bounds(db, monkeypatch):
    from dashboards.errors import DashboardError
    from dashboards.sql import query_frame

    monkeypatch.setenv("GPU_FINOPS_SQL_MEMORY_LIMIT", "200MB")
    other = db.with_name("page.duckdb")  # its own file: DuckDB wants one configuration per file
    other.write_bytes(db.read_bytes())
    with pytest.raises(DashboardError, match="memory limit of 200MB"):
        query_frame(other, HEAVY)


@pytest.mark.parametrize("value", ["lots", "-1GB", "0MB"])
def test_a_bad_limit_is_a_one_line_error(db, value):
    code, _, err = in_process("sql", "--db", str(db), f"--memory-limit={value}", "SELECT 1")
    assert "--memory-limit" in assert_one_line_error("sql", code, err)


def test_no_command_downloads_a_duckdb_extension(workspace, tmp_path, monkeypatch):
    """Item 11: extension auto-install was on, so a build pointed at a SQLite file tried to
    download the SQLite scanner. DuckDB would install it under $HOME/.duckdb."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    target = tmp_path / "costs.sqlite"
    with sqlite3.connect(target) as con:
        con.execute("create table t (a)")
    before = target.read_bytes()
    for argv in (["build", str(workspace.run_a), "--prices", str(workspace.inputs / "prices.csv"), "--db", str(target)],
                 ["validate", "--db", str(target)], ["sql", "--db", str(target), "SELECT 1"],
                 ["explain", "--db", str(target), "w000"], ["report", "--db", str(target), "--out", str(tmp_path / "r")],
                 ["advise", "commitments", "--db", str(target), "--prices", str(workspace.inputs / "prices.csv"),
                  "--out", str(tmp_path / "advice")]):
        code, _, err = in_process(*argv)
        line = assert_one_line_error(" ".join(argv[:2]) if argv[0] == "advise" else argv[0], code, err).lower()
        assert "failed to download" not in line and "could not establish connection" not in line, line
    assert target.read_bytes() == before
    # Installing creates DuckDB's extension folder under $HOME before it downloads anything.
    assert not (home / ".duckdb").exists(), "DuckDB tried to install an extension"


WIDE = "SELECT i, repeat('x', 100000) || i AS wide FROM range(3000) t(i)"  # 3,000 rows of 100 kB


def test_the_sql_consoles_fetch_keeps_to_its_share_of_the_memory_bound(db, monkeypatch):
    """Issue 41: the console fetched its rows as Python objects outside DuckDB's memory limit.
    The rows kept to be shown take at most 1/32 of the bound (the page copies them about six
    times); the rest is cut, and said."""
    from dashboards.sql import query_frame

    monkeypatch.setenv("GPU_FINOPS_SQL_MEMORY_LIMIT", "1GB")
    own = db.with_name("wide.duckdb")  # its own file: DuckDB wants one configuration per file
    own.write_bytes(db.read_bytes())
    frame, cut = query_frame(own, WIDE, max_rows=5000)
    assert cut and 0 < len(frame) < 3000, (len(frame), cut)  # before: all 3,000 rows (300 MB), not cut
    assert frame["wide"].str.len().sum() <= 1e9 / 32
    assert list(frame["i"]) == list(range(len(frame)))  # the first rows, in order


MIB = 2 ** 20


def test_sql_tables_of_wide_rows_stay_within_the_memory_bound(db):
    """`gpu-finops sql` (table): the command's peak on WIDE is at most its peak on `SELECT 1`
    (the interpreter, DuckDB, rich: the fixed overhead) plus the bound. It was 872 MiB under a
    400MB bound (756 MiB over the overhead: DuckDB's memory limit was the whole bound and the
    kept rows a quarter more); now DuckDB has half the bound and the kept rows 1/32."""
    overhead = run_cli("sql", "--db", str(db), "SELECT 1", timeout_s=120)
    assert overhead.code == 0, overhead.err
    finished = run_cli("sql", "--db", str(db), "--memory-limit", "1GB", WIDE, timeout_s=300)
    assert finished.code == 0, finished.err
    assert "(3000 rows; first " in finished.out and "1/32 of the 1GB memory bound are kept" in finished.out
    assert "characters)" in finished.out  # a cell is cut at 2,000 characters
    assert finished.peak_rss_mib <= overhead.peak_rss_mib + 1e9 / MIB, \
        f"peak {finished.peak_rss_mib:.0f} MiB, overhead {overhead.peak_rss_mib:.0f} MiB, bound 954 MiB"
    # under 400MB, DuckDB's half cannot hold one 2,048-row chunk of 100 kB rows: one line, not 872 MiB
    refused = run_cli("sql", "--db", str(db), "--memory-limit", "400MB", WIDE, timeout_s=300)
    assert "memory limit of 400MB" in assert_one_line_error("sql", refused.code, refused.err)
    assert refused.peak_rss_mib <= overhead.peak_rss_mib + 400e6 / MIB


_PAGE = """
import os, sys
from pathlib import Path
from streamlit.testing.v1 import AppTest

app = AppTest.from_file(str(Path("dashboards") / "streamlit_app.py"), default_timeout=300).run()
app = app.switch_page("app_pages/sql_console.py").run()
with open(f"/proc/{os.getpid()}/status") as status:  # the page's own peak before the query
    print(next(line.split()[1] for line in status if line.startswith("VmHWM:")), flush=True)
app = app.text_area(key=app.text_area[0].key).set_value(sys.argv[1]).run()
print([e.message for e in app.exception])
print("info:", "|".join(i.value for i in app.info))
"""


@pytest.mark.slow
def test_the_sql_page_keeps_a_large_result_within_the_memory_bound(db):
    """The dashboard's SQL page (AppTest in a child process): a query of 300 MB of wide rows
    under a 1GB bound adds at most the bound to the page's own peak before the query, and the
    page says the result was cut. Before: it added 2,721 MiB (the bound is 954 MiB): DuckDB had
    the whole bound and the frame a quarter of it, copied about six times by the page."""
    import sys

    from tests.reliability.processes import REPO, run

    own = db.with_name("page.duckdb")
    own.write_bytes(db.read_bytes())
    finished = run([sys.executable, "-c", _PAGE, WIDE], env={"GPU_FINOPS_DB": str(own),
                                                              "GPU_FINOPS_SQL_MEMORY_LIMIT": "1GB"},
                   timeout_s=600, cwd=REPO)
    assert finished.code == 0, finished.err
    before_kib, exceptions, info = finished.out.strip().splitlines()[-3:]
    assert exceptions == "[]", exceptions
    added = finished.peak_rss_mib - int(before_kib) / 1024
    assert added <= 1e9 / MIB, f"the query added {added:.0f} MiB to the page's peak; the bound is 954 MiB"
    assert "The first " in info and "1/32 of the 1GB memory bound" in info, info

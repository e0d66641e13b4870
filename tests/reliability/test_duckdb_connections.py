"""Every DuckDB connection the project opens goes through one configured function, and none
installs or loads an extension (issue 41): `pipeline.connect.connect` (the dashboard's
read-only connections pass their settings to it)."""

from __future__ import annotations

import ast
import http.server
import threading
from pathlib import Path

import duckdb
import pytest

from dashboards.data import connect_read_only
from pipeline.connect import connect
from pipeline.errors import PipelineError

REPO = Path(__file__).resolve().parents[2]
THE_ONE_PLACE = REPO / "pipeline" / "connect.py"


def _duckdb_connect_calls(path: Path) -> list[int]:
    """Lines of ``duckdb.connect(...)`` (or ``connect`` imported from duckdb) in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_duckdb = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                   and node.module == "duckdb" for alias in node.names if alias.name == "connect"}
    lines = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if (isinstance(func, ast.Attribute) and func.attr == "connect" and isinstance(func.value, ast.Name)
                and func.value.id == "duckdb") or (isinstance(func, ast.Name) and func.id in from_duckdb):
            lines.append(node.lineno)
    return lines


def test_every_duckdb_connection_goes_through_the_one_configured_function():
    found = {
        f"{path.relative_to(REPO)}:{line}"
        for package in ("pipeline", "dashboards", "gpu_finops", "scheduler")
        for path in sorted((REPO / package).rglob("*.py")) if path != THE_ONE_PLACE
        for line in _duckdb_connect_calls(path)
    }
    assert not found, f"duckdb.connect outside pipeline/connect.py (use pipeline.connect.connect): {sorted(found)}"
    assert _duckdb_connect_calls(THE_ONE_PLACE), "the scan no longer finds the one place: it would pass anything"


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []  # noqa: RUF012 - one server per test, reset by the fixture

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        type(self).requests.append(self.path)
        self.send_response(404)
        self.end_headers()

    do_HEAD = do_GET  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def http_server():
    _Recorder.requests = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", _Recorder.requests
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def openers(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))  # DuckDB installs extensions under $HOME/.duckdb
    db = tmp_path / "plain.duckdb"
    duckdb.connect(str(db)).close()  # the test's own: a plain DuckDB file
    return home, {
        "in memory": lambda: connect(),
        "a file, read-write": lambda: connect(tmp_path / "rw.duckdb"),
        "a file, read-only": lambda: connect(db, read_only=True),
        "the dashboard's": lambda: connect_read_only(db),
    }


def test_no_connection_loads_an_extension_for_parquet_over_http(openers, http_server):
    home, opened_by = openers
    url, requests = http_server
    for what, open_it in opened_by.items():
        con = open_it()
        try:
            settings = con.execute("SELECT current_setting('autoinstall_known_extensions'), "
                                   "current_setting('autoload_known_extensions')").fetchone()
            assert settings == (False, False), what
            with pytest.raises(duckdb.Error) as refused:
                con.execute("SELECT * FROM read_parquet(?)", [f"{url}/costs.parquet"]).fetchall()
            assert "could not establish connection" not in str(refused.value).lower(), (what, refused.value)
        finally:
            con.close()
    assert requests == [], "DuckDB read over HTTP: httpfs was loaded"
    assert not (home / ".duckdb").exists(), "DuckDB tried to install an extension"


def test_a_sqlite_file_is_one_line_and_no_extension_is_fetched(openers, tmp_path):
    import sqlite3

    home, _ = openers
    target = tmp_path / "costs.sqlite"
    with sqlite3.connect(target) as con:
        con.execute("create table t (a)")
    for read_only in (True, False):
        with pytest.raises(PipelineError, match="it is a SQLite database, not a DuckDB one") as refused:
            connect(target, read_only=read_only)
        assert "\n" not in str(refused.value)
    assert not (home / ".duckdb").exists(), "DuckDB tried to install an extension"

"""The surfaces a user or an attacker reaches: SQL, the dashboard's address, report paths,
CSV exports. (tests/dashboards covers the common cases; these are the ones around them.)"""

from __future__ import annotations

import contextlib
import csv
import io
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dashboards.errors import DashboardError
from dashboards.report import neutralise_csv_frame, safe_output_path, write_report
from dashboards.sql import query_frame
from gpu_finops.cli import main
from tests.reliability.profiles import fuzz_settings

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
SECRET = "gpu-finops-secret-7f3a"


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def hostile_db(workspace, tmp_path_factory) -> Path:
    """A database whose teams and workload ids are spreadsheet formulas and markup."""
    from pipeline.build import build
    from scheduler.commands import replay

    folder = tmp_path_factory.mktemp("hostile")
    names = ["=cmd|' /C calc'!A0", "+SUM(1,2)", "-2+3", "@evil", "\t=1+1", "<b>x</b>"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["workload_id", "submit_time", "duration_s", "pods", "gpus_per_pod", "gpu_model",
                     "tenant", "priority"])
    writer.writerows([f"{name}-{i}", i * 600, 1800, 1, 1, "A100", name, 0] for i, name in enumerate(names))
    writer.writerow(["=bad-row", 0, -5, 1, 1, "A100", "x", 0])  # quarantined: a negative duration
    trace = folder / "trace.csv"
    trace.write_text(buffer.getvalue())
    replay(trace, workspace.inputs / "cluster.csv", folder / "run", run_id="=run")
    db = folder / "marts.duckdb"
    build([folder / "run"], workspace.inputs / "prices.csv", db, show_progress=False)
    return db


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def _assert_no_formula(cells: list[str], where: str) -> None:
    bad = [cell for cell in cells if cell.startswith(FORMULA_STARTS) and not _is_number(cell)]
    assert not bad, f"{where}: cells a spreadsheet would run: {bad[:5]}"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------------------------ SQL

# Beyond tests/dashboards: spellings that slip past a text check (quoted or commented
# function names), statements that read files through another door, and extension, secret
# and database management. Each must be refused, and no file may be read or written.
REFUSED = [
    'SELECT * FROM "read_csv"(\'{secret}\')',
    "SELECT * FROM read_csv/**/('{secret}')",
    "SELECT * FROM read_csv\n-- a comment\n('{secret}')",
    "SELECT * FROM read_csv(['{secret}'])",
    "WITH x AS (SELECT * FROM read_text('{secret}')) SELECT * FROM x",
    "SELECT * FROM dim_runs WHERE run_id IN (SELECT content FROM read_blob('{secret}'))",
    "SUMMARIZE SELECT * FROM '{secret}'",
    "DESCRIBE SELECT * FROM '{secret}'",
    "SHOW SELECT * FROM '{secret}'",
    "FROM '{secret}'",
    "SELECT * FROM 'https://example.invalid/x.csv'",
    "SELECT * FROM query('SELECT 1')",
    "SELECT * FROM duckdb_secrets()",
    "SELECT * FROM duckdb_extensions()",
    "COPY (SELECT run_id FROM dim_runs) TO '{out}' (FORMAT csv)",
    "EXPORT DATABASE '{out_dir}'",
    "IMPORT DATABASE '{out_dir}'",
    "COPY FROM DATABASE memory TO memory",
    "ATTACH ':memory:' AS scratch",
    "ATTACH '{out_db}' AS other",
    "INSTALL httpfs",
    "FORCE INSTALL httpfs",
    "LOAD '{out_dir}/x.duckdb_extension'",
    "CREATE SECRET s (TYPE s3, KEY_ID 'k', SECRET 'v')",
    "SET GLOBAL enable_external_access = true",
    "RESET enable_external_access",
    "USE memory",
    "CHECKPOINT",
    "PREPARE p AS SELECT 1",
    "CREATE TEMP TABLE t AS SELECT 1",
    "CREATE MACRO m(x) AS x",
]


@pytest.mark.parametrize("template", REFUSED, ids=lambda t: t[:40])
def test_file_access_and_management_statements_are_refused(hostile_db, tmp_path, monkeypatch, template):
    secret = tmp_path / "secret.csv"
    secret.write_text(f"token\n{SECRET}\n")
    query = template.format(secret=secret, out=tmp_path / "leak.csv", out_dir=tmp_path / "dump",
                            out_db=tmp_path / "other.duckdb")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli("sql", "--db", str(hostile_db), "--format", "csv", query)
    assert code == 2, f"not refused: {query!r} -> {out[:200]!r}"
    assert err.count("\n") == 1 and err.startswith("gpu-finops sql: ") and "Traceback" not in err
    assert SECRET not in out + err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret.csv"], "a file was written"
    with pytest.raises(DashboardError):  # the dashboard's SQL page: the same guard
        query_frame(hostile_db, query)


def test_reads_still_work_after_every_refusal(hostile_db):
    code, out, _ = run_cli("sql", "--db", str(hostile_db), "--format", "csv",
                           "SELECT count(*) AS n FROM fct_workloads")
    assert code == 0 and out.splitlines()[1] == "6"  # the seventh row was quarantined


# ------------------------------------------------------------------------------ dashboard


@pytest.fixture
def no_server(monkeypatch) -> list[list[str]]:
    """Record the Streamlit command instead of starting it."""
    started: list[list[str]] = []

    class Recorded:
        def __init__(self, command, **_):
            started.append(command)

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr("dashboards.serve.subprocess.Popen", Recorded)
    return started


def test_the_dashboard_binds_to_loopback_unless_told_otherwise(hostile_db, no_server):
    code, _, err = run_cli("dashboard", "--db", str(hostile_db))
    (command,) = no_server
    assert code == 0 and command[command.index("--server.address") + 1] == "127.0.0.1"
    assert "warning" not in err


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.0.0.7", "", "127.1", "my-laptop.local"])
def test_an_exposed_or_unclear_address_warns(hostile_db, no_server, host):
    code, _, err = run_cli("dashboard", "--db", str(hostile_db), "--host", host)
    assert code == 0 and no_server[0][no_server[0].index("--server.address") + 1] == host
    assert f"warning: serving on {host}" in err and "no login" in err


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", "LOCALHOST"])
def test_a_loopback_address_does_not_warn(hostile_db, no_server, host):
    code, _, err = run_cli("dashboard", "--db", str(hostile_db), "--host", host)
    assert code == 0 and "warning" not in err


# -------------------------------------------------------------------------------- reports


@fuzz_settings(share=0.5)
@given(name=st.one_of(st.text(max_size=20), st.sampled_from(
    ["..", ".", "../x.csv", "a/../../x", "/etc/passwd", "x\\..\\y", "x\x00y", "~/x", "CON", " ", "\n"])))
def test_a_report_file_name_never_leads_outside_the_folder(tmp_path_factory, name):
    folder = tmp_path_factory.getbasetemp() / "report-names"
    folder.mkdir(exist_ok=True)
    try:
        target = safe_output_path(folder, name)
    except DashboardError:
        return
    assert target.parent == folder.resolve() and target.name == name


def test_every_report_file_lands_inside_the_folder_and_no_planted_link_is_followed(hostile_db, tmp_path):
    out = tmp_path / "report"
    written = write_report(hostile_db, out, formats=("html", "md", "csv"))
    assert written and all(path.resolve().parent == out.resolve() for path in written)
    # Now plant a link at every file name, each pointing outside: the report must refuse.
    outside = tmp_path / "outside"
    outside.mkdir()
    for path in written:
        path.unlink()
        (outside / path.name).write_text("keep me")
        path.symlink_to(outside / path.name)
    with pytest.raises(DashboardError, match="refus"):
        write_report(hostile_db, out, formats=("html", "md", "csv"))
    assert all((outside / path.name).read_text() == "keep me" for path in written)


# ---------------------------------------------------------------------------- CSV exports


def test_report_csvs_neutralise_formulas(hostile_db, tmp_path):
    written = write_report(hostile_db, tmp_path / "report", formats=("csv",))
    for path in written:
        _assert_no_formula(_cells(path.read_text(encoding="utf-8")), path.name)


def test_sql_csv_output_neutralises_formulas(hostile_db):
    code, out, _ = run_cli("sql", "--db", str(hostile_db), "--format", "csv",
                           "SELECT workload_id, tenant, run_id, -1.5 AS delta FROM fct_workloads")
    assert code == 0
    _assert_no_formula(_cells(out), "gpu-finops sql --format csv")
    assert "-1.5" in _cells(out), "a negative number is data and stays a number"


def test_rejected_rows_file_neutralises_formulas(hostile_db):
    rejected = hostile_db.parent / "run" / "rejected.csv"
    cells = _cells(rejected.read_text(encoding="utf-8"))
    assert "'=bad-row" in cells
    _assert_no_formula(cells, "rejected.csv")


def test_dashboard_downloads_neutralise_every_table_of_the_data_layer(hostile_db):
    """Every CSV download goes through neutralise_csv_frame: apply it to what the pages show."""
    from dashboards import data

    con = data.connect_read_only(hostile_db)
    try:
        filters = data.Filters("=run")
        frames = [data.spend_by_team(con, filters), data.costliest_workloads(con, filters, limit=50),
                  data.pending_workloads(con, filters), data.list_runs(con)]
    finally:
        con.close()
    assert any("=cmd|' /C calc'!A0" in frame.to_csv() for frame in frames), "the fixture lost its formulas"
    for frame in frames:
        _assert_no_formula(_cells(neutralise_csv_frame(frame).to_csv(index=False)), "download")


_TEXT = st.one_of(st.sampled_from(["=1+1", "+1", "-x", "@x", "\t=1", "\r=1", "ok", ""]), st.text(max_size=6))


@fuzz_settings(share=0.5)
@given(columns=st.lists(st.tuples(_TEXT, st.sampled_from(["object", "string", "category", "mixed"])),
                        min_size=1, max_size=4, unique_by=lambda c: c[0]),
       values=st.lists(_TEXT, min_size=1, max_size=5))
def test_neutralised_frames_have_no_formula_text_cells(columns, values):
    frame = pd.DataFrame({
        name: (pd.Series(values, dtype=kind) if kind != "mixed" else pd.Series([*values[:-1], -3.5]))
        for name, kind in columns
    })
    text = neutralise_csv_frame(frame).to_csv(index=False)
    cells = _cells(text)
    bad = [c for c in cells if c.startswith(FORMULA_STARTS) and c != "-3.5"]
    assert not bad, f"formula cells survived: {bad}"

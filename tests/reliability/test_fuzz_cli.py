"""Hostile inputs through the command line: exit 0 with every row accounted, or exit 2 with
one line on stderr and nothing written; never a traceback.

The CLI's `main()` runs in this process (a subprocess per example would cost seconds each):
it is the same code path as the console script, including the one place that turns a user
error into one line and exit 2, and it lets any other exception through as a failure.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpu_finops.cli import main
from tests.reliability import hostile
from tests.reliability.conftest import CLUSTER, PRICES
from tests.reliability.profiles import fuzz_settings

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "-q"])
    return code, out.getvalue(), err.getvalue()


def assert_one_line_error(command: str, code: int, err: str) -> None:
    assert code == 2, f"exit {code}: {err}"
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"expected one line on stderr, got: {err!r}"
    assert lines[0].startswith(f"gpu-finops {command}: ") and "Traceback" not in err


@fuzz_settings(share=0.3)
@given(
    trace=st.one_of(hostile.generic_trace_csv(), hostile.generic_trace_parquet()),
    queues=st.one_of(st.none(), hostile.kueue_yaml()),
)
def test_replay_accounts_for_every_row_or_fails_with_one_line(trace, queues):
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "cluster.csv").write_text(CLUSTER)
        argv = ["replay", "--trace", str(trace.write(folder)), "--cluster", str(folder / "cluster.csv"),
                "--out", str(folder / "run")]
        if queues is not None:
            argv += ["--queues", str(queues.write(folder))]
        code, _, err = run_cli(*argv)
        if code != 0:
            assert_one_line_error("replay", code, err)
            assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == [], "left behind"
            assert not (folder / "run").exists()
            return
        run = folder / "run"
        counts = json.loads((run / "run.json").read_text())["counts"]
        assert counts["workloads"] + counts["rejected_rows"] == counts["input_rows"]
        if trace.rows is not None:
            assert counts["input_rows"] == trace.rows, "rows in the file differ from rows read"
        rejected = []
        if (run / "rejected.csv").exists():
            with (run / "rejected.csv").open(encoding="utf-8", newline="") as handle:
                rejected = list(csv.DictReader(handle))
        assert len(rejected) == counts["rejected_rows"]
        for row in rejected:
            assert all(not str(v).startswith(FORMULA_STARTS) for v in row.values()), row
        workloads = pq.read_table(run / "workloads.parquet")
        events = pq.read_table(run / "events.parquet")
        assert workloads.num_rows >= counts["workloads"] and events.num_rows >= workloads.num_rows


# Bad price books through `build`: each must stop before anything is built.
BAD_PRICE_BOOKS = {
    "latin-1": "gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
               "A100,2,1.5,0.8\nH100,4,3,1.6\nÉ100,1,1,1\n".encode("latin-1"),
    "parquet": b"PAR1\x15\x04\x15\x10\x15\x14L\x15\x02\x15\x00\x12\x00\x00PAR1",
    "shifted": b"gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
               b"A100,1,000.50,1.5,0.8\nH100,4,3,1.6\n",
    "doubled-column": b"gpu_model,list_usd_per_gpu_hour,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,"
                      b"spot_usd_per_gpu_hour\nA100,2,9,1.5,0.8\nH100,4,9,3,1.6\n",
    "nan": b"gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
           b"A100,nan,1.5,0.8\nH100,4,3,1.6\n",
    "huge-cell": b"gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
                 b"A100,2,1.5," + b"9" * 200_000 + b"\n",
    "injection": b"gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
                 b"=cmd|' /C calc'!A0,2,1.5,0.8\n",
    "empty": b"",
}


@pytest.mark.parametrize("name", sorted(BAD_PRICE_BOOKS))
def test_build_with_a_bad_price_book_is_one_line_and_builds_nothing(workspace, tmp_path, name):
    (tmp_path / "prices.csv").write_bytes(BAD_PRICE_BOOKS[name])
    db = tmp_path / "marts.duckdb"
    code, _, err = run_cli("build", str(workspace.run_a), "--prices", str(tmp_path / "prices.csv"),
                           "--db", str(db))
    assert_one_line_error("build", code, err)
    assert "prices.csv" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prices.csv"], "build wrote something"


def test_the_good_price_book_builds(workspace, tmp_path):
    """The control case: the same command with a good price book succeeds."""
    (tmp_path / "prices.csv").write_text(PRICES)
    code, _, err = run_cli("build", str(workspace.run_a), "--prices", str(tmp_path / "prices.csv"),
                           "--db", str(tmp_path / "marts.duckdb"))
    assert code == 0, err


@pytest.mark.parametrize("damage", ["run.json", "events.parquet", "not-json", "not-utf8", "start-9999"])
def test_build_of_a_damaged_run_directory_is_one_line(workspace, tmp_path, damage):
    import shutil

    run = Path(shutil.copytree(workspace.run_a, tmp_path / "run"))
    if damage == "not-json":
        (run / "run.json").write_text("{not json")
    elif damage == "not-utf8":
        (run / "run.json").write_bytes(b'{"run_id": "\xff"}')
    elif damage == "start-9999":  # a start so late that the run's end is past year 9999
        manifest = json.loads((run / "run.json").read_text())
        manifest["start"] = "9999-12-31T00:00:00Z"
        (run / "run.json").write_text(json.dumps(manifest))
    else:
        (run / damage).write_bytes(b"\x00" * 64)
    code, _, err = run_cli("build", str(run), "--prices", str(workspace.inputs / "prices.csv"),
                           "--db", str(tmp_path / "marts.duckdb"))
    assert_one_line_error("build", code, err)
    assert not (tmp_path / "marts.duckdb").exists()


@pytest.mark.parametrize("command", ["build", "report", "sql", "explain", "validate"])
@pytest.mark.parametrize("content", [b"garbage", b"", b"DUCK" + b"\xff" * 4092])
def test_a_database_that_is_not_one_is_a_one_line_error(workspace, tmp_path, command, content):
    db = tmp_path / "marts.duckdb"
    db.write_bytes(content)
    argv = {
        "build": ["build", str(workspace.run_a), "--prices", str(workspace.inputs / "prices.csv"), "--db", str(db)],
        "report": ["report", "--db", str(db), "--out", str(tmp_path / "report")],
        "sql": ["sql", "--db", str(db), "SELECT 1"],
        "explain": ["explain", "--db", str(db), "w000"],
        "validate": ["validate", "--db", str(db)],
    }[command]
    code, _, err = run_cli(*argv)
    assert_one_line_error(command, code, err)
    assert db.read_bytes() == content, "the file was changed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marts.duckdb"], "something was written"


def test_an_export_path_that_is_a_file_is_refused_before_building(workspace, tmp_path):
    (tmp_path / "export").write_text("not a folder")
    code, _, err = run_cli("build", str(workspace.run_a), "--prices", str(workspace.inputs / "prices.csv"),
                           "--db", str(tmp_path / "marts.duckdb"), "--export", str(tmp_path / "export"))
    assert_one_line_error("build", code, err)
    assert not (tmp_path / "marts.duckdb").exists()


@pytest.mark.parametrize("existing", ["a file", "a folder of other files"])
def test_replay_never_replaces_something_that_is_not_a_previous_run(workspace, tmp_path, existing):
    out = tmp_path / "out"
    if existing == "a file":
        out.write_text("keep me")
    else:
        out.mkdir()
        (out / "thesis.tex").write_text("keep me")
    argv = ["replay", "--trace", str(workspace.inputs / "trace-a.csv"), "--cluster",
            str(workspace.inputs / "cluster.csv"), "--out", str(out)]
    code, _, err = run_cli(*argv)
    assert_one_line_error("replay", code, err)
    assert (out if existing == "a file" else out / "thesis.tex").read_text() == "keep me"
    # An empty folder, then the previous run, is replaced as before.
    if existing == "a file":
        out.unlink()
        out.mkdir()
    else:
        (out / "thesis.tex").unlink()
    for _ in range(2):
        code, _, err = run_cli(*argv)
        assert code == 0, err

"""Fuzz tests for the classes of issue 20, one generator each (strategies in `hostile`).

Numbers past every bound, control characters and gzip in traces reach the CLI through the
existing trace strategies (`test_fuzz_cli.py`); here: folders beside a run.json, exports
with the user's files, database targets of every kind, awkward export paths, typos in
headers, Kueue configurations that admit nothing, user text in every medium, Host and Origin
headers, heavy SQL under small limits, pipes as inputs, and Ctrl-C at any moment of start-up.
"""

from __future__ import annotations

import html
import ipaddress
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.reliability import hostile
from tests.reliability.conftest import CLUSTER
from tests.reliability.processes import in_process, interrupt, run
from tests.reliability.profiles import fuzz_settings

XML_CHAR = re.compile("[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------- files never lost


@fuzz_settings(share=0.2)
@given(files=hostile.user_folder())
def test_replay_replaces_only_a_folder_that_is_exactly_a_previous_run(workspace, files):
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "out"
        for name, data in files.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(data)
        before = _snapshot(out)
        code, _, err = in_process("replay", "--trace", str(workspace.inputs / "trace-b.csv"), "--cluster",
                                  str(workspace.inputs / "cluster.csv"), "--out", str(out))
        ours = not files or (set(files) <= set(hostile.RUN_FILE_NAMES)
                             and files.get("run.json", b"").startswith(b'{"run_id"'))
        if ours:
            assert code == 0, err
        else:
            assert code == 2 and len(err.strip().splitlines()) == 1, err
            assert _snapshot(out) == before, "a file of the user's changed or went"


@fuzz_settings()
@given(files=st.dictionaries(
    st.sampled_from(["billing_period=2026-11/charge_date=2026-11-02/data_0.parquet", "notes.md",
                     "billing_period=2026-11/mine.csv", ".gpu-finops-files.json", "data_0.parquet"]),
    st.binary(max_size=8), max_size=3),
    manifest=st.sampled_from(["none", "ours-listing-all", "ours-listing-some", "garbage"]))
def test_an_export_folder_is_replaced_only_when_a_build_wrote_all_of_it(files, manifest):
    from pipeline.build import check_export_folder
    from pipeline.errors import PipelineError

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "focus_cost_records"
        folder.mkdir()
        files = {k: v for k, v in files.items() if k != ".gpu-finops-files.json"}
        for name, data in files.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(data)
        listed = sorted(files) if manifest == "ours-listing-all" else sorted(files)[:1]
        if manifest.startswith("ours"):
            (folder / ".gpu-finops-files.json").write_text(
                json.dumps({"written_by": "gpu-finops", "files": {name: 0 for name in listed}}))
        elif manifest == "garbage":
            (folder / ".gpu-finops-files.json").write_text("{")
        legacy = all(re.fullmatch(r"billing_period=\d{4}-\d{2}/charge_date=[\d-]{10}/data_\d+\.parquet", n)
                     for n in files)
        if manifest == "garbage":  # a file of that name that is not ours: the user's
            replaceable = False
        elif manifest.startswith("ours"):
            replaceable = set(files) <= set(listed)
        else:  # an export of an older build has no manifest, only its partition files
            replaceable = legacy
        try:
            check_export_folder(folder)
        except PipelineError as refused:
            assert not replaceable, f"refused a folder a build wrote: {refused}"
        else:
            assert replaceable, f"would replace {sorted(files)} with manifest {manifest}"


@fuzz_settings(share=0.1)
@given(kind=st.sampled_from(["missing", "file", "symlink", "dangling-symlink", "folder", "hard-link",
                             "sqlite", "garbage", "fifo"]))
def test_build_into_any_kind_of_target_keeps_every_other_file(workspace, kind):
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        db, other = root / "marts.duckdb", root / "elsewhere" / "real.duckdb"
        other.parent.mkdir()
        if kind in ("file", "symlink", "hard-link"):
            shutil.copy(workspace.run_a / "run.json", root / "keep.json")  # a bystander
            assert in_process("build", str(workspace.run_b), "--prices", str(workspace.inputs / "prices.csv"),
                              "--db", str(other))[0] == 0
        if kind == "file":
            shutil.move(other, db)
        elif kind in ("symlink", "dangling-symlink"):
            db.symlink_to(other if kind == "symlink" else root / "nowhere.duckdb")
        elif kind == "folder":
            db.mkdir()
            (db / "mine.txt").write_text("mine")
        elif kind == "hard-link":
            os.link(other, db)
        elif kind == "sqlite":
            import sqlite3

            with sqlite3.connect(db) as con:
                con.execute("create table t (a)")
        elif kind == "garbage":
            db.write_bytes(b"not a database")
        elif kind == "fifo":
            os.mkfifo(db)
        before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink() and p != db}
        code, _, err = in_process("build", str(workspace.run_a), "--prices", str(workspace.inputs / "prices.csv"),
                                  "--db", str(db))
        assert code in (0, 2) and "Traceback" not in err, err
        if code == 2:
            assert len(err.strip().splitlines()) == 1, err
        after = {p: p.read_bytes() for p in before if p.exists()}
        rebuilt = {db.resolve()} if code == 0 else set()
        assert {p: b for p, b in after.items() if p.resolve() not in rebuilt} == \
               {p: b for p, b in before.items() if p.resolve() not in rebuilt}, "another file changed or went"
        if kind in ("symlink", "dangling-symlink"):
            assert db.is_symlink(), "the link was replaced by a file"
        assert not [p for p in root.rglob(".*") if "building" in p.name], "temporary files left"


@fuzz_settings(share=0.07)
@given(name=hostile.awkward_names())
def test_any_export_path_is_written_as_a_path_never_read_as_sql(workspace, name):
    with tempfile.TemporaryDirectory() as scratch:
        export = Path(scratch) / name
        code, _, err = in_process("build", str(workspace.run_a), "--prices", str(workspace.inputs / "prices.csv"),
                                  "--db", str(Path(scratch) / "m.duckdb"), "--export", str(export))
        assert code == 0, err
        assert list(export.rglob("data_0.parquet")) and (export / "focus_metadata.json").is_file()
        assert sorted(p.name for p in Path(scratch).iterdir()) == sorted(["m.duckdb", name])


# --------------------------------------------------------------- values and configuration


@fuzz_settings()
@given(column=st.sampled_from([c for c in hostile.TRACE_COLUMNS if len(c) >= 6]), data=st.data())
def test_a_header_one_typo_from_a_known_column_is_warned_about(column, data):
    from scheduler.trace.generic import COLUMNS
    from scheduler.trace.io import header_typos

    typo = data.draw(hostile.typo_of(column))
    if typo in COLUMNS:
        return  # the edit made another real column
    warnings = header_typos([typo], COLUMNS, Path("trace.csv"), "generic trace")
    assert len(warnings) == 1 and f"'{typo}'" in warnings[0]


@fuzz_settings(share=0.15)
@given(config=hostile.kueue_that_admits_nothing())
def test_a_kueue_configuration_that_admits_nothing_is_said_on_the_console(config):
    manifests, why = config
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "queues.yaml").write_text(manifests)
        (folder / "cluster.csv").write_text(CLUSTER)
        (folder / "trace.csv").write_text("workload_id,submit_time,duration_s,gpus_per_pod,gpu_model,queue\n"
                                          "w1,0,600,1,A100,team-0\nw2,0,600,1,A100,\n")
        code, _, err = in_process("replay", "--trace", str(folder / "trace.csv"), "--cluster",
                                  str(folder / "cluster.csv"), "--queues", str(folder / "queues.yaml"),
                                  "--out", str(folder / "run"))
        assert code == 0, err
        assert "warning:" in err and "admit" in err, (why, err)


# ---------------------------------------------------------------------- text, every medium


@fuzz_settings()
@given(text=st.one_of(st.sampled_from(hostile.CONTROL_TEXT), st.text(max_size=40),
                      st.text(alphabet=st.characters(max_codepoint=0xFFFF, exclude_categories=["Cs"]), max_size=20)))
def test_user_text_is_escaped_for_every_medium(text):
    from dashboards.report import markdown_text, neutralise_csv_value
    from dashboards.text import CONTROL_CHARACTERS
    from dashboards.text import printable as dashboard_printable
    from scheduler.eventlog.text import printable

    shown = printable(text)
    assert shown == dashboard_printable(text), "the two copies of the rule disagree"
    assert not CONTROL_CHARACTERS.search(shown)
    assert XML_CHAR.fullmatch(shown), "a character a chart's SVG cannot hold"
    assert "<" not in html.escape(shown) and ">" not in html.escape(shown)
    markdown = markdown_text(text)
    assert not CONTROL_CHARACTERS.search(markdown) and "\n" not in markdown
    unescaped = re.sub(r"\\.", "", markdown)  # what is left once every escaped character is removed
    assert not re.search(r"[\\`*_\[\]<>|~&]", unescaped), markdown
    cell = neutralise_csv_value(text)
    assert not CONTROL_CHARACTERS.search(cell.replace("\n", "").replace("\t", "")), "only line breaks and tabs stay"
    assert not cell.startswith(("=", "+", "-", "@", "\t", "\r"))


@fuzz_settings()
@given(host=hostile.host_headers(), origin=st.one_of(st.none(), hostile.host_headers().map(lambda h: "http://" + h),
                                                      st.sampled_from(["null", "file://", "https://evil.example"])),
       bound=st.sampled_from(["127.0.0.1", "::1", "0.0.0.0", "10.0.0.5", "dash.internal"]))
def test_the_dashboard_serves_only_its_own_names(host, origin, bound):
    from dashboards.guard import AllowedHosts, host_of_header, host_of_origin, refusal

    allowed = AllowedHosts.for_address(bound)
    headers = {"host": host} | ({"origin": origin} if origin is not None else {})

    def own(name: str | None) -> bool:
        if not name:
            return False
        name = name.lower().rstrip(".")
        if name in ("localhost", bound.strip("[]")) or name in allowed.names:
            return True
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False
        return address.is_loopback or bound in ("0.0.0.0", "::")

    expected = own(host_of_header(host)) and (origin is None or own(host_of_origin(origin)))
    assert (refusal(headers, allowed) is None) == expected, (headers, bound)
    if "evil" in host:
        assert refusal(headers, allowed) is not None


@fuzz_settings(share=0.1)
@given(shape=st.sampled_from([
    "SELECT length(string_agg(repeat('x', {n}), '')) FROM range(10000)",
    "SELECT count(*) FROM (SELECT i, repeat('y', 100) || i AS s FROM range({n}) t(i) ORDER BY s)",
    "SELECT count(DISTINCT repeat('z', 50) || i) FROM range({n}) t(i)",
    "SELECT list(repeat('w', 1000)) FROM range({n})",
]), size=st.sampled_from([10_000, 200_000, 2_000_000]))
def test_heavy_user_sql_stops_at_a_limit_or_answers(limits_db, shape, size):
    from dashboards.data import SqlLimits
    from dashboards.errors import DashboardError
    from dashboards.sql import run_sql

    limits = SqlLimits(memory="128MB", temp="64MB", timeout_s=20)
    try:
        run_sql(limits_db, shape.format(n=size), "csv", limits=limits)
    except DashboardError as stopped:
        assert re.search(r"memory limit of 128MB|temp-space limit of 64MB|statement timeout", str(stopped)), stopped


@pytest.fixture(scope="module")
def limits_db(workspace, tmp_path_factory) -> Path:
    """A database of its own: DuckDB wants one configuration (limits) per file and process."""
    from pipeline.build import build

    path = tmp_path_factory.mktemp("limits") / "marts.duckdb"
    build([workspace.run_a], workspace.inputs / "prices.csv", path, show_progress=False)
    return path


# ------------------------------------------------------------------- pipes and Ctrl-C


@fuzz_settings(share=0.1)
@given(how=st.sampled_from(["file", "fifo", "gzip", "gzip-fifo"]))
def test_a_trace_from_a_pipe_or_gzip_replays_like_the_file(workspace, how):
    import gzip

    import pyarrow.parquet as pq

    with tempfile.TemporaryDirectory() as scratch:
        data = (workspace.inputs / "trace-a.csv").read_bytes()
        if how.startswith("gzip"):
            data = gzip.compress(data)
        trace = Path(scratch) / "trace-a.csv"
        if how.endswith("fifo") or how == "fifo":
            os.mkfifo(trace)
            threading.Thread(target=lambda: trace.write_bytes(data), daemon=True).start()
        else:
            trace.write_bytes(data)
        code, _, err = in_process("replay", "--trace", str(trace), "--cluster", str(workspace.inputs / "cluster.csv"),
                                  "--out", str(Path(scratch) / "run"), "--run-id", "a")
        assert code == 0, err
        assert pq.read_table(Path(scratch) / "run" / "events.parquet").equals(
            pq.read_table(workspace.run_a / "events.parquet"))


@fuzz_settings(share=0.08)
@given(delay=st.floats(0.02, 1.5))
def test_ctrl_c_at_any_moment_of_a_command_is_one_line(workspace, delay):
    starter = "import os, sys; import gpu_finops.cli as cli; os.write(1, b'.'); sys.exit(cli.main(sys.argv[1:]))"
    with tempfile.TemporaryDirectory() as scratch:
        argv = ["replay", "--trace", str(workspace.inputs / "trace-a.csv"), "--cluster",
                str(workspace.inputs / "cluster.csv"), "--out", str(Path(scratch) / "run"), "-q"]

        def signal_when_started(process):
            process.stdout.read(1)
            interrupt(process, delay)

        finished = run([sys.executable, "-c", starter, *argv], after_start=signal_when_started, timeout_s=60)
        assert not finished.traceback, finished.err[-1500:]
        assert finished.code in (0, 130)
        assert not [p for p in Path(scratch).iterdir() if p.name.startswith(".")], "temporary files left"


def test_ctrl_c_inside_a_callback_python_cannot_raise_from_still_stops_the_command(workspace):
    """The flake the test above once caught: a Ctrl-C landing in the import system's module-lock
    callback (a weakref callback) is "unraisable". Python printed "Exception ignored in ..." with a
    traceback and the command ran on to exit 0. Made deterministic here with a weakref callback
    that raises KeyboardInterrupt just as the command starts."""
    starter = (
        "import sys, weakref; import gpu_finops.cli as cli\n"
        "command = cli._main\n"
        "class Target: pass\n"
        "def interrupt(_): raise KeyboardInterrupt\n"
        "def interrupted_in_a_callback(argv):\n"
        "    target = Target(); dying = weakref.ref(target, interrupt); del target\n"
        "    return command(argv)\n"
        "cli._main = interrupted_in_a_callback\n"
        "sys.exit(cli.main(sys.argv[1:]))\n")
    with tempfile.TemporaryDirectory() as scratch:
        argv = ["replay", "--trace", str(workspace.inputs / "trace-a.csv"), "--cluster",
                str(workspace.inputs / "cluster.csv"), "--out", str(Path(scratch) / "run"), "-q"]
        finished = run([sys.executable, "-c", starter, *argv], timeout_s=60)
        assert not finished.traceback, finished.err[-1500:]
        assert "Exception ignored" not in finished.err
        assert finished.code == 130, finished.err
        assert finished.err.strip() == "gpu-finops: interrupted"
        assert not (Path(scratch) / "run").exists() or not list((Path(scratch) / "run").iterdir()), \
            "the interrupted replay left a run behind"
        assert not [p for p in Path(scratch).iterdir() if p.name.startswith(".")], "temporary files left"


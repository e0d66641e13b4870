"""One write discipline for every command (issue 24): never over an input, never over a file
of the user's, each output old or new. Every test goes through the command line and failed on
the code before `scheduler.eventlog.writes` (the importer overwrote the user's trace.csv and
deleted their queues.yaml, `import kueue --out .` overwrote its own input, `generate` and
`report` replaced files of the user's)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.reliability.processes import assert_one_line_error, in_process

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))
from cluster_dumps import write_dumps  # noqa: E402


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_import_never_overwrites_the_users_trace_nor_deletes_their_queues(tmp_path):
    dumps = write_dumps(tmp_path / "dumps")
    out = tmp_path / "mine"
    out.mkdir()
    (out / "trace.csv").write_text("my own trace\n")
    (out / "queues.yaml").write_text("# my own queues\n")
    before = _snapshot(out)
    code, _, err = in_process("import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                              "--out", str(out))
    line = assert_one_line_error("import kubectl", code, err)
    assert "trace.csv" in line and "did not write" in line
    assert _snapshot(out) == before


def test_import_rewrites_its_own_output_and_leaves_a_users_file_beside_it(tmp_path):
    dumps = write_dumps(tmp_path / "dumps")
    out = tmp_path / "imported"
    argv = ["import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]), "--out", str(out)]
    assert in_process(*argv, "--kueue", str(dumps["kueue"]))[0] == 0
    assert (out / "queues.yaml").is_file()
    (out / "notes.txt").write_text("mine\n")
    assert in_process(*argv)[0] == 0  # again, without Kueue: its own queues.yaml goes
    assert not (out / "queues.yaml").exists()
    assert (out / "notes.txt").read_text() == "mine\n"
    (out / "trace.csv").write_text("edited by hand\n")  # changed since: no longer the import's
    code, _, err = in_process(*argv)
    assert "trace.csv" in assert_one_line_error("import kubectl", code, err)
    assert (out / "trace.csv").read_text() == "edited by hand\n"


def test_import_kueue_never_overwrites_its_own_input(tmp_path, monkeypatch):
    dumps = write_dumps(tmp_path / "dumps")
    folder = tmp_path / "here"
    folder.mkdir()
    queues = folder / "queues.yaml"
    queues.write_bytes(dumps["kueue"].read_bytes())
    monkeypatch.chdir(folder)
    code, _, err = in_process("import", "kueue", "--kueue", "queues.yaml", "--out", ".")
    line = assert_one_line_error("import kueue", code, err)
    assert "input" in line
    assert queues.read_bytes() == dumps["kueue"].read_bytes()


def test_generate_never_replaces_the_users_files_and_rewrites_its_own(tmp_path):
    out = tmp_path / "inputs"
    assert in_process("generate", "--preset", "tiny", "--out", str(out))[0] == 0
    first = _snapshot(out)
    assert in_process("generate", "--preset", "tiny", "--out", str(out), "--seed", "7")[0] == 0
    assert _snapshot(out)["trace.csv"] != first["trace.csv"]  # its own files: replaced
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "prices.csv").write_text("gpu_model,list_usd_per_gpu_hour\nA100,1\n")
    code, _, err = in_process("generate", "--preset", "tiny", "--out", str(mine))
    assert "prices.csv" in assert_one_line_error("generate", code, err)
    assert (mine / "prices.csv").read_text() == "gpu_model,list_usd_per_gpu_hour\nA100,1\n"
    assert sorted(p.name for p in mine.iterdir()) == ["prices.csv"]  # nothing half-written


def test_report_never_replaces_the_users_file_in_its_folder(workspace, tmp_path):
    from pipeline.build import build

    db = tmp_path / "marts.duckdb"
    build([workspace.run_a], workspace.inputs / "prices.csv", db, show_progress=False)
    out = tmp_path / "report"
    out.mkdir()
    (out / "report.md").write_text("my notes\n")
    code, _, err = in_process("report", "--db", str(db), "--out", str(out), "--format", "md,csv")
    assert "report.md" in assert_one_line_error("report", code, err)
    assert (out / "report.md").read_text() == "my notes\n"
    (out / "report.md").unlink()
    assert in_process("report", "--db", str(db), "--out", str(out), "--format", "md,csv")[0] == 0
    assert in_process("report", "--db", str(db), "--out", str(out), "--format", "md,csv")[0] == 0  # its own


def test_report_never_writes_over_the_database_it_reads(workspace, tmp_path):
    from pipeline.build import build

    db = tmp_path / "headline.csv"  # a database named like a report file, in the report folder
    build([workspace.run_a], workspace.inputs / "prices.csv", db, show_progress=False)
    before = db.read_bytes()
    code, _, err = in_process("report", "--db", str(db), "--out", str(tmp_path), "--format", "csv")
    assert "headline.csv" in assert_one_line_error("report", code, err)
    assert db.read_bytes() == before


@pytest.mark.parametrize("where", ["inside", "same"])
def test_replay_never_replaces_a_folder_holding_its_input(workspace, tmp_path, where):
    out = tmp_path / "run"
    out.mkdir()
    trace = out / "trace.csv"
    trace.write_bytes((workspace.inputs / "trace-a.csv").read_bytes())
    target = out if where == "inside" else trace
    code, _, err = in_process("replay", "--trace", str(trace), "--cluster", str(workspace.inputs / "cluster.csv"),
                              "--out", str(target))
    assert_one_line_error("replay", code, err)
    assert trace.read_bytes() == (workspace.inputs / "trace-a.csv").read_bytes()

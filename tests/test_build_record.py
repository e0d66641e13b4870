"""Which code wrote a run: `gpu-finops --version`, the `build` record of run.json and the
FOCUS metadata's `x_RunBuilds` (issue 45)."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import scheduler
from scheduler import compiled
from tests.scheduler.scenario import job, node, replay_rows

REPO = Path(__file__).resolve().parents[1]


def test_version_names_the_package_version_the_build_and_the_commit():
    done = subprocess.run([sys.executable, "-m", "gpu_finops.cli", "--version"], capture_output=True, text=True,
                          env=os.environ | {"GPU_FINOPS_PURE": "1"}, cwd=REPO, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    expected_commit = compiled.commit() or "unknown"
    assert done.stdout == (f"gpu-finops {importlib.metadata.version('gpu-finops')} "
                           f"(pure scheduler, commit {expected_commit})\n")


def test_a_run_records_the_code_that_wrote_it(tmp_path):
    replay_rows(tmp_path, [node("n1")], [job("w1", 0, 7200)], "kube-default")
    record = json.loads((tmp_path / "run" / "run.json").read_text())["build"]
    assert record == {"version": compiled.version(), "scheduler": scheduler.BUILD, "commit": compiled.commit()}
    assert record["scheduler"] in ("pure", "compiled", "pure (stale)")


def test_the_focus_metadata_names_the_build_of_each_run(tmp_path):
    from pipeline.build import build

    replay_rows(tmp_path, [node("n1")], [job("w1", 0, 7200)], "kube-default")
    result = build([tmp_path / "run"], REPO / "data" / "demo" / "prices.csv", tmp_path / "db.duckdb",
                   export=tmp_path / "export", show_progress=False)
    metadata = json.loads((tmp_path / "export" / "focus_metadata.json").read_text())
    assert metadata["DataGenerator"]["x_RunBuilds"] == [
        {"version": compiled.version(), "scheduler": scheduler.BUILD, "commit": compiled.commit(),
         "runs": result.run_ids}
    ]


def test_a_wheel_names_the_commit_it_was_built_from(tmp_path):
    package = tmp_path / "scheduler"
    package.mkdir()
    assert compiled.commit(package) is None  # no record and no checkout: unknown, not a guess
    (package / compiled.BUILD_INFO).write_text(json.dumps({"commit": "0123abc"}), encoding="utf-8")
    assert compiled.commit(package) == "0123abc"
    (package / compiled.BUILD_INFO).write_text(json.dumps({"commit": None}), encoding="utf-8")
    assert compiled.commit(package) is None


def test_a_checkout_names_its_head():
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=False)
    if head.returncode != 0:  # a source tree without git: nothing to compare
        assert compiled.commit() is None
        return
    assert (compiled.commit() or "").removesuffix("-dirty") == head.stdout.strip()

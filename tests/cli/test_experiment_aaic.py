"""`gpu-finops experiment aaic`: a small AAIC log under the three schedulers, end to end.

The log is written here (the real one is read in place by tests/scheduler/test_adapters_aaic.py);
each replay runs in its own process as for the real quarter, then one build prices them.
"""

from __future__ import annotations

import csv

from gpu_finops.cli import main

HEADER = "id, user, group, queue, nodes, gpus, walltime_req, termcode, time_submit, time_start, time_end, waittime, walltime"
DAY = 1506816000  # 2017-10-01T00:00:00Z


def test_the_report_puts_recorded_and_replayed_waits_side_by_side_with_cost(tmp_path, capsys, monkeypatch):
    rows = [
        f"1, 0, 0, 0, 2, 8, 600, 0, {DAY}, {DAY + 10}, {DAY + 3610}, 10, 3600",  # a 2-node gang
        f"2, 0, 1, 1, 1, 4, 600, 0, {DAY + 20}, {DAY + 30}, {DAY + 1830}, 10, 1800",
        f"3, 0, 1, 1, 1, 8, 600, 0, {DAY + 40}, {DAY + 3700}, {DAY + 5500}, 3660, 1800",
        f"4, 0, 2, 0, 1, 1, 600, 0, {DAY + 50}, {DAY + 50}, {DAY + 50}, 0, 0",  # ran 0 s: quarantined
    ]
    trace = tmp_path / "aaicwl-test.csv"
    trace.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    out = tmp_path / "aaic"
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["experiment", "aaic", "--trace", str(trace), "--out", str(out), "--nodes", "2"]) == 0
    # it says what it does (the build ran minutes in silence) and keeps run names whole at 80
    # columns (they were cut to "gang-v1.…")
    said = capsys.readouterr().out
    assert "building cost records of 3 runs" in said and "gang-v1.37-kueue" in said, said
    report = (out / "report.md").read_text(encoding="utf-8")
    for label in ("kube-default", "gang-v1.37", "gang-v1.37-kueue"):
        assert (out / "runs" / label / "events.parquet").is_file()
        assert f"{label}_mean_s" in report
    with open(out / "waits.csv", newline="", encoding="utf-8") as handle:
        waits = list(csv.DictReader(handle))
    assert [w["recorded_wait_s"] for w in waits] == ["10", "10", "3660", "0"]
    assert waits[3]["gang-v1.37_wait_s"] == ""  # the quarantined job never ran
    with open(out / "cost_by_group.csv", newline="", encoding="utf-8") as handle:
        costs = list(csv.DictReader(handle))
    # Every run prices the GPU-hours its jobs used: 2×8×1 h + 4×0.5 h + 8×0.5 h = 22 GPU-hours.
    used = {}
    for row in costs:
        if row["tenant"] != "__idle__":
            used[row["run_id"]] = used.get(row["run_id"], 0.0) + float(row["gpu_hours"])
    assert sorted(used.values()) == [22.0, 22.0, 22.0], used


def test_an_unknown_run_is_a_one_line_error(tmp_path, capsys):
    trace = tmp_path / "aaicwl-test.csv"
    trace.write_text(HEADER + "\n", encoding="utf-8")
    assert main(["experiment", "aaic", "--trace", str(trace), "--out", str(tmp_path / "o"), "--runs", "slurm"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["gpu-finops experiment aaic: --runs: unknown run 'slurm'; known: kube-default, gang-v1.37, gang-v1.37-kueue"]
    assert not (tmp_path / "o").exists()

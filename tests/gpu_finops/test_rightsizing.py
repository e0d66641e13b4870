"""Rightsizing: the smaller request a measured utilisation allows, one rule in Python (the sweep's
rightsized trace) and in SQL (fct_rightsizing_hints), and a sweep that replays it."""

from __future__ import annotations

import csv
import itertools

import duckdb
import pytest

from gpu_finops.rightsizing import rightsize_trace, rightsized_gpus_per_pod
from pipeline.runner import MODELS_DIR
from scheduler.errors import InputError


@pytest.mark.parametrize(
    ("gpus", "utilization", "expected"),
    [
        (8, 0.25, 3.0),  # 2 GPUs of work, sized for 80 %: 2.5 -> 3
        (8, 0.2, 2.0),  # exactly 2 (float noise aside)
        (8, 0.01, 0.125),  # less than a device: an eighth
        (1, 0.1, 0.125),
        (1, 0.3, 0.5),
        (1, 0.45, None),  # 0.5625 of a device: nothing smaller than 1 fits
        (0.5, 0.1, 0.125),
        (0.25, 0.5, None),
        (8, 0.9, None),
        (8, None, None),  # unknown: never a hint
    ],
)
def test_the_rule(gpus, utilization, expected):
    assert rightsized_gpus_per_pod(gpus, utilization) == expected


def test_python_and_the_pipeline_macro_agree():
    con = duckdb.connect()
    con.execute((MODELS_DIR / "macros.sql").read_text())
    grid = list(itertools.product((0.125, 0.25, 0.5, 1, 2, 3, 4, 8, 16), [i / 200 for i in range(201)] + [None]))
    sql = con.execute("select rightsized_gpus_per_pod(g, u) from unnest($g) as t(g) positional join unnest($u) as s(u)",
                      {"g": [float(g) for g, _ in grid], "u": [u for _, u in grid]}).fetchall()
    assert [row[0] for row in sql] == [rightsized_gpus_per_pod(g, u) for g, u in grid]


def test_rightsize_trace_changes_only_the_candidates_requests(tmp_path):
    source = tmp_path / "trace.csv"
    source.write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod,kind,gpu_utilization\n"
                      "low,0,3600,2,8,training,0.25\n"
                      "busy,0,3600,1,8,training,0.9\n"
                      "unknown,0,3600,1,8,notebook,\n"
                      "nb,10,600,1,0.5,notebook,0.1\n"
                      "broken,0,3600,1,eight,training,0.1\n")
    assert rightsize_trace(source, tmp_path / "out.csv", threshold=0.5) == 2
    with (tmp_path / "out.csv").open() as handle:
        rows = {r["workload_id"]: r for r in csv.DictReader(handle)}
    assert (rows["low"]["gpus_per_pod"], rows["low"]["gpu_utilization"], rows["low"]["pods"]) == ("3", "0.667", "2")
    assert (rows["nb"]["gpus_per_pod"], rows["nb"]["gpu_utilization"]) == ("0.125", "0.400")
    for name in ("busy", "unknown", "broken"):
        assert rows[name]["gpus_per_pod"] in ("8", "eight")
    with pytest.raises(InputError, match="gpu_utilization"):
        (tmp_path / "old.csv").write_text("workload_id,submit_time,duration_s,gpus_per_pod\nw,0,60,1\n")
        rightsize_trace(tmp_path / "old.csv", tmp_path / "x.csv")

"""Replays of the generated `tiny` preset: byte-identical event logs for the same inputs and
seed, all-or-nothing in the gang profiles, and partial placement in the no-gang baseline."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gpu_finops.generator import generate
from scheduler.commands import replay

PROFILES = ("gang-v1.37", "gang-v1.35", "kube-default")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tiny")
    generate("tiny", folder, seed=7)
    return folder


@pytest.fixture(scope="module")
def runs(tiny, tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("runs")
    return {
        profile: replay(tiny / "trace.csv", tiny / "cluster.csv", out / profile, profile=profile, seed=7).run_dir
        for profile in PROFILES
    }


def _started_counts_at_time_boundaries(run_dir: Path) -> list[tuple[str, int, int, int]]:
    """(workload, time, pods started, min_count) after every event of each time step."""
    min_count = {w["workload_id"]: w["min_count"] for w in pq.read_table(run_dir / "workloads.parquet").to_pylist()}
    running: dict[str, set[int]] = defaultdict(set)
    seen: list[tuple[str, int, int, int]] = []
    rows = pq.read_table(run_dir / "events.parquet").to_pylist()
    for index, row in enumerate(rows):
        wid = row["workload_id"]
        if row["event"] == "started":
            running[wid].add(row["pod_index"])
        elif row["event"] in ("finished", "preempted", "timed_out"):
            running[wid].discard(row["pod_index"])
        last_of_step = index + 1 == len(rows) or rows[index + 1]["time_s"] != row["time_s"]
        if last_of_step:
            seen.extend((w, row["time_s"], len(pods), min_count[w]) for w, pods in running.items())
    return seen


@pytest.mark.parametrize("profile", PROFILES)
def test_same_inputs_and_seed_give_byte_identical_event_logs(tiny, runs, tmp_path, profile):
    again = replay(tiny / "trace.csv", tiny / "cluster.csv", tmp_path / "again", profile=profile, seed=7)
    assert (again.run_dir / "events.parquet").read_bytes() == (runs[profile] / "events.parquet").read_bytes()


@pytest.mark.parametrize("profile", ["gang-v1.37", "gang-v1.35"])
def test_gang_profiles_never_run_part_of_a_gang(runs, profile):
    partial = [s for s in _started_counts_at_time_boundaries(runs[profile]) if 0 < s[2] < s[3]]
    assert partial == []


def test_kube_default_runs_part_of_gangs(runs):
    partial = [s for s in _started_counts_at_time_boundaries(runs["kube-default"]) if 0 < s[2] < s[3]]
    assert partial, "the no-gang baseline should show partially placed gangs on the tiny preset"


@pytest.mark.parametrize("profile", PROFILES)
def test_every_pending_row_has_a_reason_and_a_message(runs, profile):
    rows = pq.read_table(runs[profile] / "events.parquet").to_pylist()
    pending = [r for r in rows if r["event"] == "pending"]
    assert pending and all(r["reason"] and r["message"] for r in pending)
    assert [r["seq"] for r in rows] == list(range(len(rows)))
    assert all(a["time_s"] <= b["time_s"] for a, b in zip(rows, rows[1:], strict=False))


def _events_without_run(run_dir: Path) -> list[dict]:
    table = pq.read_table(run_dir / "events.parquet")
    return table.drop([c for c in table.column_names if c == "run_id"]).to_pylist()


@pytest.mark.parametrize("profile", PROFILES)
def test_a_profile_that_reads_no_seed_gives_every_seed_the_same_events(tiny, runs, tmp_path, profile):
    """`Profile.reads_seed` is what lets the advisers replay once: when it says no, another seed
    must give the same events (a plugin drawing from the seeded generator unlisted in
    `names.SEEDED` would make this fail)."""
    from scheduler.framework.profile import load_profile

    if load_profile(profile).reads_seed:
        pytest.skip(f"{profile} reads its seed")
    other = replay(tiny / "trace.csv", tiny / "cluster.csv", tmp_path / "other", profile=profile, seed=8)
    assert _events_without_run(other.run_dir) == _events_without_run(runs[profile])


def test_which_shipped_profiles_read_the_seed():
    from dataclasses import replace

    from scheduler.framework.profile import TieBreak, load_profile, shipped_profiles

    reading = {name for name in shipped_profiles() if load_profile(name).reads_seed}
    # DefaultPreemption draws its first candidate node (kube-default, coscheduling's per-pod preemption)
    assert all("DefaultPreemption" in load_profile(name).post_filter for name in reading)
    assert not load_profile("gang-v1.37").reads_seed
    assert replace(load_profile("gang-v1.37"), tie_break=TieBreak.RANDOM).reads_seed
    assert load_profile("kube-default").reads_seed

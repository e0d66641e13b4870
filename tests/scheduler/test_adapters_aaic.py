"""The AAIC batch-log adapter: gang mapping, Unix times to UTC, the run start, quarantine
with reasons, the row-count identity, the generated Kueue queues, and the real quarter
files under ../shared/traces (read there, never copied: the licence forbids it)."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpu_finops.experiments.aaic_inputs import (
    compare_waits,
    queues_yaml,
    wait_summary,
    write_aaic_inputs,
)
from scheduler.admission.manifests import read_queue_config
from scheduler.commands import replay
from scheduler.errors import InputError
from scheduler.trace.aaic import (
    aaic_jobs_to_trace,
    default_cluster,
    natural_start,
    read_aaic_jobs,
    read_aaic_trace,
)

HEADER = "id, user, group, queue, nodes, gpus, walltime_req, termcode, time_submit, time_start, time_end, waittime, walltime"
TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces" / "aaic-2017"
# 2017-10-01T00:00:00Z
DAY = 1506816000


def write(tmp_path: Path, *lines: str, gz: bool = False) -> Path:
    text = "\n".join([HEADER, *lines]) + "\n"
    if gz:
        path = tmp_path / "aaicwl-test.csv.gz"
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path = tmp_path / "aaicwl-test.csv"
        path.write_text(text, encoding="utf-8")
    return path


def test_a_job_becomes_a_gang_of_nodes_pods_with_its_group_and_queue(tmp_path):
    submit = DAY + 3600
    path = write(
        tmp_path,
        f"7, 3, 5, 1, 4, 8, 259200, 2, {submit}, {submit + 60}, {submit + 60 + 7200}, 60, 7200",
        f"8, 3, 5, 0, 1, 2, 86400, 0, {submit + 10}, {submit + 10}, {submit + 110}, 0, 100",
        gz=True,
    )
    load, anchor = read_aaic_trace(path, None)
    assert anchor == datetime(2017, 10, 1, tzinfo=UTC)  # 00:00 UTC of the first submission's day
    assert (load.input_rows, len(load.rejected)) == (2, 0)
    gang, single = load.workloads
    assert (gang.workload_id, gang.pods, gang.min_count, gang.gpus_per_pod, gang.total_gpus) == ("aaic-7", 4, 4, 8.0, 32.0)
    assert (gang.submit_time_s, gang.duration_s) == (3600.0, 7200.0)  # duration: end - start
    assert (gang.tenant, gang.queue, gang.priority, gang.kind) == ("group-5", "q1", 0, "walltime-exceeded")
    assert (single.pods, single.gpus_per_pod, single.submit_time_s, single.kind) == (1, 2.0, 3610.0, "ok")
    jobs = read_aaic_jobs(path)
    assert (jobs.jobs[0].walltime_req, jobs.jobs[0].termcode, jobs.jobs[0].waittime) == (259200, 2, 60)


def test_start_anchors_unix_times_and_rejects_earlier_submissions(tmp_path):
    path = write(
        tmp_path,
        f"1, 0, 0, 0, 1, 1, 60, 0, {DAY}, {DAY}, {DAY + 30}, 0, 30",
        f"2, 0, 0, 0, 1, 1, 60, 0, {DAY + 7200}, {DAY + 7200}, {DAY + 7230}, 0, 30",
    )
    load, anchor = read_aaic_trace(path, datetime(2017, 10, 1, 1, tzinfo=UTC))
    assert anchor == datetime(2017, 10, 1, 1, tzinfo=UTC)
    assert [(w.workload_id, w.submit_time_s) for w in load.workloads] == [("aaic-2", 3600.0)]
    (rejected,) = load.rejected
    assert (rejected.row, rejected.field) == (2, "time_submit")
    assert rejected.reason == "2017-10-01T00:00:00+00:00 is before the run start 2017-10-01T01:00:00+00:00"


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (f"9, 0, 0, 0, 1, 1, 60, 1, {DAY}, {DAY + 5}, {DAY + 5}, 5, 0", "time_end", "the job ran 0 s"),
        (f"9, 0, 0, 0, 0, 1, 60, 0, {DAY}, {DAY}, {DAY + 5}, 0, 5", "nodes", "must be >= 1, got 0"),
        (f"9, 0, 0, 0, 1, 9, 60, 0, {DAY}, {DAY}, {DAY + 5}, 0, 5", "gpus", "between 1 and 8 GPUs per node, got 9"),
        (f"9, 0, 0, 0, 1, 1, 60, 7, {DAY}, {DAY}, {DAY + 5}, 0, 5", "termcode", "got 7"),
        (f"9, 0, 0, 0, 1, 1, 60, 0, {DAY}, {DAY - 5}, {DAY + 5}, 0, 5", "time_start", "before time_submit"),
        (f"9, 0, 0, 0, 1, 1, 60, 0, {DAY}, {DAY}, x, 0, 5", "time_end", "not a number: 'x'"),
        (f"9, 0, 0, 0, 1, 1, 60, 0, {DAY}, {DAY}, {DAY + 5}, 0", "walltime", "missing"),
        (f"9, 0, 0, 0, 1, 1, 60, 0, {DAY}, {DAY}, {DAY + 5}, 0, 5, 6", "(row)", "14 values but the header has 13"),
        (f"1, 0, 0, 0, 1, 1, 60, 0, {DAY}, {DAY}, {DAY + 5}, 0, 5", "id", "duplicate id 1, first seen on row 2"),
    ],
)
def test_a_row_that_cannot_be_replayed_is_quarantined_with_its_reason(tmp_path, row, field, reason):
    path = write(tmp_path, f"1, 0, 0, 0, 1, 1, 60, 0, {DAY}, {DAY}, {DAY + 5}, 0, 5", row)
    load, _ = read_aaic_trace(path, None)
    assert [w.workload_id for w in load.workloads] == ["aaic-1"]
    (rejected,) = load.rejected
    assert (rejected.row, rejected.field) == (3, field)
    assert reason in rejected.reason
    assert len(load.workloads) + len(load.rejected) == load.input_rows == 2


def test_a_file_without_the_aaic_columns_is_an_input_error(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("id, user\n1, 2\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"x.csv: row 1: field 'group': required column of an AAIC log missing"):
        read_aaic_jobs(path)


def test_the_default_cluster_and_the_kueue_queues_follow_the_log(tmp_path):
    cluster = default_cluster()
    assert (len(cluster.nodes), cluster.total_gpus, cluster.gpu_models) == (40, 320, frozenset({"P100"}))
    assert default_cluster(50).total_gpus == 400
    path = write(tmp_path, *(f"{i}, 0, {i}, {q}, 1, 1, 60, 0, {DAY}, {DAY}, {DAY + 5}, 0, 5" for i, q in enumerate((0, 3, 1, 2))))
    files = write_aaic_inputs(read_aaic_jobs(path), default_cluster(), tmp_path / "inputs")
    config = read_queue_config(files.queues)
    assert not config.warnings
    assert sorted(config.cluster_queues) == ["aaic-q0", "aaic-q1", "aaic-q2", "aaic-q3"]
    assert {q: config.cluster_queue_for(q) for q in ("q0", "q1", "q2", "q3")} == {
        "q0": "aaic-q0", "q1": "aaic-q1", "q2": "aaic-q2", "q3": "aaic-q3",
    }
    # The GPUs split evenly as nominal quota (80 each of 320), all in one cohort.
    quotas = [cq.quota("p100", "nvidia.com/gpu").nominal_milli for cq in config.cluster_queues.values()]
    assert quotas == [80_000] * 4
    assert {cq.cohort for cq in config.cluster_queues.values()} == {"aaic"}
    # waitForPodsReady on: an admitted gang that cannot run gives its quota back (docs/traces.md).
    ready = config.configuration.wait_for_pods_ready
    assert ready is not None and ready.timeout_s == 600 and not ready.block_admission
    # An uneven split gives the remainder to the first queues.
    shares = [part.split("nominalQuota: ")[1].split("\n")[0] for part in queues_yaml(["q0", "q1", "q2"], default_cluster(1)).split("kind: ClusterQueue")[1:]]
    assert shares == ["3", "3", "2"]


def test_the_real_2017q4_log_reads_whole():
    jobs = read_aaic_jobs(TRACES / "aaicwl-2017Q4.csv.gz")
    assert (jobs.input_rows, len(jobs.jobs), len(jobs.rejected)) == (93_497, 93_497, 0)
    assert natural_start(jobs) == datetime(2017, 9, 27, tzinfo=UTC)
    assert sum(1 for j in jobs.jobs if j.nodes > 1) == 237 and max(j.nodes for j in jobs.jobs) == 32
    assert len({j.group for j in jobs.jobs}) == 18
    # README: 502,022 GPU-hours of walltime.
    assert round(sum(j.total_gpus * j.walltime for j in jobs.jobs) / 3600) == pytest.approx(502_022, abs=1)
    load = aaic_jobs_to_trace(jobs, natural_start(jobs))
    assert len(load.workloads) + len(load.rejected) == load.input_rows == 93_497
    assert {r.field for r in load.rejected} == {"time_end"}  # only jobs that ran 0 s


def test_simulated_waits_sit_next_to_the_recorded_ones(tmp_path):
    # One 8-GPU node: job 1 takes it for 100 s; jobs 2 and 3 (4 GPUs each) wait for it.
    path = write(
        tmp_path,
        f"1, 0, 0, 0, 1, 8, 600, 0, {DAY}, {DAY + 10}, {DAY + 110}, 10, 100",
        f"2, 0, 1, 1, 1, 4, 600, 0, {DAY + 10}, {DAY + 200}, {DAY + 250}, 190, 50",
        f"3, 0, 1, 1, 1, 4, 600, 0, {DAY + 20}, {DAY + 20}, {DAY + 50}, 0, 30",
    )
    cluster = tmp_path / "cluster.csv"
    cluster.write_text("node,gpu_model,gpus\nn0,P100,8\n", encoding="utf-8")
    replay(path, cluster, tmp_path / "run", profile="gang-v1.37")
    jobs = read_aaic_jobs(path)
    header, rows = compare_waits(jobs, {"gang": tmp_path / "run"})
    assert header[-2:] == ["recorded_wait_s", "gang_wait_s"]
    assert [(row[1], row[-2], row[-1]) for row in rows] == [("aaic-1", 10, 0.0), ("aaic-2", 190, 90.0), ("aaic-3", 0, 80.0)]
    header, rows = wait_summary(jobs, {"gang": tmp_path / "run"}, by="queue")
    assert header == ["queue", "jobs", "recorded_mean_s", "recorded_median_s", "recorded_p90_s",
                      "gang_mean_s", "gang_median_s", "gang_p90_s"]
    assert rows == [["all", 3, 66.7, 10.0, 190.0, 56.7, 80.0, 90.0], ["q0", 1, 10.0, 10.0, 10.0, 0.0, 0.0, 0.0],
                    ["q1", 2, 95.0, 95.0, 190.0, 85.0, 85.0, 90.0]]

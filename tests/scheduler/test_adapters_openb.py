"""The openb (Alibaba cluster-trace-gpu-v2023) pod-list adapter: every column's mapping on
rows written here, the quarantine with its reasons, the row-count identity, and the real
files under ../shared/traces read directly."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from scheduler.errors import InputError
from scheduler.trace.openb import read_openb_pods, read_openb_trace

START = datetime(2026, 11, 2, tzinfo=UTC)
HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces" / "alibaba-openb-2023"


def write(tmp_path: Path, *lines: str, header: str = HEADER) -> Path:
    path = tmp_path / "openb_pod_list_test.csv"
    path.write_text("\n".join([header, *lines]) + "\n", encoding="utf-8")
    return path


def test_each_column_maps_onto_the_generic_workload(tmp_path):
    path = write(
        tmp_path,
        "openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427065",
        "openb-pod-0002,88000,327680,8,1000,V100M16|V100M32,BE,Succeeded,100,700,",
        "openb-pod-0003,4000,1024,2,1000,,Guaranteed,Running,50,60,52",
        "openb-pod-0004,1000,512,1,1000,,Burstable,Failed,10,70,10",
    )
    load = read_openb_trace(path, START)
    assert (load.input_rows, len(load.rejected)) == (4, 0)
    by_id = {w.workload_id: w for w in load.workloads}
    shared = by_id["openb-pod-0001"]
    # gpu_milli 460 of one GPU shares the device; the duration runs from scheduling.
    assert (shared.gpus_per_pod, shared.shares_device, shared.pods, shared.min_count) == (0.46, True, 1, 1)
    assert (shared.submit_time_s, shared.duration_s) == (427061.0, 12902960.0 - 427065.0)
    assert (shared.cpu_milli_per_pod, shared.memory_mib_per_pod) == (6000, 12288)
    assert (shared.priority, shared.kind, shared.tenant, shared.queue) == (200, "latency-sensitive", "openb", None)
    whole = by_id["openb-pod-0002"]
    # Never scheduled (Pending has no scheduled_time): its lifetime counts from creation.
    assert (whole.gpus_per_pod, whole.gpu_models, whole.duration_s) == (8.0, ("V100M16", "V100M32"), 600.0)
    assert (whole.priority, whole.kind) == (0, "best-effort")
    assert (by_id["openb-pod-0003"].priority, by_id["openb-pod-0003"].gpus_per_pod) == (300, 2.0)
    assert (by_id["openb-pod-0004"].priority, by_id["openb-pod-0004"].kind) == (100, "burstable")
    # Sorted by creation time, then source row.
    assert [w.workload_id for w in load.workloads] == ["openb-pod-0004", "openb-pod-0003", "openb-pod-0002", "openb-pod-0001"]
    assert [w.source_row for w in load.workloads] == [5, 4, 3, 2]


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        ("p,4000,1024,0,0,,BE,Running,0,60,0", "num_gpu", "CPU-only pod"),
        ("p,4000,1024,1,1200,,BE,Running,0,60,0", "gpu_milli", "between 1 and 1000"),
        ("p,4000,1024,2,500,,BE,Running,0,60,0", "gpu_milli", "only one GPU can be shared"),
        ("p,4000,1024,0,300,,BE,Running,0,60,0", "gpu_milli", "must be 0 for a CPU-only pod"),
        ("p,4000,1024,1,500,,Platinum,Running,0,60,0", "qos", "unknown QoS class 'Platinum'"),
        ("p,4000,1024,1,500,,BE,Pending,60,60,", "deletion_time", "lifetime must be > 0 s, got 0 s"),
        ("p,4000,1024,1,500,,BE,Running,0,60,90", "deletion_time", "got -30 s (deletion_time - scheduled_time)"),
        ("p,four,1024,1,500,,BE,Running,0,60,0", "cpu_milli", "not a number"),
        ("p,4000,1024,1.5,500,,BE,Running,0,60,0", "num_gpu", "whole number"),
        ("p,4000,-1,1,500,,BE,Running,0,60,0", "memory_mib", "must be >= 0"),
        (",4000,1024,1,500,,BE,Running,0,60,0", "name", "missing"),
        ("p,4000,1024,1,500,,BE,Running,,60,0", "creation_time", "missing"),
        ("p,4000,1024,1,500,,BE,Running,0,60,0,extra", "(row)", "12 values but the header has 11"),
    ],
)
def test_a_row_the_replay_cannot_map_is_quarantined_with_its_reason(tmp_path, row, field, reason):
    path = write(tmp_path, "ok,4000,1024,1,500,,BE,Running,0,60,0", row)
    load = read_openb_trace(path, START)
    assert [w.workload_id for w in load.workloads] == ["ok"]
    (rejected,) = load.rejected
    assert (rejected.row, rejected.field) == (3, field)
    assert reason in rejected.reason
    assert len(load.workloads) + len(load.rejected) == load.input_rows == 2


def test_a_duplicate_pod_name_is_quarantined_on_its_second_row(tmp_path):
    path = write(tmp_path, "p1,1,1,1,500,,BE,Running,0,60,0", "p1,1,1,1,500,,BE,Running,5,60,5")
    load = read_openb_trace(path, START)
    (rejected,) = load.rejected
    assert (rejected.row, rejected.field, rejected.reason) == (3, "name", "duplicate pod name 'p1', first seen on row 2")


def test_the_five_column_multigpu_files_parse_but_cannot_replay(tmp_path):
    path = write(tmp_path, "p1,8000,1024,4,1000", "p2,8000,1024,0,0", header="name,cpu_milli,memory_mib,num_gpu,gpu_milli")
    pods = read_openb_pods(path)
    assert [(p.name, p.num_gpu, p.total_gpu_milli, p.creation_time) for p in pods.pods] == [
        ("p1", 4, 4000, None), ("p2", 0, 0, None),
    ]
    load = read_openb_trace(path, START)
    assert not load.workloads
    assert [(r.field, r.reason.split(":")[0]) for r in load.rejected] == [("creation_time", "missing"), ("num_gpu", "CPU-only pod (num_gpu 0)")]


def test_a_missing_pod_column_names_the_header(tmp_path):
    path = write(tmp_path, "p1,1,1,1", header="name,cpu_milli,memory_mib,num_gpu")
    with pytest.raises(InputError) as error:
        read_openb_pods(path)
    assert str(error.value) == "openb_pod_list_test.csv: row 1: field 'gpu_milli': required column of an openb pod list missing"


@pytest.mark.parametrize(
    ("name", "rows", "workloads"),
    [
        ("openb_pod_list_default.csv", 8152, 7063),  # 1,088 CPU-only pods + 1 zero lifetime quarantined
        ("openb_pod_list_gpuspec33.csv", 8152, 7063),
        ("openb_pod_list_multigpu20.csv", 8324, 0),  # no times in the multigpu files
    ],
)
def test_the_real_pod_lists_keep_every_row_accounted_for(name, rows, workloads):
    load = read_openb_trace(TRACES / name, START)
    assert load.input_rows == rows
    assert len(load.workloads) == workloads
    assert len(load.workloads) + len(load.rejected) == load.input_rows


def test_the_real_default_list_matches_its_readme():
    pods = read_openb_pods(TRACES / "openb_pod_list_default.csv")
    assert not pods.rejected and len(pods.pods) == 8152
    # README: summed GPU request 6,087 GPUs; 44 pods of 8 GPUs; gpu_spec empty throughout.
    assert round(sum(p.total_gpu_milli for p in pods.pods) / 1000) == 6087
    assert sum(1 for p in pods.pods if p.num_gpu == 8) == 44
    assert not any(p.gpu_models for p in pods.pods)
    constrained = read_openb_pods(TRACES / "openb_pod_list_gpuspec33.csv").pods
    assert any(p.gpu_models == ("V100M16", "V100M32") for p in constrained)

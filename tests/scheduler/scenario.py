"""Small hand-built replays for golden-timeline tests.

`replay_rows(tmp_path, nodes, workloads, profile)` writes the cluster and trace as CSV,
runs the real `replay` command and returns the event rows, so each test reads like a
story: these nodes, these workloads, this profile → exactly these events.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import yaml

import scheduler
from scheduler.commands import replay

NODE_COLUMNS = ("node", "gpu_model", "gpus", "cpu_milli", "memory_mib", "zone", "block", "rack", "pricing_category",
                "labels")
TRACE_COLUMNS = (
    "workload_id", "submit_time", "duration_s", "pods", "min_count", "gpus_per_pod", "gpu_model",
    "tenant", "queue", "priority", "checkpoint_interval_s", "topology_required", "topology_preferred",
    "parent_group", "parent_min_groups", "parent_topology_required", "cpu_milli_per_pod", "memory_mib_per_pod",
    "schedule_timeout_s", "kind", "disruption_mode", "on_pod_loss", "preemption_policy",
    "resource_claim_templates", "resource_claim",
)


def node(name: str, gpus: int = 8, model: str = "A100", rack: str = "r1") -> dict[str, Any]:
    return {"node": name, "gpu_model": model, "gpus": gpus, "cpu_milli": 0, "memory_mib": 0,
            "zone": "z1", "block": "b1", "rack": rack, "pricing_category": "Standard"}


def job(wid: str, at: float, duration: float, pods: int = 1, gpus: float = 8, *, min_count: int | None = None,
        priority: int = 0, model: str = "", checkpoint: float | None = None, tenant: str = "t",
        **extra: Any) -> dict[str, Any]:
    """One trace row; `extra` sets optional columns (topology_required, parent_group, …)."""
    row = {"workload_id": wid, "submit_time": at, "duration_s": duration, "pods": pods,
           "min_count": pods if min_count is None else min_count, "gpus_per_pod": gpus, "gpu_model": model,
           "tenant": tenant, "queue": "", "priority": priority, "checkpoint_interval_s": checkpoint or ""}
    return row | {column: "" for column in TRACE_COLUMNS if column not in row} | extra


def _write(path: Path, columns: tuple[str, ...], rows: list[dict[str, Any]]) -> Path:
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    return path


def lowest_index(profile: str) -> str:
    """`profile` (a shipped name or a TOML text) with ties among the best nodes to the lowest
    node index instead of the heap's order: for stories whose nodes follow the cluster
    file's order."""
    return with_tie_break(profile, "lowest_index")


def with_tie_break(profile: str, rule: str) -> str:
    """`profile` (a shipped name or a TOML text) with `tie_break = rule` (the usage-index walk
    answers under "random" and "lowest_index" only)."""
    text = profile if "\n" in profile else (Path(scheduler.__file__).parent / "profiles" / f"{profile}.toml").read_text()
    pin = f'tie_break = "{rule}"'
    if re.search(r"^tie_break\s*=", text, flags=re.M):
        return re.sub(r"^tie_break\s*=.*$", pin, text, flags=re.M)
    if "[behaviour]\n" in text:
        return text.replace("[behaviour]\n", f"[behaviour]\n{pin}\n", 1)
    return f"{text}\n[behaviour]\n{pin}\n"


def replay_rows(tmp_path: Path, nodes: list[dict[str, Any]], workloads: list[dict[str, Any]],
                profile: str, seed: int = 1, resizes: list[tuple[str, float, int]] | None = None,
                dra: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """`profile` is a shipped name or a TOML text (written to a file for the replay); `dra`:
    ResourceSlices, DeviceClasses and claims as Kubernetes objects (docs/dra.md)."""
    cluster = _write(tmp_path / "cluster.csv", NODE_COLUMNS, nodes)
    trace = _write(tmp_path / "trace.csv", TRACE_COLUMNS, workloads)
    if "\n" in profile:
        (tmp_path / "profile.toml").write_text(profile)
        profile = str(tmp_path / "profile.toml")
    resize_file = None
    if resizes:
        resize_file = tmp_path / "resizes.csv"
        resize_file.write_text("workload_id,time_s,min_count\n" + "".join(f"{w},{t},{m}\n" for w, t, m in resizes))
    dra_file = None
    if dra:
        dra_file = tmp_path / "dra.yaml"
        dra_file.write_text(yaml.safe_dump_all(dra, sort_keys=False))
    out = tmp_path / "run"
    replay(trace, cluster, out, profile=profile, seed=seed, resizes=resize_file, dra=dra_file)
    return pq.read_table(out / "events.parquet").to_pylist()


def story(rows: list[dict[str, Any]], *, events: tuple[str, ...] | None = None) -> list[tuple[Any, ...]]:
    """(time, event, workload, pod, node) tuples: the golden timeline's shape."""
    return [
        (r["time_s"], r["event"], r["workload_id"], r["pod_index"], r["node"])
        for r in rows
        if events is None or r["event"] in events
    ]


def dra_preemption(profile: str) -> str:
    """`profile` (a shipped name or a TOML text) with `dra_preemption = true`: scheduler
    preemption frees GPUs claimed through DRA (KEP-5690, v1.38). Stories about
    workload-aware preemption under gang-v1.37, whose GPUs are claimed through DRA, need it:
    v1.35-v1.37 cannot preempt them."""
    text = profile if "\n" in profile else (Path(scheduler.__file__).parent / "profiles" / f"{profile}.toml").read_text()
    if re.search(r"^dra_preemption\s*=", text, flags=re.M):
        return re.sub(r"^dra_preemption\s*=.*$", "dra_preemption = true", text, flags=re.M)
    if "[behaviour]\n" in text:
        return text.replace("[behaviour]\n", "[behaviour]\ndra_preemption = true\n", 1)
    return f"{text}\n[behaviour]\ndra_preemption = true\n"


GANG_V137_PREEMPTING = dra_preemption("gang-v1.37")


# gang-v1.37 without the shared device claim: a group may mix GPU models (tests that steer
# workloads onto nodes by model use it, so the claim does not change their story).
GANG_V137_PER_POD_CLAIMS = """
name = "gang-v1.37-per-pod-claims"
unit = "pod_group"
[extension_points]
post_filter = ["WorkloadPreemption"]
"""


def kube_default_without_default_spread() -> str:
    """kube-default with PodTopologySpread's default constraints off (`defaultingType:
    List`): its pods are signed, so OpportunisticBatching reuses searches."""
    text = (Path(scheduler.__file__).parent / "profiles" / "kube-default.toml").read_text()
    return text.replace("[behaviour]\n", "[behaviour]\ndefault_topology_spread = false\n", 1)

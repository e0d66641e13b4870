"""Small clusters with a known best answer for ``advise quotas``, written as the files a user
gives (generic trace CSV, cluster CSV, Kueue YAML, price book)."""

from __future__ import annotations

from pathlib import Path

PRICES = """gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour
A100,3.00,2.00,1.00
"""
TRIALS = ("--trials", "4", "--batch", "2", "--seed", "7", "--seeds", "2")  # few trials and seeds: the tests stay fast
# gang-v1.37 with selectHost's pre-v1.35 uniform tie draw: a profile whose replays read their seed
RANDOM_TIES = """name = "gang-v1.37-random-ties"
unit = "pod_group"

[extension_points]
queue_sort = "PrioritySort"
filter = ["GpuFit", "NodeResourcesFit"]
score = [["LeastAllocated", 1]]
permit = []
post_filter = ["WorkloadPreemption"]

[behaviour]
group_device_claim = true
tie_break = "random"
"""
CLUSTER = "node,gpu_model,gpus\nnode-0,A100,4\nnode-1,A100,4\n"  # 8 GPUs, one flavor

_HEAD = """apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: a100
spec:
  nodeLabels:
    nvidia.com/gpu.product: A100
"""


def _queue(name: str, nominal: int, cohort: str | None, borrowing: int | None) -> str:
    limit = f"\n        borrowingLimit: {borrowing}" if borrowing is not None else ""
    return f"""---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: team-{name}
spec:{f'''
  cohortName: {cohort}''' if cohort else ''}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a100
      resources:
      - name: nvidia.com/gpu
        nominalQuota: {nominal}{limit}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: {name}
  namespace: {name}
spec:
  clusterQueue: team-{name}
"""


def _trace(rows: list[tuple[str, float, float, str]]) -> str:
    lines = ["workload_id,submit_time,duration_s,pods,gpus_per_pod,tenant,queue,gpu_model"]
    lines += [f"{team}-{i:03d},{submit},{duration},1,1,{team},{team},A100"
              for i, (team, submit, duration, _) in enumerate(rows)]
    return "\n".join(lines) + "\n"


def write_case(folder: Path, queues: str, rows: list[tuple[str, float, float, str]],
               objectives: str | None = None) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    files = {"trace": folder / "trace.csv", "cluster": folder / "cluster.csv", "queues": folder / "queues.yaml",
             "prices": folder / "prices.csv"}
    files["trace"].write_text(_trace(rows))
    files["cluster"].write_text(CLUSTER)
    files["queues"].write_text(queues)
    files["prices"].write_text(PRICES)
    files["random_ties"] = folder / "random-ties.toml"
    files["random_ties"].write_text(RANDOM_TIES)
    if objectives is not None:
        files["objectives"] = folder / "objectives.toml"
        files["objectives"].write_text(objectives)
    return files


def unused_quota_case(folder: Path) -> dict[str, Path]:
    """Team a keeps 8 one-GPU workloads queued at all times; team b never submits. Today each
    holds 4 GPUs and neither is in a cohort, so a waits while b's half is idle. Known best:
    a 8, b 0."""
    rows = [("a", float(i * 900), 7200.0, "") for i in range(48)]  # 4 GPUs of demand on average, in bursts
    rows += [("a", 0.0, 7200.0, "") for _ in range(8)]
    return write_case(folder, _HEAD + _queue("a", 4, None, None) + _queue("b", 4, None, None), rows)


def _objectives(teams: list[str]) -> str:
    targets = "".join(f"[team.{team}]\np95_wait_hours = 0.5\n" for team in teams)
    return f"{targets}\n[search]\nborrowing_limit = [0, 8]\n"


def non_overlapping_case(folder: Path, teams: tuple[str, ...] = ("a", "b")) -> dict[str, Path]:
    """The teams take turns: each needs all 8 GPUs for two hours, starting 4 h after the one
    before, so no two ever run at once. They sit in one cohort with the GPUs split evenly
    (the rest to the first) but may not borrow today, so each waits for most of its work. Known
    best: each may reach 8 GPUs (nominal + borrowingLimit >= 8), and nobody waits."""
    rows = [(team, k * 4 * 3600.0, 7200.0, "") for k, team in enumerate(teams) for _ in range(8)]
    share = 8 // len(teams)
    queues = "".join(_queue(team, share + (8 - share * len(teams) if k == 0 else 0), "shared", 0)
                     for k, team in enumerate(teams))
    return write_case(folder, _HEAD + queues, rows, _objectives(list(teams)))


def advise_args(files: dict[str, Path], out: Path, *extra: str) -> list[str]:
    """The command line; with more than one ``--seeds`` and no ``--profile``, the random-ties
    profile, so the seeds change the replays (under gang-v1.37 itself one replay is run)."""
    args = ["advise", "quotas", "--trace", str(files["trace"]), "--cluster", str(files["cluster"]),
            "--queues", str(files["queues"]), "--prices", str(files["prices"]), "--out", str(out), "-q"]
    if "--seeds" in extra and extra[extra.index("--seeds") + 1] != "1" and "--profile" not in extra:
        args += ["--profile", str(files["random_ties"])]
    if "objectives" in files:
        args += ["--objectives", str(files["objectives"])]
    return [*args, *extra]

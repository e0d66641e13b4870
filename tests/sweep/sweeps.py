"""Sweep files and helpers shared by the sweep tests."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# Four scenarios of the tiny preset: two profiles x two scoring plugins (Kueue queues on).
TINY_SWEEP = """\
[sweep]
name = "tiny4"

[inputs]
preset = "tiny"

[grid]
profiles = ["gang-v1.37", "kube-default"]
scoring = ["LeastAllocated", "MostAllocated"]
"""
TINY_SCENARIOS = ("gang-v1.37_LeastAllocated", "gang-v1.37_MostAllocated", "kube-default_LeastAllocated",
                  "kube-default_MostAllocated")


def write_sweep(folder: Path, text: str = TINY_SWEEP, name: str = "sweep.toml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def write_heavy_trace(path: Path, workloads: int = 10_000) -> Path:
    """Single-GPU workloads arriving every 5 s for an hour each: a replay of several seconds,
    long enough to find its worker and kill it."""
    rows = ["workload_id,submit_time,duration_s,pods,gpus_per_pod"]
    rows += [f"w{i},{i * 5},3600,1,1" for i in range(workloads)]
    path.write_text("\n".join(rows) + "\n")
    return path


def kill_sweep_spec(folder: Path) -> Path:
    """A victim scenario (the heavy trace, no Kueue) and two tiny ones."""
    write_heavy_trace(folder / "heavy.csv")
    return write_sweep(folder, """\
[sweep]
name = "kill"

[inputs]
preset = "tiny"

[[scenario]]
name = "victim"
profile = "kube-default"
trace = "heavy.csv"
queues = "none"

[[scenario]]
name = "gang"
profile = "gang-v1.37"

[[scenario]]
name = "default"
profile = "kube-default"
""")


def sweep_process(spec: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "gpu_finops.cli", "sweep", str(spec), "--out", str(out), "-q",
                             *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)



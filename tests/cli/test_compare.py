"""`gpu-finops compare`: the no-gang baseline and the gang scheduler side by side."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gpu_finops.generator import generate
from scheduler.commands import replay


def gpu_finops(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "gpu_finops.cli", *args], capture_output=True, text=True,
                          timeout=300, env={"COLUMNS": "160", "PATH": ""})


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("compare")
    generate("tiny", root / "inputs", seed=3)
    runs = [
        replay(root / "inputs" / "trace.csv", root / "inputs" / "cluster.csv", root / profile,
               profile=profile, seed=3, run_id=f"tiny-{profile}").run_dir
        for profile in ("kube-default", "gang-v1.37")
    ]
    return runs[0], runs[1], root / "inputs" / "prices.csv"


def test_compare_prints_every_metric_side_by_side(two_runs):
    baseline, gang, prices = two_runs
    result = gpu_finops("compare", str(baseline), str(gang), "--prices", str(prices))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for metric in ("partial placement GPU-hours", "idle GPU-hours: fragmentation", "idle GPU-hours: no demand",
                   "mean wait (h)", "p95 wait (h)", "preemptions", "lost to preemption GPU-hours",
                   "cost: Unallocated (idle) (USD)", "cost: alpha (USD)"):
        assert metric in out, metric
    assert "__" not in out and "_wait" not in out and "no_demand" not in out  # no internal name
    assert "tiny-kube-default" in out and "tiny-gang-v1.37" in out
    partial = next(line for line in out.splitlines() if "partial placement GPU-hours" in line)
    baseline_value, gang_value = (float(cell.replace(",", "")) for cell in partial.split("│")[2:4])
    assert baseline_value > 0 and gang_value == 0  # the waste gang scheduling removes


def test_compare_needs_prices_for_run_directories(two_runs):
    baseline, gang, _ = two_runs
    result = gpu_finops("compare", str(baseline), str(gang))
    assert result.returncode == 2
    assert "--prices" in result.stderr and "Traceback" not in result.stderr

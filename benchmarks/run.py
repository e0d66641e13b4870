"""`make bench`: replay throughput and peak memory per profile, and the pipeline build, on
the generated presets, measured side by side in one run so ratios survive a noisy machine.

Each measurement runs in its own Python process, so its peak RSS is its own. Presets:
`demo` always; `large` (≥ 200,000 pods on ≥ 2,000 nodes) with `--large`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

PROFILES = ("gang-v1.37", "gang-v1.35", "coscheduling", "kube-default")
# A replay of the large preset may take many minutes under the thrashing profiles; each
# cell gets this long and reports "did not finish" rather than holding the bench hostage.
LARGE_CAP_S = 900

_REPLAY = """
import json, resource, sys, time
from pathlib import Path
from scheduler.commands import replay
inputs, out, profile = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
began = time.perf_counter()
result = replay(inputs / "trace.csv", inputs / "cluster.csv", out, profile=profile, seed=42)
elapsed = time.perf_counter() - began
manifest = json.loads((out / "run.json").read_text())
print(json.dumps({"seconds": elapsed, "pods": manifest["counts"]["pods"], "events": result.events,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_BUILD = """
import json, resource, sys, time
from pathlib import Path
from pipeline.build import build
runs, prices, db = [Path(p) for p in sys.argv[1].split(",")], Path(sys.argv[2]), Path(sys.argv[3])
began = time.perf_counter()
result = build(runs, prices, db, show_progress=False)
elapsed = time.perf_counter() - began
rows = result.row_counts.get("focus_cost_records", 0)
print(json.dumps({"seconds": elapsed, "rows": rows,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _measure(script: str, *args: str, timeout: float | None = None) -> dict[str, float] | None:
    try:
        done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=False,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise SystemExit(f"benchmark step failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make bench")
    parser.add_argument("--large", action="store_true", help="also the large preset (minutes to an hour)")
    parser.add_argument("--large-cap", type=float, default=LARGE_CAP_S, help="seconds per large replay")
    args = parser.parse_args(argv)
    from scheduler.generator import generate

    console = Console()
    presets = ["demo"] + (["large"] if args.large else [])
    with tempfile.TemporaryDirectory(prefix="gpu-finops-bench-") as tmp:
        root = Path(tmp)
        table = Table(title="replay throughput (one process per cell)")
        for column in ("preset", "profile", "pods", "events", "seconds", "pods/s", "events/s",
                       "peak RSS MiB", "time ÷ gang-v1.37"):
            table.add_column(column, justify="right")
        builds = Table(title="pipeline build (hourly charge periods)")
        for column in ("preset", "runs", "FOCUS rows", "seconds", "rows/s", "peak RSS MiB"):
            builds.add_column(column, justify="right")
        for preset in presets:
            inputs = root / preset / "inputs"
            generate(preset, inputs, seed=42)
            baseline = None
            run_dirs = []
            for profile in PROFILES:
                out = root / preset / profile
                m = _measure(_REPLAY, str(inputs), str(out), profile,
                             timeout=args.large_cap if preset == "large" else None)
                if m is None:
                    table.add_row(preset, profile, "", "", f"> {args.large_cap:.0f}", "did not finish", "", "", "")
                    continue
                baseline = baseline or m["seconds"]
                run_dirs.append(str(out))
                table.add_row(preset, profile, f"{m['pods']:,}", f"{m['events']:,}", f"{m['seconds']:.1f}",
                              f"{m['pods'] / m['seconds']:,.0f}", f"{m['events'] / m['seconds']:,.0f}",
                              f"{m['peak_rss_mib']:,.0f}", f"{m['seconds'] / baseline:.2f}")
            b = _measure(_BUILD, ",".join(run_dirs), str(inputs / "prices.csv"), str(root / preset / "bench.duckdb"))
            if b is None or not run_dirs:
                continue
            builds.add_row(preset, str(len(run_dirs)), f"{b['rows']:,}", f"{b['seconds']:.1f}",
                           f"{b['rows'] / b['seconds']:,.0f}", f"{b['peak_rss_mib']:,.0f}")
        console.print(table)
        console.print(builds)
    # the pipeline on the large preset, hourly periods (its event log synthesized: see the module)
    from benchmarks.pipeline import bench_large_build

    console.print(bench_large_build("large", seed=42, console=console))
    # each dashboard page's query time on the large database (built once, then reused)
    from benchmarks.dashboard import dashboard_bench

    console.print(dashboard_bench(console))
    # peak memory of a 10-million-row trace read as a stream (benchmarks/memory.py)
    from benchmarks.memory import trace_memory_table

    console.print(trace_memory_table(console=console))
    return 0


if __name__ == "__main__":
    sys.exit(main())

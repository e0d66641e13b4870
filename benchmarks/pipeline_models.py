"""Time every SQL model and audit of a pipeline build (wall and CPU seconds), slowest first.

Builds the given run directories exactly as `pipeline.build.build` does, with `run_model`
wrapped in a timer, so the figures are those of a real build. CPU seconds (every DuckDB
thread) are the steadier measure on a shared machine.

    .venv/bin/python -m benchmarks.pipeline_models RUN_DIR [RUN_DIR ...] --prices PRICES --db DB
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import pipeline.build as build_module
from pipeline.build import run_audits
from pipeline.runner import run_model


def timed_build(run_dirs: list[Path], prices: Path, db: Path) -> tuple[dict[str, tuple[float, float]], dict]:
    """(model -> (wall s, CPU s)), and the build's totals."""
    timings: dict[str, tuple[float, float]] = {}

    def timed(con, model, columns=None, virtual=None):
        wall, cpu = time.perf_counter(), time.process_time()
        run_model(con, model, columns, virtual)
        timings[model.name] = (time.perf_counter() - wall, time.process_time() - cpu)

    def timed_audits(con):
        failures = []
        for path in build_module.audit_paths():
            wall, cpu = time.perf_counter(), time.process_time()
            rows = con.execute(path.read_text()).fetchall()
            timings[f"audit {path.stem}"] = (time.perf_counter() - wall, time.process_time() - cpu)
            if rows:
                failures.append((path.stem, len(rows), repr(rows[0])))
        return failures

    build_module.run_model = timed
    build_module.run_audits = timed_audits
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        result = build_module.build(run_dirs, prices, db, charge_period_s=3600, show_progress=False)
        totals = {
            "seconds": time.perf_counter() - wall,
            "cpu_seconds": time.process_time() - cpu,
            "rows": result.row_counts.get("focus_cost_records", 0),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    finally:
        build_module.run_model = run_model
        build_module.run_audits = run_audits
    return timings, totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.pipeline_models")
    parser.add_argument("run_dirs", nargs="+", type=Path)
    parser.add_argument("--prices", type=Path, required=True)
    parser.add_argument("--db", type=Path, required=True)
    args = parser.parse_args(argv)
    timings, totals = timed_build(args.run_dirs, args.prices, args.db)
    for name, (wall, cpu) in sorted(timings.items(), key=lambda item: -item[1][0]):
        print(f"{name:32s} {wall:8.2f} s wall {cpu:8.2f} s CPU")
    models_wall = sum(wall for name, (wall, _) in timings.items() if not name.startswith("audit "))
    audits_wall = sum(wall for name, (wall, _) in timings.items() if name.startswith("audit "))
    print(
        f"models {models_wall:.2f} s; audits {audits_wall:.2f} s; build {totals['seconds']:.2f} s wall, {totals['cpu_seconds']:.2f} s CPU, "
        f"{totals['rows']:,} FOCUS rows, peak RSS {totals['peak_rss_mib']:,.0f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The AAIC gang replay and its report: `gpu-finops experiment aaic --trace … --out DIR`.

Replays an AAIC quarter log (default: the 2017Q4 file, 93,497 jobs) on its documented
cluster (40 nodes × 8 GPUs; `--nodes` or `--cluster` override it) three times:

- ``kube-default``      pod by pod, no gang awareness;
- ``gang-v1.37``        the pod group scheduled in one cycle;
- ``gang-v1.37-kueue``  the same behind Kueue: a ClusterQueue + LocalQueue per AAIC queue,
                        all in one cohort (generated from the log's queues).

Each replay runs in its own process and is timed (wall seconds, peak RSS). Then the three
runs are built into one DuckDB file with an illustrative P100 price book, and the report
puts, side by side, the recorded queueing delay (``waittime``) and each replay's simulated
wait (per queue, per job size, per group), and the GPU-hours and cost per group.

Outputs in DIR: ``inputs/`` (cluster.csv, queues.yaml, prices.csv), ``runs/<label>/``,
``aaic.duckdb``, ``report.md`` and the CSVs it summarises (waits.csv, wait_by_queue.csv,
wait_by_size.csv, wait_by_group.csv, cost_by_group.csv, timings.csv).

The AAIC log stays where it is (its licence forbids copies in the repository): point
``--trace`` at ``../shared/traces/aaic-2017/aaicwl-2017Q4.csv.gz``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gpu_finops.experiments.aaic_inputs import (
    compare_waits,
    wait_summary,
    write_aaic_inputs,
    write_long_profile,
)
from scheduler.trace.aaic import default_cluster, natural_start, read_aaic_jobs
from scheduler.trace.inventories import read_any_cluster
from scheduler.trace.io import atomic_write_text, csv_text

RUNS = (
    ("kube-default", "kube-default", False),
    ("gang-v1.37", "gang-v1.37", False),
    ("gang-v1.37-kueue", "gang-v1.37", True),
)

_REPLAY = """
import json, resource, sys, time
from pathlib import Path
from scheduler.commands import replay
trace, cluster, out, profile, run_id = sys.argv[1:6]
queues = Path(sys.argv[6]) if len(sys.argv) > 6 else None
began = time.perf_counter()
result = replay(Path(trace), Path(cluster), Path(out), profile=profile, seed=42, queues=queues,
                trace_format="aaic", run_id=run_id)
print(json.dumps({"seconds": time.perf_counter() - began, "events": result.events,
                  "workloads": result.workloads, "rejected": result.rejected_rows,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

_COST_SQL = """
SELECT x_RunId AS run_id, x_Tenant AS tenant,
       -- capacity on every Usage row (idle rows consume nothing)
       round(SUM(PricingQuantity) FILTER (WHERE ChargeCategory = 'Usage'), 1) AS gpu_hours,
       round(SUM(EffectiveCost), 2) AS effective_cost_usd
FROM focus_cost_records
GROUP BY ALL
ORDER BY tenant, run_id
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `gpu-finops experiment aaic` (and `python -m benchmarks.aaic_replay`)."""
    parser.add_argument("--trace", required=True, help="an AAIC quarter log (aaicwl-2017Q4.csv.gz)")
    parser.add_argument("--out", required=True, help="folder for inputs/, runs/, aaic.duckdb, report.md and CSVs")
    parser.add_argument("--nodes", type=int, default=40, help="nodes of 8 GPUs (the README: 40)")
    parser.add_argument("--cluster", help="a node list instead of the documented cluster")
    parser.add_argument("--runs", default=",".join(label for label, _, _ in RUNS),
                        help="which replays, comma-separated (%(default)s)")
    parser.add_argument("--no-build", action="store_true", help="replays and waits only, no cost")
    parser.add_argument("--cap-s", type=float, default=900.0,
                        help="stop a replay after this many seconds and report it unfinished (900)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.aaic_replay", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


def run(args: argparse.Namespace) -> int:
    from scheduler.errors import InputError

    console = Console(quiet=bool(getattr(args, "quiet", False)))
    unknown = [r for r in args.runs.split(",") if r not in {label for label, _, _ in RUNS}]
    if unknown:
        raise InputError("--runs", f"unknown run {unknown[0]!r}; known: {', '.join(label for label, _, _ in RUNS)}")
    out, trace = Path(args.out), Path(args.trace)
    jobs = read_aaic_jobs(trace)
    cluster = read_any_cluster(Path(args.cluster)) if args.cluster else default_cluster(args.nodes)
    inputs = write_aaic_inputs(jobs, cluster, out / "inputs")
    chosen = [r for r in RUNS if r[0] in args.runs.split(",")]
    stem = trace.name.split(".")[0].removeprefix("aaicwl-")
    # The shipped profiles stop at 90 simulated days; a quarter log is longer.
    span_s = max(j.time_submit for j in jobs.jobs) - natural_start(jobs).timestamp()
    profiles = {profile: write_long_profile(profile, span_s + 30 * 86400, out / "inputs")
                for profile in {p for _, p, _ in chosen}}

    timings = Table(title=f"AAIC {stem} replay: {len(jobs.jobs):,} jobs on {len(cluster.nodes)} nodes, "
                          f"{cluster.total_gpus} GPUs (one process per replay)")
    for column in ("run", "profile", "workloads", "rejected", "events", "seconds", "peak RSS MiB"):
        # names whole (rich would cut "gang-v1.37-kueue" to "gang-v1.…" at 80 columns)
        timings.add_column(column, justify="right", no_wrap=column in ("run", "profile"),
                           min_width=16 if column in ("run", "profile") else None)
    run_dirs: dict[str, Path] = {}
    timing_rows: list[list[object]] = []
    for label, profile, with_queues in chosen:
        run_dir = out / "runs" / label
        command = [sys.executable, "-c", _REPLAY, str(trace), str(inputs.cluster), str(run_dir), str(profiles[profile]),
                   f"aaic-{stem}-{label}"] + ([str(inputs.queues)] if with_queues else [])
        try:
            with console.status(f"replaying {label} ({len(timing_rows) + 1} of {len(chosen)})"):
                done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=args.cap_s)
        except subprocess.TimeoutExpired:
            for staging in run_dir.parent.glob(f".{run_dir.name}.tmp-*"):  # the killed replay's
                shutil.rmtree(staging, ignore_errors=True)
            timing_rows.append([label, profile, "", "", "", f"> {args.cap_s:.0f} (stopped)", ""])
            timings.add_row(*(str(v) for v in timing_rows[-1]))
            continue
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise InputError(trace, f"the {label} replay failed: {last}")
        m = json.loads(done.stdout.strip().splitlines()[-1])
        run_dirs[label] = run_dir
        timing_rows.append([label, profile, m["workloads"], m["rejected"], m["events"], round(m["seconds"], 1),
                            round(m["peak_rss_mib"])])
        timings.add_row(*(f"{v:,}" if isinstance(v, int) else str(v) for v in timing_rows[-1]))
    console.print(timings)
    atomic_write_text(out / "timings.csv", csv_text(
        ("run", "profile", "workloads", "rejected_rows", "events", "seconds", "peak_rss_mib"), timing_rows))

    waits = compare_waits(jobs, run_dirs)
    atomic_write_text(out / "waits.csv", csv_text(*waits))
    summaries = {by: wait_summary(jobs, run_dirs, by=by) for by in ("queue", "size", "group")}
    for by, table in summaries.items():
        atomic_write_text(out / f"wait_by_{by}.csv", csv_text(*table))

    costs: list[tuple[str, str, float, float]] = []
    build_seconds = None
    if not args.no_build:
        from pipeline.build import build
        from pipeline.connect import connect

        began = time.perf_counter()
        console.print(f"building cost records of {len(run_dirs)} runs → {out / 'aaic.duckdb'}")
        build(list(run_dirs.values()), inputs.prices, out / "aaic.duckdb", show_progress=not console.quiet)
        build_seconds = time.perf_counter() - began
        with connect(out / "aaic.duckdb", read_only=True) as db:
            costs = db.execute(_COST_SQL).fetchall()
        atomic_write_text(out / "cost_by_group.csv",
                          csv_text(("run_id", "tenant", "gpu_hours", "effective_cost_usd"), costs))
    report = _report(stem, jobs, cluster, timing_rows, summaries, costs, build_seconds, waits)
    atomic_write_text(out / "report.md", report)
    console.print(f"report: {out / 'report.md'}")
    return 0


def _markdown(header: list[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(f"{v:,}" if isinstance(v, int) else str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _report(stem, jobs, cluster, timing_rows, summaries, costs, build_seconds, waits) -> str:
    header, rows = waits
    labels = [h.removesuffix("_wait_s") for h in header if h.endswith("_wait_s") and h != "recorded_wait_s"]
    never = {label: sum(1 for r in rows if r[header.index(f"{label}_wait_s")] == "") for label in labels}
    parts = [
        f"# AAIC {stem}: recorded waits vs replayed waits, and cost per group\n",
        "The AAIC workload log was graciously provided by AIRC, AIST (Takizawa, Ogawa, Takano, "
        "\"AAIC Workload\", 2019).\n",
        f"{len(jobs.jobs):,} jobs ({len(jobs.rejected)} unreadable rows) on {len(cluster.nodes)} nodes × "
        f"{cluster.nodes[0].gpus} GPUs ({cluster.total_gpus} GPUs, model {cluster.nodes[0].gpu_model}: "
        "an assumption, the log does not name it). Simulated wait = start of the run that completed − "
        "submission; the recorded wait is the log's `waittime` under the real FCFS + backfill scheduler. "
        "Statistics are over the jobs every replay completed.\n",
        "## Replays\n",
        _markdown(["run", "profile", "workloads", "rejected rows", "events", "seconds", "peak RSS MiB"], timing_rows),
        "Jobs without a completed run at the end of each replay (the log's jobs that ran 0 s are "
        "quarantined, so never run): " + ", ".join(f"{label} {count:,}" for label, count in never.items()) + ".\n",
    ]
    titles = {"queue": "Waits per AAIC queue (s)", "size": "Waits per job size (s)", "group": "Waits per group (s)"}
    for by, (table_header, table_rows) in summaries.items():
        parts += [f"## {titles[by]}\n", _markdown(table_header, table_rows)]
    if costs:
        runs = sorted({run for run, *_ in costs})
        by_tenant: dict[str, dict[str, tuple[float, float]]] = {}
        for run, tenant, hours, usd in costs:
            by_tenant.setdefault(tenant, {})[run] = (hours, usd)
        cost_header = ["group"] + [f"{r} GPU-h" for r in runs] + [f"{r} USD" for r in runs]
        cost_rows = [
            [tenant] + [by_tenant[tenant].get(r, ("", ""))[0] for r in runs]
            + [by_tenant[tenant].get(r, ("", ""))[1] for r in runs]
            for tenant in sorted(by_tenant)
        ]
        parts += [
            "## GPU-hours and cost per group (FOCUS EffectiveCost, illustrative P100 prices)\n",
            _markdown(cost_header, cost_rows),
            f"Built into one DuckDB file in {build_seconds:.0f} s. `__idle__` is unallocated capacity.\n",
        ]
    return "\n".join(parts)


if __name__ == "__main__":
    sys.exit(main())

"""Query time of every dashboard page on the large synthetic database (goal: < 300 ms a page).

The database is built once (generate the `large` preset → an event log of its volume, see
``build_database`` → build) and kept at ``$GPU_FINOPS_BENCH_DB`` or
``benchmarks/.cache/large.duckdb`` (ignored by git), so later runs only time the queries. Each page's time is the sum of the
``dashboards.data`` calls the page makes on its first load with the default filters (the whole
run, all teams, all GPU models), measured on a fresh connection, best of three.

    .venv/bin/python -m benchmarks.dashboard [--db P] [--rebuild] [--preset large]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

GOAL_MS = 300.0
DEFAULT_DB = Path(__file__).resolve().parent / ".cache" / "large.duckdb"
PROFILES = ("gang-v1.37", "kube-default")


def default_db(preset: str = "large") -> Path:
    """``$GPU_FINOPS_BENCH_DB``, else the preset's cached database under benchmarks/.cache/."""
    value = os.environ.get("GPU_FINOPS_BENCH_DB", "").strip()
    return Path(value).expanduser() if value else DEFAULT_DB.with_name(f"{preset}.duckdb")


def build_database(db: Path, preset: str = "large", console: Console | None = None,
                   replay: bool = False) -> Path:
    """generate → event log → build into ``db``; the run folders are temporary.

    The event log comes from ``benchmarks.pipeline.synthesize_run`` (the volume of a real replay
    in seconds; a real replay of the large preset takes the scheduler most of an hour on two
    cores) or, with ``replay``, from the scheduler under gang-v1.37 and kube-default.
    """
    from gpu_finops.generator import generate
    from pipeline.build import build

    say = console.print if console else (lambda *_: None)
    with tempfile.TemporaryDirectory(prefix="gpu-finops-bench-dash-") as tmp:
        root = Path(tmp)
        began = time.perf_counter()
        files = generate(preset, root / "inputs", seed=42)
        say(f"generated {preset}: {files.pods:,} pods on {files.nodes:,} nodes")
        run_dirs = []
        if replay:
            from scheduler.commands import replay as replay_trace

            for profile in PROFILES:
                result = replay_trace(files.trace, files.cluster, root / profile, profile=profile,
                                      seed=42, queues=files.queues, run_id=f"{preset}-{profile}")
                run_dirs.append(result.run_dir)
                say(f"replayed {profile}: {result.events:,} events "
                    f"({time.perf_counter() - began:.0f}s so far)")
        else:
            from benchmarks.pipeline import synthesize_run

            counts = synthesize_run(root / "inputs", root / "synthetic", seed=42,
                                    run_id=f"{preset}-synthetic")
            run_dirs.append(root / "synthetic")
            say(f"synthesized an event log: {counts} ({time.perf_counter() - began:.0f}s)")
        db.parent.mkdir(parents=True, exist_ok=True)
        build(run_dirs, files.prices, db, show_progress=False)
        say(f"built {db} in {time.perf_counter() - began:.0f}s")
    return db


def page_queries(con: Any, db: Path) -> dict[str, list[tuple[str, Callable[[], Any]]]]:
    """For each page, the data.py calls its first load makes (default filters, whole run)."""
    from dashboards import data, sql

    runs = data.list_runs(con)
    run_id = str(runs["run_id"].iloc[0])
    other = str(runs["run_id"].iloc[1]) if len(runs) > 1 else run_id
    first, last = data.run_date_range(con, run_id) or (None, None)
    filters = data.Filters(run_id, first, last)
    whole = data.Filters(run_id)
    bucket = data.pick_time_bucket(filters, (first, last) if first else None)
    costliest = data.costliest_workloads(con, filters, limit=1)
    expensive = str(costliest["workload_id"].iloc[0]) if not costliest.empty else ""
    longest = data.search_workloads(con, run_id, "", limit=1)
    waiting = str(longest["workload_id"].iloc[0]) if not longest.empty else ""
    example = sql.saved_query("cost_per_team_per_week").sql
    has_queues = not data.list_cluster_queues(con, filters).empty
    return {
        "sidebar (every page)": [
            ("list_runs", lambda: data.list_runs(con)),
            ("run_date_range", lambda: data.run_date_range(con, run_id)),
            ("list_tenants", lambda: data.list_tenants(con, run_id)),
            ("list_gpu_models", lambda: data.list_gpu_models(con, run_id)),
            ("run_phases", lambda: data.run_phases(con, run_id)),
        ],
        "Overview": [
            ("headline_metrics", lambda: data.headline_metrics(con, filters)),
            ("spend_by_team", lambda: data.spend_by_team(con, filters)),
            ("idle_cost_by_cause", lambda: data.idle_cost_by_cause(con, filters)),
            ("usage_class_over_time", lambda: data.usage_class_over_time(con, filters, bucket)),
            ("costliest_workloads", lambda: data.costliest_workloads(con, filters)),
            ("partial_placement_workloads", lambda: data.partial_placement_workloads(con, filters)),
            ("savings", lambda: data.savings(con, filters)),
            ("training_run_costs", lambda: data.training_run_costs(con, filters)),
        ],
        "Teams": [
            ("team_showback", lambda: data.team_showback(con, filters, "separate")),
            ("team_cost_over_time",
             lambda: data.team_cost_over_time(con, filters, bucket, "separate")),
            ("waiting_cost_by_team", lambda: data.waiting_cost_by_team(con, filters)),
            ("eviction_losses", lambda: data.eviction_losses(con, filters)),
        ],
        "Idle GPUs": [
            ("headline_metrics", lambda: data.headline_metrics(con, filters)),
            ("idle_cost_by_cause", lambda: data.idle_cost_by_cause(con, filters)),
            ("idle_by_cause_over_time", lambda: data.idle_by_cause_over_time(con, filters, bucket)),
            ("idle_heatmap", lambda: data.idle_heatmap(con, filters, "rack", bucket)),
            ("fragmentation_by_model", lambda: data.fragmentation_by_model(con, filters)),
            ("idle_by_payment", lambda: data.idle_by_payment(con, filters)),
            ("commitment_pools", lambda: data.commitment_pools(con, run_id)),
            ("unservable_demand", lambda: data.unservable_demand(con, filters)),
        ],
        # the page's two branches: quota charts, or GPUs held when the run has no quota usage
        "Queues": [("list_cluster_queues", lambda: data.list_cluster_queues(con, filters)), *(
            [("queue_usage_over_time", lambda: data.queue_usage_over_time(con, filters, bucket)),
             ("queue_usage_summary", lambda: data.queue_usage_summary(con, filters)),
             ("borrowed_by_team", lambda: data.borrowed_by_team(con, filters))]
            if has_queues else
            [("cluster_queue_holdings",
              lambda: data.cluster_queue_holdings(con, filters, bucket))])],
        "Pending": [
            ("pending_workloads", lambda: data.pending_workloads(con, filters)),
            ("search_workloads", lambda: data.search_workloads(con, run_id, "")),
            ("workload_details", lambda: data.workload_details(con, run_id, waiting)),
            ("workload_timeline", lambda: data.workload_timeline(con, run_id, waiting)),
            ("queue_position", lambda: data.queue_position(con, run_id, waiting)),
        ],
        "Preemption": [
            ("preemption_victims", lambda: data.preemption_victims(con, filters)),
            ("preemption_loss", lambda: data.preemption_loss(con, filters)),
            ("preemption_over_time", lambda: data.preemption_over_time(con, filters, bucket)),
        ],
        "Scenarios": [
            ("scenario_compare", lambda: data.scenario_compare(con, whole, other)),
            ("scenario_usage", lambda: data.scenario_usage(con, whole, other)),
            ("scenario_by_team", lambda: data.scenario_by_team(con, whole, other)),
        ],
        "Workload detail": [
            ("costliest_workloads", lambda: data.costliest_workloads(con, filters, 50)),
            ("workload_details", lambda: data.workload_details(con, run_id, expensive)),
            ("workload_pods", lambda: data.workload_pods(con, run_id, expensive)),
            ("workload_timeline", lambda: data.workload_timeline(con, run_id, expensive)),
        ],
        "SQL (saved example)": [
            ("query_frame", lambda: sql.query_frame(db, example, max_rows=5000)),
        ],
    }


def time_pages(db: Path, repeats: int = 3) -> list[tuple[str, float, list[tuple[str, float]]]]:
    """(page, total ms, [(query, ms)]) per page; each query's best of ``repeats``."""
    from dashboards import data

    con = data.connect_read_only(db)
    try:
        results = []
        for page, calls in page_queries(con, db).items():
            timed = []
            for name, call in calls:
                best = float("inf")
                for _ in range(repeats):
                    began = time.perf_counter()
                    call()
                    best = min(best, (time.perf_counter() - began) * 1000)
                timed.append((name, best))
            results.append((page, sum(ms for _, ms in timed), timed))
        return results
    finally:
        con.close()


def report(db: Path, console: Console) -> Table:
    from dashboards import data

    con = data.connect_read_only(db)
    try:
        runs = data.list_runs(con)
        rows = con.execute("SELECT count(*) FROM focus_cost_records").fetchone()[0]
    finally:
        con.close()
    table = Table(title=f"dashboard page query time ({len(runs)} runs, {rows:,} FOCUS rows; "
                        f"goal < {GOAL_MS:.0f} ms a page)")
    for column in ("page", "ms", "goal", "slowest query"):
        table.add_column(column, justify="left" if column in ("page", "slowest query") else "right")
    for page, total, timed in time_pages(db):
        name, slowest = max(timed, key=lambda t: t[1])
        table.add_row(page, f"{total:,.0f}", "ok" if total < GOAL_MS else "SLOW",
                      f"{name} {slowest:,.0f} ms")
    return table


def dashboard_bench(console: Console, db: Path | None = None, preset: str = "large") -> Table:
    """The table `make bench` prints: builds the large database first if it is not cached."""
    db = db or default_db(preset)
    if not db.is_file():
        console.print(f"building the {preset} database for the dashboard timings once → {db}")
        build_database(db, preset, console)
    return report(db, console)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dashboard")
    parser.add_argument("--db", type=Path, default=None,
                        help="database to time (default: $GPU_FINOPS_BENCH_DB or the cache)")
    parser.add_argument("--preset", default="large")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the database first")
    parser.add_argument("--replay", action="store_true",
                        help="build from real replays (most of an hour) instead of a synthesized log")
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 200)  # a log keeps whole tables
    db = args.db or default_db(args.preset)
    if args.rebuild or not db.is_file():
        console.print(f"building the {args.preset} database once (minutes) → {db}")
        build_database(db, args.preset, console, replay=args.replay)
    console.print(dashboard_bench(console, db, args.preset))
    return 0


if __name__ == "__main__":
    sys.exit(main())

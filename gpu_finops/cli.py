"""`gpu-finops`: one console script, one sub-command per stage or surface.

User errors (bad input, missing files, refused SQL) print ONE line on stderr and exit 2;
no traceback. Ctrl-C at any moment once this module runs (start-up included) prints one line
and exits 130. Every line printed from user text has its control characters neutralised
(`printable`): a tenant or file name cannot send escape sequences to the terminal. Imports
are lazy so `gpu-finops --help` is instant and a command pulls in only the stage it needs.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

EXIT_USER_ERROR = 2
EXIT_VIOLATIONS = 1
EXIT_VERIFY_FAILED = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report it


def _shown(text: object) -> str:
    """User text for the terminal: control characters made visible (␛ for ESC)."""
    from scheduler.eventlog.text import printable

    return printable(str(text))


def _say(line: str) -> int:  # a user error's one line on stderr; its exit status
    print(line, file=sys.stderr)
    return EXIT_USER_ERROR


def _user_errors() -> tuple[type[BaseException], ...]:
    from dashboards.errors import DashboardError
    from pipeline.errors import PipelineError
    from scheduler.compiled import SourceMissing
    from scheduler.errors import InputError
    from scheduler.eventlog.files import NotOurs
    from scheduler.eventlog.writes import WriteFailed

    # NotOurs: an output that would replace a user's file or an input (`OutputRefused`), or
    # another writer held too long; WriteFailed: a full disk or a read-only folder.
    return (InputError, PipelineError, DashboardError, FileNotFoundError, NotOurs, WriteFailed, SourceMissing)


def _cmd_generate(args: argparse.Namespace) -> int:
    from gpu_finops.generator import generate

    files = generate(args.preset, Path(args.out), seed=args.seed)
    print(f"generated {files.workloads:,} workloads ({files.pods:,} pods) on {files.nodes:,} nodes "
          f"({files.gpus:,} GPUs), offered load {files.offered_load:.0%}")
    for path in (files.trace, files.cluster, files.queues, files.prices, *([files.dra] if files.dra else [])):
        print(f"  {path}")
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    from gpu_finops.progress import rejected_rows, replay_progress
    from scheduler.commands import replay
    from scheduler.verify import VerificationError, Verifier

    verifier = Verifier() if args.verify else None
    # What the replay built dies with the process: frozen at exit, it is not walked and freed
    # object by object by the interpreter's last full collection (a few percent of a large
    # replay's CPU), and a process that goes on after the command is not affected.
    atexit.unregister(gc.freeze)  # once, however many replays a process runs
    atexit.register(gc.freeze)
    try:
        with replay_progress("replay", not args.quiet) as progress:
            result = replay(
                Path(args.trace),
                Path(args.cluster),
                Path(args.out),
                profile=args.profile,
                seed=args.seed,
                start=args.start,
                queues=Path(args.queues) if args.queues else None, dra=Path(args.dra) if args.dra else None,
                trace_format=args.format,
                run_id=args.run_id,
                progress=progress,
                resizes=Path(args.resizes) if args.resizes else None,
                verifier=verifier,
            )
    except VerificationError as error:
        print(f"gpu-finops replay --verify: {_shown(error)}", file=sys.stderr)
        return EXIT_VERIFY_FAILED
    for warning in getattr(result, "warnings", ()):  # misspelt columns, Kueue that admits nothing, …
        print(f"warning: {_shown(warning)}", file=sys.stderr)
    if getattr(result, "settled", None):
        print(_shown(result.settled), file=sys.stderr)
    print(_shown(
        f"run {result.run_id}: {result.workloads:,} workloads, {result.events:,} events, "
        f"{rejected_rows(result.rejected_rows, result.run_dir)}, {result.horizon_s / 3600:.0f} h → {result.run_dir}"
    ))
    if verifier is not None:
        print(f"verified: {verifier.summary()}")
    return 0


def _parse_period(text: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    try:
        value, unit = int(text[:-1]), units[text[-1]]
    except (ValueError, KeyError, IndexError):
        raise argparse.ArgumentTypeError(f"charge period like 15m, 1h or 1d, got {text!r}") from None
    if value <= 0 or 86400 % (value * unit) and (value * unit) % 86400:
        raise argparse.ArgumentTypeError(f"charge period must divide a day or be whole days, got {text!r}")
    return value * unit


def _cmd_build(args: argparse.Namespace) -> int:
    from pipeline.build import build

    result = build(
        [Path(p) for p in args.run_dirs],
        Path(args.prices),
        Path(args.db),
        charge_period_s=args.charge_period,
        export=Path(args.export) if args.export else None,
        show_progress=not args.quiet,
        focus_split=args.focus_split,
    )
    print(_shown(f"built {', '.join(result.run_ids)} → {result.db}"))
    return 0


def _cmd_validate(args: argparse.Namespace) -> int:
    if not args.db and not args.export:
        raise FileNotFoundError("validate needs --db P (row checks and audits) or --export DIR (the FOCUS validator)")
    status = 0
    if args.db:
        from pipeline.validate import validate_db

        violations = validate_db(Path(args.db))
        if not violations:
            print(f"{args.db}: FOCUS 1.2 row checks and accounting audits passed")
        for v in violations:
            print(_shown(f"FAIL {v.check}: {v.count} row(s); e.g. {v.example}"), file=sys.stderr)
        status = EXIT_VIOLATIONS if violations else 0
    if args.export:
        from gpu_finops.focus_validator import run_validator

        result = run_validator(Path(args.export), Path(args.validator) if args.validator else None)
        print(_shown(f"{args.export}: FinOps Foundation focus-validator (FOCUS 1.2): {result.totals}"))
        for rule, meaning in result.findings:
            print(_shown(f"  {rule}: {meaning}"))
        status = max(status, result.exit_code)
    return status


def _cmd_explain(args: argparse.Namespace) -> int:
    from rich.console import Console

    console = Console(emoji=False)  # user text: never :name: emoji codes
    if args.db:
        from pipeline.explain import render_timeline, workload_timeline

        render_timeline(workload_timeline(Path(args.db), args.workload_id, args.run_id), console)
    else:
        from gpu_finops.explain import explain_run_dir

        explain_run_dir(Path(args.run_dir), args.workload_id, console)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from datetime import date

    from dashboards.report import write_report

    formats = tuple(f.strip() for f in args.format.split(",") if f.strip())
    paths = write_report(
        Path(args.db),
        Path(args.out),
        date.fromisoformat(args.date_from) if args.date_from else None,
        date.fromisoformat(args.date_to) if args.date_to else None,
        formats,
        run_id=args.run_id,
        team=args.team,
        baseline=args.baseline,
        rank_by=args.rank_by,
        phase=None if args.phase == "all" else args.phase,
        budgets=Path(args.budgets) if args.budgets else None,
        group_by=args.group_by,
        cost_centre_label=args.cost_centre_label,
    )
    for path in paths:
        print(_shown(path))
    return 0


def _sql_limits(args: argparse.Namespace, prefix: str = ""):  # -> dashboards.data.SqlLimits
    """The SQL limits of the flags (``--memory-limit`` …), each defaulting to the environment."""
    from dashboards.data import SqlLimits, parse_seconds, parse_size

    default = SqlLimits.from_env()
    memory, temp, timeout = (getattr(args, f"{prefix}{name}") for name in ("memory_limit", "temp_limit", "timeout"))
    return SqlLimits(
        parse_size(memory, "--memory-limit") if memory else default.memory,
        parse_size(temp, "--temp-limit") if temp else default.temp,
        parse_seconds(timeout, "--timeout") if timeout else default.timeout_s,
    )


def _cmd_sql(args: argparse.Namespace) -> int:
    from dashboards.errors import DashboardError
    from dashboards.sql import run_sql

    if (args.query is None) == (args.saved is None):
        raise DashboardError("give a query or --query NAME (a saved query: see docs/sql.md)")
    run_sql(Path(args.db), args.query, args.format, name=args.saved, limits=_sql_limits(args), out=sys.stdout)
    return 0


def _cmd_schedule(args: argparse.Namespace) -> int:
    from datetime import datetime

    from dashboards.schedule import run_due

    now = datetime.fromisoformat(args.now.replace("Z", "+00:00")) if args.now else None
    outcomes = run_due(Path(args.config), Path(args.state) if args.state else None, now,
                       dry_run=args.dry_run)
    for outcome in outcomes:
        print(_shown(f"{outcome.name}: {outcome.status}: {outcome.detail}"),
              file=sys.stderr if outcome.status == "failed" else sys.stdout)
    return EXIT_VIOLATIONS if any(o.status == "failed" for o in outcomes) else 0


def _cmd_dashboard(args: argparse.Namespace) -> int:
    from dashboards.serve import serve

    serve(Path(args.db), port=args.port, host=args.host, block=True,
          allowed_hosts=tuple(args.allow_host or ()), limits=_sql_limits(args, "sql_"),
          budgets=Path(args.budgets) if args.budgets else None, cost_centre_label=args.cost_centre_label)
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from rich.console import Console

    from gpu_finops.compare import RankingOptions, compare

    wide = None if sys.stdout.isatty() else 220  # a piped table is read whole
    compare(args.runs, db=Path(args.db) if args.db else None, prices=Path(args.prices) if args.prices else None,
            console=Console(width=wide, emoji=False, soft_wrap=args.format != "table"), all_runs=args.all,
            options=RankingOptions(args.baseline, args.rank_by, args.window, args.format))
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
    from gpu_finops.demo import run_demo

    return run_demo(Path(args.out), serve=not args.no_serve, port=args.port, quiet=args.quiet)


def _cmd_experiment(args: argparse.Namespace) -> int:
    """`experiment fgd`: the FGD fragmentation study (gpu_finops/experiments/fgd.py)."""
    from gpu_finops.experiments.fgd_command import run

    return run(args)


def _cmd_experiment_aaic(args: argparse.Namespace) -> int:
    """`experiment aaic`: the AAIC gang replay and its report (gpu_finops/experiments/aaic.py)."""
    from gpu_finops.experiments.aaic import run

    return run(args)


def _cmd_sweep(args: argparse.Namespace) -> int:
    """`sweep`: many scenarios of one cluster, one database (gpu_finops/sweep/)."""
    from rich.console import Console

    from gpu_finops.sweep.run import print_report, run_sweep
    from gpu_finops.sweep.spec import scenario_timeout_of
    from scheduler.errors import InputError

    if args.workers is not None and args.workers < 1:
        raise InputError("--workers", f"must be >= 1, got {args.workers}")

    from gpu_finops.interrupts import terminate_as_interrupt

    console = Console(file=sys.stderr, soft_wrap=True, emoji=False)
    with terminate_as_interrupt():  # SIGTERM (kill, a CI timeout) stops the workers as Ctrl-C does
        report = run_sweep(Path(args.spec), Path(args.out), executor=args.executor, address=args.address,
                           workers=args.workers, quiet=args.quiet, console=console,
                           scenario_timeout_s=scenario_timeout_of(args))
    # A table piped to a file or a CI log is read whole: not cut to the 80 columns of no terminal.
    print_report(report, Console(soft_wrap=True, emoji=False, width=None if sys.stdout.isatty() else 200))
    return EXIT_VIOLATIONS if report.failed else 0


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Every command's parser; given the command the arguments name (``command_named``), one
    of the commands whose options are defined here stops before the commands whose options live
    in their own modules (import, sweep, showback, advise, experiment), so parsing a replay's
    arguments does not import pandas, the importers or the FGD engine. An unknown word gets the
    whole parser, whose error lists every command."""
    from gpu_finops.version import PrintVersion

    parser = argparse.ArgumentParser(prog="gpu-finops", description="Replay GPU cluster traces under Kubernetes gang "
                                     "scheduling and Kueue, and turn them into FOCUS 1.2 cost records.")
    parser.add_argument("--version", action=PrintVersion, help="the version, the scheduler's build and the commit")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, handler: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        p.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
        return p

    p = add("generate", _cmd_generate, "write a synthetic trace, cluster, Kueue queues and price book")
    p.add_argument("--preset", default="demo", help="preset name (tiny, demo, large) or a preset TOML path")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--seed", type=int, default=42, help="seed of the generator: same preset and seed, same files (default 42)")

    p = add("replay", _cmd_replay, "replay a trace on a cluster with a scheduling profile")
    p.add_argument("--trace", required=True, help="the workloads: a generic CSV/Parquet trace or an adapter's format (--format)")
    p.add_argument("--format", default="auto", help="trace format: auto (detected), generic, openb, aaic")
    p.add_argument("--cluster", required=True, help="the nodes: CSV/Parquet, a node-pool TOML or a node inventory")
    p.add_argument("--queues", help="Kueue YAML manifests (ResourceFlavor, ClusterQueue, LocalQueue, …)")
    p.add_argument("--dra", help="DRA YAML: ResourceSlices, DeviceClasses, ResourceClaimTemplates, ResourceClaims (docs/dra.md)")
    p.add_argument("--profile", help="shipped profile (kube-default, gang-v1.35, gang-v1.37; default gang-v1.37) or a profile TOML path")
    p.add_argument("--seed", type=int, default=42, help="seed of every random choice: same inputs and seed, byte-identical event log (default 42)")
    p.add_argument("--start", help="ISO 8601 anchor for relative trace times (default 2026-11-02T00:00:00Z)")
    p.add_argument("--run-id", help="run id (default: <trace>-<profile>-s<seed>)")
    p.add_argument("--resizes", help="elastic min_count changes: CSV workload_id,time_s,min_count")
    p.add_argument("--verify", action="store_true",
                   help="check every fast path against the plain computation as the replay goes "
                   "(slower; exit 3 at the first difference)")
    p.add_argument("--out", required=True, help="run directory to write")

    p = add("build", _cmd_build, "event logs → DuckDB marts and FOCUS 1.2 cost records")
    p.add_argument("run_dirs", nargs="+", metavar="RUN_DIR", help="run directories written by replay (several: one database to compare them)")
    p.add_argument("--prices", required=True, help="price book CSV")
    p.add_argument("--db", required=True, help="DuckDB file to create or update")
    p.add_argument("--charge-period", type=_parse_period, default=3600, help="15m, 1h (default), 1d")
    p.add_argument("--export", help="folder for the Hive-partitioned FOCUS Parquet export")
    p.add_argument("--focus-split", action="store_true",
                   help="FOCUS 1.3 split cost allocation: node-hours split into workload parts and idle")

    p = add("validate", _cmd_validate, "FOCUS conformance and accounting invariants (exit 1 on any violation)")
    p.add_argument("--db", help="row-level FOCUS checks and the accounting audits of a built database")
    p.add_argument("--export", metavar="DIR", help="run the FinOps Foundation's focus-validator over a "
                   "partitioned export (build --export DIR) and explain its findings")
    p.add_argument("--validator", metavar="PATH", help="focus-validator, or a wrapper script printing its totals "
                   "(default: $GPU_FINOPS_FOCUS_VALIDATOR, else focus-validator on PATH)")

    p = add("explain", _cmd_explain, "why a workload waited: its reasons over time")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--db", help="a built DuckDB file")
    source.add_argument("--run-dir", help="a replay's run directory")
    p.add_argument("--run-id", help="which run, when the database holds several")
    p.add_argument("workload_id", help="the workload (pod group) id, as in the trace")

    p = add("report", _cmd_report, "batch report: self-contained HTML, Markdown, CSV")
    p.add_argument("--db", required=True, help="the DuckDB database written by build")
    p.add_argument("--out", required=True, help="folder for the report's files (created; an existing report folder is replaced whole)")
    p.add_argument("--from", dest="date_from", help="first day (YYYY-MM-DD)")
    p.add_argument("--to", dest="date_to", help="last day (YYYY-MM-DD)")
    p.add_argument("--format", default="html,csv", help="comma list of html, md, csv (default: %(default)s)")
    p.add_argument("--run-id", help="which run, when the database holds several (default: every run)")
    p.add_argument("--team", help="one team's report (default: all teams)")
    p.add_argument("--baseline", help="run id the scenarios are ranked against (default: the sweep's "
                   "[sweep] baseline, else the first kube-default run)")
    p.add_argument("--rank-by", default="cost_per_productive_gpu_hour", help="ranking metric: "
                   "cost_per_productive_gpu_hour (default), cost_per_finished_workload, waste_cost, total_cost, "
                   "idle_cost, partial_placement_gpu_hours, p95_wait_h, …")
    p.add_argument("--phase", default="steady", choices=("steady", "warmup", "drain", "all"),
                   help="run phase (x_Phase) to report on: the steady window by default, all for "
                        "the whole run")
    p.add_argument("--budgets", metavar="P", help="budgets per team / cost centre per month (CSV or TOML): "
                   "spend to date, forecast, anomalous days (docs/reports.md)")
    p.add_argument("--group-by", metavar="label:KEY", help="add the chargeback per value of a pod label "
                   "(e.g. label:cost-center; Unlabelled for workloads without it)")
    p.add_argument("--cost-centre-label", metavar="KEY", help="with --budgets: the pod label whose values are the "
                   "cost centres (default: cost-center, else cost_center, where workloads carry one; else the "
                   "budgets file's team rows group the teams)")

    p = add("sql", _cmd_sql, "read-only SQL over the marts")
    p.add_argument("--db", required=True, help="the DuckDB database written by build (opened read-only)")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"), help="how to print the rows (default: %(default)s)")
    p.add_argument("query", nargs="?", help="one read-only statement")
    p.add_argument("--query", dest="saved", metavar="NAME",
                   help="run a saved query instead (cost_per_team_per_week, idle_cost_by_cause, …)")
    p.add_argument("--memory-limit", metavar="SIZE",
                   help="memory bound of the query in the process: DuckDB gets half, the rows kept 1/32 "
                   "(default 2GB, or $GPU_FINOPS_SQL_MEMORY_LIMIT)")
    p.add_argument("--temp-limit", metavar="SIZE",
                   help="disk the query may spill to (default 4GB, or $GPU_FINOPS_SQL_TEMP_LIMIT)")
    p.add_argument("--timeout", metavar="SECONDS",
                   help="statement timeout (default 60, or $GPU_FINOPS_SQL_TIMEOUT; 90s, 5m)")

    p = add("schedule", _cmd_schedule, "run the reports of a reports TOML that are due (cron), once each")
    p.add_argument("--config", required=True, help="reports TOML ([[report]] name, cron, db, out, period, …)")
    p.add_argument("--state", help="state file (default: <config>.state.json beside it)")
    p.add_argument("--now", help="ISO 8601 time to evaluate the schedule at (default: now; for backfills)")
    p.add_argument("--dry-run", action="store_true", help="say what is due, write nothing")

    p = add("compare", _cmd_compare, "runs ranked against a baseline (cost, idle by cause, waits, partial "
            "placement, preemption waste); two runs also side by side, per team")
    p.add_argument("runs", nargs="*", metavar="RUN", help="run directories, or run ids with --db")
    p.add_argument("--prices", help="price book, to cost run directories")
    p.add_argument("--db", help="compare runs already built into this database (a sweep's, say)")
    p.add_argument("--all", action="store_true", help="every run of --db")
    p.add_argument("--baseline", help="run id to compare against (default: the sweep's [sweep] baseline, "
                   "else the first kube-default run, else the first run given)")
    p.add_argument("--rank-by", default="cost_per_productive_gpu_hour", help="cost_per_productive_gpu_hour "
                   "(default), cost_per_finished_workload, waste_cost, total_cost, idle_cost, "
                   "partial_placement_gpu_hours, p95_wait_h, finished, …")
    p.add_argument("--window", choices=("whole", "common"), default="common",
                   help="only the hours every compared run covers (default), or whole runs (on a fixed "
                        "cluster a run's cost is capacity x duration: whole runs reward the one that ended first)")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="how to print the table (default: %(default)s)")

    p = add("dashboard", _cmd_dashboard, "serve the Streamlit dashboard (127.0.0.1 by default)")
    p.add_argument("--db", required=True, help="the DuckDB database written by build (opened read-only)")
    p.add_argument("--port", type=int, default=8501, help="port on 127.0.0.1 (default: %(default)s)")
    p.add_argument("--host", default="127.0.0.1", help="bind address; anything but loopback exposes cost data")
    p.add_argument("--allow-host", action="append", metavar="NAME",
                   help="a further host name browsers may use to reach the dashboard (a reverse proxy's "
                   "name, the machine's DNS name); repeatable. Requests naming any other Host or Origin "
                   "are refused (DNS rebinding)")
    p.add_argument("--sql-memory-limit", dest="sql_memory_limit", metavar="SIZE",
                   help="memory bound of the dashboard's queries and SQL page: DuckDB gets half, the SQL "
                   "page's rows 1/32 (default 2GB)")
    p.add_argument("--sql-temp-limit", dest="sql_temp_limit", metavar="SIZE",
                   help="disk its queries may spill to (default 4GB)")
    p.add_argument("--sql-timeout", dest="sql_timeout", metavar="SECONDS",
                   help="statement timeout of the SQL page (default 60)")
    p.add_argument("--budgets", metavar="P", help="budgets per team / cost centre per month (CSV or TOML) for "
                   "the Budgets page")
    p.add_argument("--cost-centre-label", metavar="KEY", help="with --budgets: the pod label whose values are the "
                   "cost centres (default: cost-center, else cost_center)")

    p = add("demo", _cmd_demo, "generate → replay → build → report → dashboard on bundled defaults")
    p.add_argument("--out", default="demo-out", help="folder for the demo's inputs, runs, database and report (default: %(default)s)")
    p.add_argument("--no-serve", action="store_true", help="stop after the report")
    p.add_argument("--port", type=int, default=8501, help="port on 127.0.0.1 (default: %(default)s)")

    if command is not None and command in sub.choices:
        return parser
    from gpu_finops.importers.commands import add_import_parser

    add_import_parser(sub)

    p = add("sweep", _cmd_sweep, "many scenarios (profiles x queues x scoring x preemption x seeds) of one "
            "cluster, replayed in parallel, built into one database")
    p.add_argument("spec", metavar="SWEEP.toml", help="the sweep: inputs, and a [grid] or [[scenario]] list "
                   "(docs/sweeps.md; an example: data/sweep-tiny.toml)")
    p.add_argument("--out", required=True, help="folder for runs/, state/, logs/, sweep.json, gpu-finops.duckdb")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local worker processes (default) or Ray tasks on an existing Ray cluster")
    p.add_argument("--address", help="Ray cluster address (default: auto, i.e. $RAY_ADDRESS or the local one)")
    p.add_argument("--workers", type=int, help="local worker processes (default: the sweep's, else one per CPU)")
    from gpu_finops.sweep.spec import add_scenario_timeout

    add_scenario_timeout(p, "[sweep] scenario_timeout_s, else")

    from gpu_finops.advise.command import add_advise
    from gpu_finops.showback import add_showback

    add_showback(sub)
    add_advise(sub)

    experiment = sub.add_parser("experiment", help="experiments on real traces: fgd, aaic",
                                description="experiments on real traces: fgd (the FGD fragmentation study), "
                                "aaic (the AAIC gang log under three schedulers)")
    kinds = experiment.add_subparsers(dest="name", required=True, metavar="EXPERIMENT")

    def add_experiment(name: str, handler: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p = kinds.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=handler, command=f"experiment {name}")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
        return p

    p = add_experiment("aaic", _cmd_experiment_aaic,
                       "the AAIC batch log under kube-default, gang-v1.37 and gang-v1.37 + Kueue: recorded "
                       "vs replayed waits, and cost per group (report.md)")
    from gpu_finops.experiments.aaic import add_arguments

    add_arguments(p)
    p = add_experiment("fgd", _cmd_experiment,
                       "openb pods placed one by one under six scoring policies, over seeds (the FGD study)")
    from gpu_finops.experiments.fgd_command import add_arguments as add_fgd_arguments

    add_fgd_arguments(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # Importing numpy (pyarrow, DuckDB and Polars all do) starts OpenBLAS's worker threads, one
    # per further core, and each spins for about a tenth of a second waiting for work that
    # never comes: no command here does linear algebra. That spin was 60 ms of CPU per process
    # on two cores (0.8 % of a hidden-size replay). Set before the first import of numpy, and
    # inherited by the processes a command starts (sweep workers, Ray, the dashboard's server);
    # a value the user set wins.
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    try:
        from gpu_finops.interrupts import InterruptsLostInCallbacks, terminate_as_interrupt
        from pipeline.ctrl_c import interrupt_queries_on_ctrl_c

        # SIGTERM (kill, a CronJob's deadline) stops every command as Ctrl-C does: temporary
        # files and databases removed, one line, exit 130; not a death that leaves them behind.
        with InterruptsLostInCallbacks() as lost_interrupts, terminate_as_interrupt(), interrupt_queries_on_ctrl_c():
            try:
                return _main(argv)
            finally:
                lost_interrupts.settle()
    except KeyboardInterrupt:  # Ctrl-C: while starting (parser, imports), working, or reporting
        with contextlib.suppress(KeyboardInterrupt):  # a second Ctrl-C while saying so
            print("gpu-finops: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        # The outcome is decided: a Ctrl-C while the interpreter shuts down must not turn it
        # into a death by signal (Python puts SIGINT back to its default action at shutdown,
        # after the exit handlers, unless it is ignored). Registered last, it runs first.
        from gpu_finops.interrupts import ignore_interrupts_from_now_on

        atexit.unregister(ignore_interrupts_from_now_on)
        atexit.register(ignore_interrupts_from_now_on)


@contextlib.contextmanager
def _inputs_read_once(args: argparse.Namespace) -> Iterator[None]:
    """The experiments' input files as copies when they are pipes (``--pods <(…)``): their
    readers detect formats first, which would consume a pipe (`replay` does this itself)."""
    names = [name for name in ("pods", "cluster", "trace") if isinstance(getattr(args, name, None), str)]
    if not str(args.command).startswith("experiment") or not names:
        yield
        return
    from scheduler.trace.io import spooled

    with spooled([Path(getattr(args, name)) for name in names]) as copies:
        for name, copy in zip(names, copies, strict=True):
            setattr(args, name, str(copy))
        yield


def command_named(argv: Sequence[str]) -> str | None:
    """The command word of a command line: its first word not an option (the top-level parser
    has no option that takes a value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _main(argv: Sequence[str] | None) -> int:
    args = build_parser(command_named(sys.argv[1:] if argv is None else argv)).parse_args(argv)
    from scheduler.errors import NUL_IN_PATH, nul_in_arguments

    if nul := nul_in_arguments(vars(args)):  # no file name can hold a NUL: say so, not ValueError
        return _say(f"gpu-finops {args.command}: {nul}")
    try:
        with _inputs_read_once(args):
            return int(args.handler(args))
    except MemoryError:
        return _say(f"gpu-finops {args.command}: out of memory: the inputs need more memory than this "
                    "process may use")
    except Exception as error:  # one line for user errors; real bugs keep their traceback
        from gpu_finops.interrupts import raise_query_interrupt
        from pipeline.connect import is_older_layout_error, older_database_line
        from scheduler.eventlog.writes import is_disk_error

        raise_query_interrupt(error)  # DuckDB's form of a Ctrl-C: the interrupt, exit 130
        if isinstance(error, _user_errors()):
            return _say(f"gpu-finops {args.command}: {_shown(error)}")
        if is_older_layout_error(error) and getattr(args, "db", None) and args.command != "build":
            return _say(f"gpu-finops {args.command}: {_shown(older_database_line(args.db))}")
        if isinstance(error, ValueError) and str(error) == "embedded null byte":  # a path read from a file
            return _say(f"gpu-finops {args.command}: a path given in an input file {NUL_IN_PATH}")
        if is_disk_error(error):  # a write the system refused, wherever it happened
            assert isinstance(error, OSError)
            where = error.filename or "the output"
            return _say(f"gpu-finops {args.command}: {_shown(where)}: cannot write it: {_shown(error.strerror)}; "
                        "the previous output is intact")
        raise


if __name__ == "__main__":
    sys.exit(main())

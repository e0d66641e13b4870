"""`gpu-finops experiment fgd`: its options, the run over seeds × policies with a progress
bar, the printed summary (mean ± spread per policy) and the files (`fgd_outputs`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from gpu_finops.experiments.fgd import (
    DEFAULT_TARGET_SHARE,
    POLICIES,
    RULES,
    SeedRun,
    StudyInputs,
    StudyOptions,
    check_policies,
    parse_seeds,
    prepare_seed,
    read_inputs,
    run_one,
)
from gpu_finops.experiments.fgd_engine import TIE_BREAKS
from gpu_finops.experiments.fgd_report import (
    ALLOCATION_AT,
    FRAGMENTATION_AT,
    PolicyResult,
    summarise,
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of `gpu-finops experiment fgd` (and `python -m benchmarks.fgd`)."""
    parser.add_argument("--pods", required=True, help="an openb pod list (openb_pod_list_*.csv)")
    parser.add_argument("--cluster", required=True,
                        help="a node list: openb (the artifact uses openb_node_list_gpu_node.csv), PAI 2020, "
                             "spot-GPU 2026 or the project's own")
    parser.add_argument("--out", required=True,
                        help="folder for curves.csv, seeds.csv, summary.csv, fgd.png, experiment.json")
    parser.add_argument("--policies", default=",".join(POLICIES), help="comma-separated (%(default)s)")
    parser.add_argument("--seeds", default="42",
                        help="seeds: 42, a range 42-51 (the artifact's ten) or a list 42,45,50-51 (%(default)s)")
    parser.add_argument("--seed", type=int, help="one seed (same as --seeds N)")
    parser.add_argument("--rules", default="artifact", choices=RULES,
                        help="artifact: the published simulator's rules (default); project: the project's "
                             "earlier rules on the scheduler's own plugins (docs/traces.md)")
    parser.add_argument("--target", type=float, default=DEFAULT_TARGET_SHARE,
                        help="arrived GPU demand as a share of capacity (%(default)s, the artifact's -tune)")
    parser.add_argument("--popularity", type=float,
                        help="share of pods whose shapes form FGD's target workload (artifact 0.95, project 1.0)")
    parser.add_argument("--tie-break", choices=TIE_BREAKS,
                        help="score ties: seeded-order (the artifact's: first node of a seeded order), "
                             "lowest-index (the cluster file's order, the project's), random (a tied node "
                             "drawn uniformly, upstream kube-scheduler); default: the rule set's own")
    parser.add_argument("--no-plot", action="store_true", help="write the tables without the PNG figure")


def run(args: argparse.Namespace) -> int:
    options = StudyOptions(rules=args.rules, tie_break=args.tie_break, popularity=args.popularity,
                           target_share=args.target)
    policies = check_policies([p.strip() for p in args.policies.split(",") if p.strip()])
    seeds = (args.seed,) if args.seed is not None else parse_seeds(args.seeds)
    inputs = read_inputs(Path(args.pods), Path(args.cluster), options)
    runs, results = run_study(inputs, seeds, policies, show_progress=not args.quiet)
    console = Console()
    console.print(describe(inputs, runs), soft_wrap=True, highlight=False)
    console.print(summary_console_table(results))
    from gpu_finops.experiments.fgd_outputs import write_outputs

    paths = write_outputs(inputs, runs, results, Path(args.out), plot=not args.no_plot)
    for path in paths.values():
        console.print(str(path), highlight=False)
    return 0


def run_study(
    inputs: StudyInputs, seeds: Sequence[int], policies: Sequence[str], *, show_progress: bool = False
) -> tuple[list[SeedRun], list[PolicyResult]]:
    """Every policy under every seed, seed by seed (the arrivals of a seed are shared)."""
    runs: list[SeedRun] = []
    results: list[PolicyResult] = []
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(file=sys.stderr), disable=not show_progress, transient=True) as bar:
        task = bar.add_task("fgd", total=len(seeds) * len(policies))
        for seed in seeds:
            run = prepare_seed(inputs, seed)
            runs.append(run)
            for policy in policies:
                bar.update(task, description=f"seed {seed} {policy}")
                results.append(run_one(inputs, run, policy))
                bar.advance(task)
    return runs, results


def describe(inputs: StudyInputs, runs: Sequence[SeedRun]) -> str:
    options = inputs.options
    counts = sorted(len(r.arrivals) for r in runs)
    arrivals = f"{counts[0]:,}" if counts[0] == counts[-1] else f"{counts[0]:,}–{counts[-1]:,}"
    seeds = ", ".join(str(r.seed) for r in runs) if len(runs) <= 3 else f"{len(runs)} seeds {runs[0].seed}–{runs[-1].seed}"
    return (f"{arrivals} arrivals from {inputs.pod_rows:,} rows (seeds {seeds}) to {options.target_share:.0%} of "
            f"{inputs.cluster.total_gpus:,} GPUs on {len(inputs.cluster.nodes):,} nodes; {options.rules} rules, "
            f"ties {options.ties}, FGD's workload: {runs[0].task_types} task types "
            f"({options.popularity_share:.0%} of pods)")


def summary_console_table(results: Sequence[PolicyResult]) -> Table:
    summaries = summarise(results)
    seeds = max((len(s.seeds) for s in summaries), default=0)
    table = Table(title=f"GPU allocation and fragmentation ratios (mean ± std over {seeds} seed{'s' * (seeds > 1)})")
    table.add_column("policy")
    for pct in ALLOCATION_AT:
        table.add_column(f"allocation at {pct} %", justify="right")
    for pct in FRAGMENTATION_AT:
        table.add_column(f"fragmentation at {pct} %", justify="right")
    table.add_column("s per run", justify="right")
    for s in summaries:
        table.add_row(s.policy, *[str(v) for v in s.allocation.values()], *[str(v) for v in s.fragmentation.values()],
                      f"{s.seconds.mean:.1f}")
    return table

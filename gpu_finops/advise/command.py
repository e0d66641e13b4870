"""`gpu-finops advise …`: the sub-commands' arguments and handlers (the advice itself lives in
the modules beside this one). Imports stay lazy, as in `gpu_finops/cli.py`: building the
parser must not pull in Optuna or the replay."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

_EXIT_NO_RECOMMENDATION = 1  # the CLI's EXIT_VIOLATIONS: no trial met every target


def _cmd_advise_quotas(args: argparse.Namespace) -> int:
    """`advise quotas`: an Optuna study over the Kueue quotas, trials replayed (gpu_finops/advise/)."""
    from rich.console import Console

    from gpu_finops.advise.outputs import print_advice
    from gpu_finops.advise.quotas import Inputs, advise_quotas
    from scheduler.errors import InputError

    trace = Path(args.trace)
    prices = Path(args.prices) if args.prices else trace.with_name("prices.csv")
    if not args.prices and not prices.is_file():
        raise InputError("--prices", f"no price book given and none beside the trace ({prices.name}): give --prices")
    inputs = Inputs(trace, Path(args.cluster), Path(args.queues), prices,
                    Path(args.objectives) if args.objectives else None, args.profile or "gang-v1.37",
                    args.replay_seed, args.start, args.format, args.seeds)
    from gpu_finops.interrupts import terminate_as_interrupt
    from gpu_finops.sweep.spec import scenario_timeout_of

    timeout = scenario_timeout_of(args)
    with terminate_as_interrupt():  # SIGTERM (kill, a CI timeout) stops the workers as Ctrl-C does, as in `sweep`
        advice = advise_quotas(inputs, Path(args.out), trials=args.trials, seed=args.seed, batch=args.batch,
                               executor=args.executor, address=args.address, workers=args.workers, quiet=args.quiet,
                               console=Console(file=sys.stderr, soft_wrap=True),
                               **({} if timeout is False else {"scenario_timeout_s": timeout}))
    print_advice(advice, Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200))
    return 0 if advice.recommended is not None else _EXIT_NO_RECOMMENDATION


def _cmd_advise_commitments(args: argparse.Namespace) -> int:
    """`advise commitments`: the commitment level per SKU from the replayed usage."""
    from rich.console import Console

    from gpu_finops.advise.commitments import advise_commitments, print_commitments

    result = advise_commitments(Path(args.db), Path(args.prices), Path(args.out), run_id=args.run_id,
                                all_runs=args.all)
    print_commitments(result, Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200))
    return 0


def add_advise(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("advise", help="recommendations from your own history: quotas, commitments, preemption",
                            description="recommendations from a replay of your own history: Kueue quotas "
                            "(advise quotas), GPU commitments per SKU (advise commitments); docs/advice.md; "
                            "preemption policies and checkpoint intervals (advise preemption); docs/preemption.md")
    kinds = parser.add_subparsers(dest="advice", required=True, metavar="ADVICE")

    def add(name: str, handler: Callable[[argparse.Namespace], int], help_text: str) -> argparse.ArgumentParser:
        p = kinds.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=handler, command=f"advise {name}")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
        return p

    p = add("quotas", _cmd_advise_quotas, "nominal quotas (and, within bounds, borrowing and lending limits, "
            "preemption, fair-sharing weights) per ClusterQueue for the least idle cost + cost of delay, "
            "searched by Optuna with replays as trials")
    p.add_argument("--trace", required=True, help="the workloads to replay under each trial's quotas (as replay --trace)")
    p.add_argument("--format", default="auto", help="trace format: auto (detected), generic, openb, aaic")
    p.add_argument("--cluster", required=True, help="the nodes (as replay --cluster)")
    p.add_argument("--queues", required=True, help="the current Kueue manifests")
    p.add_argument("--prices", help="price book CSV (default: prices.csv beside the trace)")
    p.add_argument("--objectives", metavar="O.toml", help="wait targets, shares and search bounds "
                   "(an example: data/advise-objectives.toml)")
    p.add_argument("--trials", type=int, default=50, help="trials (replays) in all, resumed ones included; default 50, at most 10,000")
    p.add_argument("--seed", type=int, default=0, help="the sampler's seed: same seed, same trials (default 0)")
    p.add_argument("--batch", type=int, default=4, help="trials asked at once and replayed in parallel (default 4; "
                   "part of what a seed means)")
    p.add_argument("--profile", help="scheduling profile of every replay (default gang-v1.37)")
    p.add_argument("--replay-seed", type=int, default=42, help="the first replay seed (default 42)")
    p.add_argument("--seeds", type=int, default=3, help="replays per trial and of today's manifests, under seeds "
                   "--replay-seed, +1, …: each figure is their mean with its 95 %% interval, and a change is "
                   "recommended only beyond it (default 3, at most 100)")
    p.add_argument("--start", help="ISO 8601 anchor for relative trace times")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local worker processes (default) or Ray tasks on an existing Ray cluster")
    p.add_argument("--address", help="Ray cluster address (default: auto)")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per CPU)")
    from gpu_finops.sweep.spec import add_scenario_timeout

    add_scenario_timeout(p, "")
    p.add_argument("--out", required=True, help="folder: study.db, runs/, recommended.yaml, pareto.csv, trials.csv, …")

    p = add("commitments", _cmd_advise_commitments, "per SKU, the commitment level (GPUs) of least expected cost "
            "from the replayed usage of the steady window, with coverage, utilisation and break-even")
    p.add_argument("--db", required=True, help="a built database (a sweep's: every scenario, with --all)")
    p.add_argument("--prices", required=True, help="price book: list and contracted price per GPU-hour")
    p.add_argument("--run-id", help="which run (default: the database's only run)")
    p.add_argument("--all", action="store_true", help="every run of the database (a sweep's scenarios)")
    p.add_argument("--out", required=True, help="folder for commitments.csv and commitments.md")

    from gpu_finops.advise.preemption_command import add_preemption

    add_preemption(add)

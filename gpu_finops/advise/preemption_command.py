"""``gpu-finops advise preemption``: its arguments, its folder and what it writes
(`gpu_finops.advise.preemption` holds the advice itself; docs/preemption.md)::

    DIR/candidates.csv, .parquet  today, every candidate and the recommendation together: what it
                                  sets, savings per seed summarised (mean, min, max, spread), waits
    DIR/replays.csv               every replay's figures (candidate × seed)
    DIR/classes.csv, kinds.csv    what today's first replay shows per priority class and kind
    DIR/overrides.csv             the recommended settings, one row per trace column and subject
    DIR/recommended-trace.csv     the trace with them set (`replay --trace`)
    DIR/recommended-profile.toml  the profile to replay it with (`replay --profile`)
    DIR/summary.txt, advice.json  the advice in words, and as data
    DIR/traces/<candidate>.csv    each candidate's trace; DIR/runs/<candidate>-s<seed>/ its runs

The folder is the command's: locked while it runs; a result file is replaced only when the
command wrote it (`write_files`' manifest), a run folder only when it is a run folder, and none
may be an input. Everything is checked before the first replay.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gpu_finops.advise.preemption import (
    DEFAULT_CHECKPOINT_COST_S,
    DEFAULT_SEEDS,
    Candidate,
    Inputs,
    PreemptionAdvice,
    advise,
    figures_of,
    young_daly_interval_s,
)
from gpu_finops.advise.seeds import seeds_that_matter
from scheduler.errors import InputError
from scheduler.eventlog.files import NotOurs
from scheduler.eventlog.writes import check_not_an_input, output_lock, write_files, written_by_us
from scheduler.trace.io import csv_text

FILES = ("candidates.csv", "candidates.parquet", "replays.csv", "classes.csv", "kinds.csv", "overrides.csv",
         "recommended-trace.csv", "recommended-profile.toml", "summary.txt", "advice.json")
MAX_SEEDS = 100


def run_advice(inputs: Inputs, out: Path, *, quiet: bool = False, console: Console | None = None,
               executor: str = "local", address: str | None = None, workers: int | None = None) -> PreemptionAdvice:
    """Check the inputs and DIR, replay today and the candidates (the sweep's executors: local
    worker processes or Ray tasks), write the outputs."""
    console = console or Console(file=sys.stderr)
    _check(inputs, out)
    seeds, why_one = seeds_that_matter(inputs.profile, inputs.seeds)  # said once DIR is checked
    inputs = replace(inputs, seeds=seeds)
    if workers is not None and not 1 <= workers <= 1024:
        raise InputError("--workers", f"must be 1 … 1024, got {workers}")
    from gpu_finops.sweep.executors import LocalExecutor, Outcome, RayExecutor
    from gpu_finops.sweep.run import deliver_run
    from gpu_finops.sweep.task import ScenarioTask

    ray = RayExecutor(address or "auto", lambda task, files: deliver_run(task.run_dir, files)) \
        if executor == "ray" else None
    if ray is not None:
        ray.check()

    with output_lock(out, waiting=lambda pid: console.print(
            f"waiting for another gpu-finops command writing {out}{f' (pid {pid})' if pid else ''}", markup=False)):
        _check_folder(inputs, out)
        if why_one:
            console.print(why_one, highlight=False, markup=False)
        progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                            console=console, disable=quiet)
        with progress:
            task = progress.add_task("replays", total=inputs.seeds)

            def replayer(batch: list[tuple[Candidate, Path]]) -> None:
                if batch and batch[0][0].name != "today":
                    progress.update(task, total=(progress.tasks[0].total or 0) + inputs.seeds * len(batch))
                (out / "runs").mkdir(parents=True, exist_ok=True)
                tasks = [ScenarioTask(name=f"{c.name}-s{seed}", run_id=f"{c.name}-s{seed}", trace=trace,
                                      cluster=inputs.cluster, queues=inputs.queues, profile=inputs.profile, seed=seed,
                                      start=inputs.start, trace_format="generic",
                                      run_dir=out / "runs" / f"{c.name}-s{seed}")
                         for c, trace in batch for seed in inputs.replay_seeds]
                failed: list[Outcome] = []

                def done(outcome: Outcome) -> None:
                    progress.update(task, description=outcome.task.name)
                    progress.advance(task)
                    if not outcome.ok:
                        failed.append(outcome)

                def started(task_: ScenarioTask, where: str) -> None:
                    del task_, where

                if ray is not None:
                    ray.run(tasks, started, done)
                else:
                    LocalExecutor(workers or os.cpu_count() or 1).run(tasks, started, done)
                if failed:
                    raise InputError(failed[0].task.run_dir, f"replay failed: {failed[0].error}")
                for c, _ in batch:
                    c.figures = figures_of([out / "runs" / f"{c.name}-s{seed}" for seed in inputs.replay_seeds],
                                           inputs)

            def write_trace(name: str, text: str) -> Path:
                written, = write_files(out / "traces", {f"{name}.csv": text}, inputs=_inputs_of(inputs))
                return written

            result = advise(inputs, out, replayer, write_trace,
                            lambda: out / "runs" / f"today-s{inputs.replay_seeds[0]}")
        result.files = write_files(out, _outputs(result), inputs=_inputs_of(inputs))
    return result


def _inputs_of(inputs: Inputs) -> list[Path | None]:
    profile = Path(inputs.profile)
    return [inputs.trace, inputs.cluster, inputs.queues, inputs.prices, profile if profile.suffix == ".toml" else None]


def _check(inputs: Inputs, out: Path) -> None:
    if not 1 <= inputs.seeds <= MAX_SEEDS:
        raise InputError("--seeds", f"must be 1 … {MAX_SEEDS}, got {inputs.seeds}")
    if not 0 < inputs.checkpoint_cost_s <= 86_400:
        raise InputError("--checkpoint-cost-s", f"seconds > 0 (at most a day), got {inputs.checkpoint_cost_s:g}")
    for flag, path in (("--trace", inputs.trace), ("--cluster", inputs.cluster), ("--prices", inputs.prices),
                       ("--queues", inputs.queues)):
        if path is not None and not path.is_file():
            raise InputError(path, "file not found", field=flag)
    if inputs.trace.suffix.lower() != ".csv":
        raise InputError(inputs.trace, "advise preemption rewrites a generic CSV trace (an import or generate "
                         "folder's trace.csv); convert other formats first", field="--trace")
    from scheduler.framework.profile import load_profile

    load_profile(inputs.profile)  # an unknown profile is one line before anything is replayed
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise InputError(out, "--out must be a folder, not a file or a link")


def _check_folder(inputs: Inputs, out: Path) -> None:
    """Nothing in DIR this run would replace is someone else's, nor one of the inputs."""
    check_not_an_input(_inputs_of(inputs), files=[out / name for name in FILES],
                       folders=[out / "runs", out / "traces"], what="--out")
    strangers = [name for name in FILES if not written_by_us(out, name)]
    traces = out / "traces"
    strangers += [f"traces/{p.name}" for p in sorted(traces.glob("*.csv")) if traces.is_dir()
                  and not written_by_us(traces, p.name)]
    if strangers:
        raise InputError(out, f"holds files advise preemption did not write (or that were changed since): "
                         f"{', '.join(strangers[:3])}{', …' if len(strangers) > 3 else ''}; move them away or give "
                         "another --out")
    from scheduler.commands import check_run_folder

    runs = out / "runs"
    for run in sorted(runs.iterdir()) if runs.is_dir() else ():
        try:
            check_run_folder(run)
        except NotOurs as refused:
            raise InputError(run, str(refused).removeprefix(f"{run.resolve()}: ")) from None


# ------------------------------------------------------------------------------------ outputs


_CANDIDATE_COLUMNS = ("candidate", "change", "subject", "setting", "basis", "note", "recommended", "beyond_spread",
                      "mean_saving_usd", "min_saving_usd", "max_saving_usd", "spread_usd", "mean_saved_gpu_hours",
                      "spread_saved_gpu_hours", "mean_lost_gpu_hours", "mean_overhead_gpu_hours",
                      "wait_hours_change", "wait_gpu_hours_change", "wait_usd_change", "delay_usd_change", "seeds")


def candidate_rows(result: PreemptionAdvice) -> list[dict[str, Any]]:
    today = result.today
    rows = []
    for c in [today, *result.candidates, *([result.recommended] if result.recommended else [])]:
        saved_h = c.savings_gpu_hours or [0.0]
        rows.append({
            "candidate": c.name, "change": c.change, "subject": c.subject, "setting": c.setting, "basis": c.basis,
            "note": c.note,
            "recommended": c.recommended, "beyond_spread": c.beyond_spread,
            "mean_saving_usd": c.mean_saving_usd, "min_saving_usd": min(c.savings_usd or [0.0]),
            "max_saving_usd": max(c.savings_usd or [0.0]), "spread_usd": c.spread_usd,
            "mean_saved_gpu_hours": round(sum(saved_h) / len(saved_h), 4),
            "spread_saved_gpu_hours": round(max(saved_h) - min(saved_h), 4),
            "mean_lost_gpu_hours": _mean([f.lost_gpu_hours for f in c.figures]),
            "mean_overhead_gpu_hours": _mean([f.overhead_gpu_hours for f in c.figures]),
            "wait_hours_change": _mean([f.wait_hours - t.wait_hours for f, t in zip(c.figures, today.figures,
                                                                                     strict=True)]),
            "wait_gpu_hours_change": _mean([f.wait_gpu_hours - t.wait_gpu_hours
                                            for f, t in zip(c.figures, today.figures, strict=True)]),
            "wait_usd_change": _mean([f.wait_usd - t.wait_usd for f, t in zip(c.figures, today.figures, strict=True)]),
            "delay_usd_change": _mean([f.delay_usd - t.delay_usd for f, t in zip(c.figures, today.figures,
                                                                                 strict=True)]),
            "seeds": len(c.figures)})
    return rows


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def _outputs(result: PreemptionAdvice) -> dict[str, bytes | str]:
    import polars as pl

    inputs = result.inputs
    rows = candidate_rows(result)
    frame = pl.DataFrame(rows, schema={c: (pl.Boolean if c in ("recommended", "beyond_spread") else pl.Int64
                                           if c == "seeds" else pl.Utf8 if c in _CANDIDATE_COLUMNS[:6] else pl.Float64)
                                       for c in _CANDIDATE_COLUMNS})
    parquet = io.BytesIO()
    frame.write_parquet(parquet)
    everyone = [result.today, *result.candidates, *([result.recommended] if result.recommended else [])]
    replays = [[c.name, seed, *f.as_dict().values()] for c in everyone
               for seed, f in zip(inputs.replay_seeds, c.figures, strict=True)]
    figure_names = list(result.today.figures[0].as_dict())
    overrides = _override_rows(result)
    recommended_trace = (result.out / "traces" / "recommended.csv").read_text(encoding="utf-8") \
        if result.recommended else inputs.trace.read_text(encoding="utf-8-sig")
    return {
        "candidates.csv": csv_text(_CANDIDATE_COLUMNS, [[r[c] for c in _CANDIDATE_COLUMNS] for r in rows]),
        "candidates.parquet": parquet.getvalue(),
        "replays.csv": csv_text(["candidate", "seed", *figure_names], replays),
        "classes.csv": csv_text(["priority", "workloads", "preempted_pods_caused", "victims_lost_gpu_hours",
                                 "cascaded_preempted_pods"],
                                [[c.priority, c.workloads, c.preempted_pods_caused, c.victims_lost_gpu_hours,
                                  c.cascaded_preempted_pods] for c in result.classes]),
        "kinds.csv": csv_text(["kind", "workloads", "gangs", "preemptions", "run_hours", "lost_gpu_hours",
                               "mean_time_between_preemptions_s", "checkpoint_cost_s", "young_daly_interval_s"],
                              [_kind_row(k, inputs.checkpoint_cost_s) for k in result.kinds]),
        "overrides.csv": csv_text(["change", "subject", "column", "value"], overrides),
        "recommended-trace.csv": recommended_trace,
        "recommended-profile.toml": _profile_text(inputs.profile),
        "summary.txt": summary_text(result),
        "advice.json": json.dumps({"inputs": {k: str(v) if isinstance(v, Path) else v
                                              for k, v in vars(inputs).items()},
                                   "candidates": rows, "overrides": [dict(zip(("change", "subject", "column", "value"),
                                                                              o, strict=True)) for o in overrides]},
                                  indent=2) + "\n",
    }


def _kind_row(kind: Any, checkpoint_cost_s: float) -> list[Any]:
    mtbp = kind.mean_time_between_preemptions_s
    optimum = young_daly_interval_s(checkpoint_cost_s, mtbp) if mtbp else None
    return [kind.kind, kind.workloads, kind.gangs, kind.preemptions, kind.run_hours, kind.lost_gpu_hours,
            None if mtbp is None else round(mtbp, 1), checkpoint_cost_s, None if optimum is None else round(optimum, 1)]


def _override_rows(result: PreemptionAdvice) -> list[list[Any]]:
    if result.recommended is None:
        return []
    policy = result.recommended.policy
    rows: list[list[Any]] = [["preemption_policy", f"priority {p}", "preemption_policy", "never"]
                             for p in policy.never_preempt]
    rows += [["disruption_mode", kind, "disruption_mode", mode] for kind, mode in policy.disruption_mode]
    rows += [["on_pod_loss", kind, "on_pod_loss", value] for kind, value in policy.on_pod_loss]
    rows += [["checkpoint_interval_s", kind, "checkpoint_interval_s", f"{s:g}"]
             for kind, s in policy.checkpoint_interval_s]
    return rows


def _profile_text(profile: str) -> str:
    path = Path(profile)
    if path.suffix == ".toml" or path.exists():
        text = path.read_text(encoding="utf-8")
    else:
        text = (resources.files("scheduler") / "profiles" / f"{profile}.toml").read_text(encoding="utf-8")
    return ("# advise preemption: the profile every replay used. No recommendation is a profile setting:\n"
            "# the recommended policies are trace columns (recommended-trace.csv, overrides.csv).\n" + text)


def summary_text(result: PreemptionAdvice) -> str:
    inputs = result.inputs
    lines = [f"advise preemption: {len(result.candidates)} candidates, each replayed with seeds "
             f"{', '.join(str(s) for s in inputs.replay_seeds)} under profile {Path(inputs.profile).name}",
             f"checkpoint overhead assumed: {inputs.checkpoint_cost_s:g} s of a group's GPUs per checkpoint "
             "(--checkpoint-cost-s); the replay does not model checkpoint writes, the overhead is added first order",
             "savings: lost work + checkpoint overhead + GPU-hours waited (at list price), today minus the "
             "candidate, seed by seed; recommended only when every seed saves and the mean exceeds the spread, "
             "and combined only where the combination saves more"]
    from scheduler.framework.profile import load_profile

    profile = load_profile(inputs.profile)
    if not profile.post_filter or not profile.preemption_frees_gpus:
        lines.append(f"profile {profile.name}: its scheduler preempts nothing ("
                     + ("no post_filter" if not profile.post_filter else "GPUs claimed through DRA, before KEP-5690: "
                        "dra_preemption = false")
                     + "); only Kueue's evictions are priced" + ("" if inputs.queues else ", and no --queues was given"))
    lines.append("")
    lines.append("priority classes (today): " + "; ".join(
        f"{c.priority}: {c.preempted_pods_caused} pods preempted, {c.victims_lost_gpu_hours:g} GPU-h lost, "
        f"{c.cascaded_preempted_pods} cascaded" for c in result.classes))
    lines.append("workload kinds (today): " + "; ".join(
        f"{k.kind}: {k.preemptions} preemptions, {k.lost_gpu_hours:g} GPU-h lost" for k in result.kinds))
    lines.append("")
    for c in [*result.candidates, *([result.recommended] if result.recommended else [])]:
        mark = "RECOMMENDED" if c.recommended else f"not recommended{f' ({c.note})' if c.note else ''}"
        lines.append(f"{c.name}: saves ${c.mean_saving_usd:,.2f} (spread ${c.spread_usd:,.2f}), "
                     f"{sum(c.savings_gpu_hours) / max(1, len(c.savings_gpu_hours)):,.2f} GPU-h; {mark}"
                     + (f"  [{c.basis}]" if c.basis else ""))
    if result.recommended is None:
        lines.append("no change saves beyond the spread over the seeds: keep today's settings")
    return "\n".join(lines) + "\n"


def print_summary(result: PreemptionAdvice, console: Console) -> None:
    console.print(summary_text(result), markup=False, highlight=False, end="")
    for path in result.files:
        if path.name in ("summary.txt", "candidates.csv", "recommended-trace.csv"):
            console.print(f"wrote {path}", markup=False, highlight=False)


# ------------------------------------------------------------------------------------ the CLI


def _cmd_advise_preemption(args: argparse.Namespace) -> int:
    trace = Path(args.trace)
    prices = Path(args.prices) if args.prices else trace.with_name("prices.csv")
    if not args.prices and not prices.is_file():
        raise InputError("--prices", f"no price book given and none beside the trace ({prices.name}): give --prices")
    inputs = Inputs(trace, Path(args.cluster), prices, Path(args.queues) if args.queues else None,
                    args.profile or "gang-v1.37", args.replay_seed, args.seeds, args.start, args.checkpoint_cost_s)
    from gpu_finops.interrupts import terminate_as_interrupt

    with terminate_as_interrupt():  # SIGTERM stops the workers as Ctrl-C does, as in `sweep`
        result = run_advice(inputs, Path(args.out), quiet=args.quiet, console=Console(file=sys.stderr),
                            executor=args.executor, address=args.address, workers=args.workers)
    print_summary(result, Console(soft_wrap=True, width=None if sys.stdout.isatty() else 200))
    return 0


def add_preemption(add: Callable[..., argparse.ArgumentParser]) -> None:
    p = add("preemption", _cmd_advise_preemption, "per priority class whether it should preempt, per workload kind "
            "whether its gangs are disrupted as a whole and how often it checkpoints, each priced by replay over seeds")
    p.add_argument("--trace", required=True, help="the workloads (a generic CSV trace: an import or generate folder's)")
    p.add_argument("--cluster", required=True, help="the nodes (as replay --cluster)")
    p.add_argument("--queues", help="Kueue manifests (as replay --queues; default: none)")
    p.add_argument("--prices", help="price book CSV (default: prices.csv beside the trace)")
    p.add_argument("--profile", help="scheduling profile of every replay (default gang-v1.37)")
    p.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                   help=f"replay seeds per candidate (default {DEFAULT_SEEDS}): the spread a change must beat")
    p.add_argument("--replay-seed", type=int, default=42, help="the first replay seed (default 42; then +1, …)")
    p.add_argument("--checkpoint-cost-s", type=float, default=DEFAULT_CHECKPOINT_COST_S,
                   help=f"δ, seconds of a group's GPUs one checkpoint takes (default {DEFAULT_CHECKPOINT_COST_S:g})")
    p.add_argument("--start", help="ISO 8601 anchor for relative trace times")
    p.add_argument("--executor", choices=("local", "ray"), default="local",
                   help="local worker processes (default) or Ray tasks on an existing Ray cluster")
    p.add_argument("--address", help="Ray cluster address (default: auto)")
    p.add_argument("--workers", type=int, help="local worker processes (default: one per CPU)")
    p.add_argument("--out", required=True, help="folder: candidates.csv, recommended-trace.csv, summary.txt, runs/, …")

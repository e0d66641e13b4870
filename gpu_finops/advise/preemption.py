"""``gpu-finops advise preemption``: which priority classes should preempt, which workload kinds'
gangs should be disrupted as a whole, and how often each kind should checkpoint, each priced by
replay (docs/preemption.md).

1. Today's inputs are replayed over ``seeds`` replay seeds (``replay_seed``, +1, …); the first
   replay is read for what happened (`preemption_figures.observe`): per priority class the
   preemptions it caused, its victims' lost GPU-hours and the cascades that followed; per kind
   the preemptions and the time it ran.
2. Candidates, each one trace override (`gpu_finops.trace_policy`): every class that preempted
   made non-preempting (`preemption_policy = never`); every kind with preempted gangs under the
   other disruption mode; every preempted kind checkpointing at Young's and Daly's first-order
   interval √(2·δ·M) − δ (δ the checkpoint cost, M the kind's mean time between preemptions)
   and at half and twice it.
3. Every candidate is replayed over the same seeds and compared with today seed by seed: the
   dollars saved (lost work + checkpoint overhead + GPU-hours waited, `ReplayFigures.cost_usd`)
   and the GPU-hours (lost work + overhead). Per class and per kind the best candidate is kept
   only when it saves on every seed and its mean saving exceeds the spread over the seeds.
4. The kept candidates are combined greedily, best first: each is added only when the
   combination, replayed over the seeds, saves beyond its spread and more than without it
   (two changes that each save can save less together: a class that stops preempting leaves
   nothing for a checkpoint to save). The combination is written as trace overrides
   (``recommended-trace.csv``, ``overrides.csv``) and a profile (``recommended-profile.toml``,
   today's: no recommendation is a profile setting), and replayed over the seeds as
   ``recommended``.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpu_finops.advise.preemption_figures import (
    ClassObserved,
    KindObserved,
    ReplayFigures,
    observe,
    replay_figures,
)
from gpu_finops.trace_policy import TracePolicy, trace_policy_text
from scheduler.errors import InputError
from scheduler.trace.generic import DEFAULT_KIND

DEFAULT_CHECKPOINT_COST_S = 300.0
"""δ: seconds of a whole group's GPUs that writing one checkpoint takes (five minutes: a large
model's sharded state to networked storage). `--checkpoint-cost-s` overrides it."""
DEFAULT_SEEDS = 3
MIN_INTERVAL_S = 60.0  # no candidate checkpoints more often than once a minute
INTERVAL_FACTORS = (0.5, 1.0, 2.0)  # around the analytic interval


@dataclass(frozen=True)
class Inputs:
    trace: Path
    cluster: Path
    prices: Path
    queues: Path | None = None
    profile: str = "gang-v1.37"
    replay_seed: int = 42
    seeds: int = DEFAULT_SEEDS
    start: str | None = None
    checkpoint_cost_s: float = DEFAULT_CHECKPOINT_COST_S

    @property
    def replay_seeds(self) -> list[int]:
        return [self.replay_seed + k for k in range(self.seeds)]


@dataclass
class Candidate:
    name: str
    change: str  # preemption_policy | disruption_mode | checkpoint_interval_s | combined
    subject: str  # the priority class ("priority 1000") or the workload kind
    setting: str  # what it sets, as the trace says it
    policy: TracePolicy
    basis: str = ""  # where the setting comes from (the analytic interval and its inputs)
    figures: list[ReplayFigures] = field(default_factory=list)  # one per seed
    savings_usd: list[float] = field(default_factory=list)  # against today, seed by seed
    savings_gpu_hours: list[float] = field(default_factory=list)
    recommended: bool = False
    note: str = ""  # why a candidate that saves on its own is not recommended

    @property
    def mean_saving_usd(self) -> float:
        return round(statistics.fmean(self.savings_usd), 2) if self.savings_usd else 0.0

    @property
    def spread_usd(self) -> float:
        """max − min of the savings over the seeds."""
        return round(max(self.savings_usd) - min(self.savings_usd), 2) if self.savings_usd else 0.0

    @property
    def beyond_spread(self) -> bool:
        """Saves on every seed, and on average more than its savings vary between seeds."""
        return bool(self.savings_usd) and min(self.savings_usd) > 0 and self.mean_saving_usd > self.spread_usd


@dataclass
class PreemptionAdvice:
    out: Path
    inputs: Inputs
    classes: list[ClassObserved]
    kinds: list[KindObserved]
    today: Candidate
    candidates: list[Candidate]
    recommended: Candidate | None  # the recommendations together, replayed
    files: list[Path] = field(default_factory=list)


def young_daly_interval_s(checkpoint_cost_s: float, mean_time_between_preemptions_s: float) -> float | None:
    """√(2·δ·M) − δ, the first-order optimum of Young (1974) and Daly (2006); None when it is not
    positive (preempted so often that checkpointing costs more than it keeps)."""
    interval = math.sqrt(2 * checkpoint_cost_s * mean_time_between_preemptions_s) - checkpoint_cost_s
    return interval if interval > 0 else None


def traced_modes(trace: Path) -> dict[str, set[str]]:
    """Per workload kind, the disruption modes its gangs' rows say (empty cell: single)."""
    modes: dict[str, set[str]] = {}
    try:
        with trace.open(newline="", encoding="utf-8-sig") as handle:
            for row in csv.DictReader(handle):
                pods = (row.get("pods") or "1").strip() or "1"
                try:
                    if float(pods) <= 1:
                        continue
                except ValueError:
                    continue
                kind = (row.get("kind") or "").strip() or DEFAULT_KIND
                modes.setdefault(kind, set()).add((row.get("disruption_mode") or "").strip().lower() or "single")
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise InputError(trace, f"not a readable CSV trace: {error}") from None
    return modes


def candidates_for(classes: list[ClassObserved], kinds: list[KindObserved], modes: dict[str, set[str]],
                   checkpoint_cost_s: float) -> list[Candidate]:
    found: list[Candidate] = []
    for observed in classes:
        if observed.preempted_pods_caused:
            found.append(Candidate(
                f"never-{observed.priority}", "preemption_policy", f"priority {observed.priority}", "never",
                TracePolicy(never_preempt=(observed.priority,)),
                f"caused {observed.preempted_pods_caused} preempted pod events, {observed.victims_lost_gpu_hours:g} "
                f"GPU-hours lost, {observed.cascaded_preempted_pods} preempted pod events cascaded"))
    for kind in kinds:
        if not kind.preemptions:
            continue
        traced = modes.get(kind.kind, set())
        if kind.gangs and len(traced) == 1:
            other = "single" if traced == {"all"} else "all"
            found.append(Candidate(f"{kind.kind}-{other}", "disruption_mode", kind.kind, other,
                                   TracePolicy(disruption_mode=((kind.kind, other),)),
                                   f"traced {next(iter(traced))}; {kind.preemptions} preemptions"))
        mtbp = kind.mean_time_between_preemptions_s
        optimum = young_daly_interval_s(checkpoint_cost_s, mtbp) if mtbp else None
        if optimum is None:
            continue
        basis = (f"Young/Daly sqrt(2*{checkpoint_cost_s:g}*{mtbp:.0f}) - {checkpoint_cost_s:g} = {optimum:.0f} s "
                 f"(M = {kind.run_hours:g} group-hours / {kind.preemptions} preemptions)")
        for factor in INTERVAL_FACTORS:
            seconds = float(round(max(MIN_INTERVAL_S, optimum * factor)))
            found.append(Candidate(f"{kind.kind}-ckpt{seconds:g}s", "checkpoint_interval_s", kind.kind, f"{seconds:g}",
                                   TracePolicy(checkpoint_interval_s=((kind.kind, seconds),)),
                                   basis if factor == 1.0 else f"{factor:g} x the analytic {optimum:.0f} s"))
    return found


# Replays each (candidate, its trace) over the seeds, all of them together, and sets its figures.
Replayer = Callable[[list[tuple[Candidate, Path]]], None]


def advise(inputs: Inputs, out: Path, replayer: Replayer, write_trace: Callable[[str, str], Path],
           today_run: Callable[[], Path]) -> PreemptionAdvice:
    """Steps 1-4 of the module docstring; `replayer` replays candidates' traces over the seeds,
    `write_trace(name, text)` stores a candidate's trace, `today_run()` is today's first run."""
    today = Candidate("today", "today", "", "as traced", TracePolicy())
    replayer([(today, inputs.trace)])
    classes, kinds = observe(today_run(), inputs.prices)
    candidates = candidates_for(classes, kinds, traced_modes(inputs.trace), inputs.checkpoint_cost_s)
    replayer([(c, write_trace(c.name, trace_policy_text(inputs.trace, c.policy)[0])) for c in candidates])
    for candidate in candidates:
        _compare(candidate, today)
    chosen: dict[tuple[str, str], Candidate] = {}
    for candidate in candidates:
        key = (candidate.change, candidate.subject)
        if candidate.beyond_spread and (key not in chosen or candidate.mean_saving_usd > chosen[key].mean_saving_usd):
            chosen[key] = candidate
    kept = _combine(sorted(chosen.values(), key=lambda c: (-c.mean_saving_usd, c.name)), today, inputs, replayer,
                    write_trace)
    combined = None
    if kept:
        policy = TracePolicy()
        for candidate in kept:
            candidate.recommended = True
            policy = policy.merged(candidate.policy)
        combined = Candidate("recommended", "combined", "all", policy.label(), policy,
                             " + ".join(c.name for c in kept), recommended=True)
        text, _ = trace_policy_text(inputs.trace, policy)
        replayer([(combined, write_trace("recommended", text))])
        _compare(combined, today)
    return PreemptionAdvice(out, inputs, classes, kinds, today, candidates, combined)


def _combine(ordered: list[Candidate], today: Candidate, inputs: Inputs, replayer: Replayer,
             write_trace: Callable[[str, str], Path]) -> list[Candidate]:
    """Step 4: the candidates kept, best first, each adding a saving beyond the spread."""
    if not ordered:
        return []
    kept, best = [ordered[0]], ordered[0]
    for candidate in ordered[1:]:
        policy = TracePolicy()
        for other in [*kept, candidate]:
            policy = policy.merged(other.policy)
        trial = Candidate(f"with-{candidate.name}", "combined", "all", policy.label(), policy,
                          " + ".join(c.name for c in [*kept, candidate]))
        text, _ = trace_policy_text(inputs.trace, policy)
        replayer([(trial, write_trace(trial.name, text))])
        _compare(trial, today)
        gains = [t - b for t, b in zip(trial.savings_usd, best.savings_usd, strict=True)]
        if trial.beyond_spread and min(gains) > 0 and statistics.fmean(gains) > max(gains) - min(gains):
            kept.append(candidate)
            best = trial
        else:
            candidate.note = f"adds no saving beyond the spread on top of {' + '.join(c.name for c in kept)}"
    return kept


def _compare(candidate: Candidate, today: Candidate) -> None:
    candidate.savings_usd = [round(t.cost_usd - c.cost_usd, 2) for t, c in zip(today.figures, candidate.figures,
                                                                                 strict=True)]
    candidate.savings_gpu_hours = [round(t.waste_gpu_hours - c.waste_gpu_hours, 4)
                                   for t, c in zip(today.figures, candidate.figures, strict=True)]


def figures_of(run_dirs: list[Path], inputs: Inputs) -> list[ReplayFigures]:
    return [replay_figures(run_dir, inputs.prices, inputs.checkpoint_cost_s) for run_dir in run_dirs]

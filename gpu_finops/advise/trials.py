"""The values ``advise quotas`` passes between its study and its outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_finops.advise.figures import RunFigures
from gpu_finops.advise.seeds import Improvement
from gpu_finops.advise.space import Point


@dataclass(frozen=True)
class Inputs:
    trace: Path
    cluster: Path
    queues: Path
    prices: Path
    objectives: Path | None = None
    profile: str = "gang-v1.37"
    replay_seed: int = 42
    start: str | None = None
    trace_format: str = "auto"
    seeds: int = 3  # replays per configuration: replay_seed and the seeds after it (`gpu_finops.advise.seeds`)


@dataclass
class Trial:
    number: int
    params: dict[str, Any]
    point: Point
    figures: RunFigures | None = None  # the mean over the replay seeds
    seed_figures: list[RunFigures] = field(default_factory=list)  # one per replay seed, in seed order
    violations: list[float] = field(default_factory=list)
    state: str = "COMPLETE"
    error: str = ""

    @property
    def name(self) -> str:
        return f"trial-{self.number:04d}"

    @property
    def feasible(self) -> bool:
        return self.state == "COMPLETE" and all(v <= 0 for v in self.violations)


@dataclass
class Advice:
    out: Path
    today: RunFigures  # the mean over the replay seeds
    today_seeds: list[RunFigures]  # one per replay seed, in seed order
    trials: list[Trial]
    recommended: Trial | None
    pareto: list[Trial]
    ran: int  # trials replayed by this invocation
    seconds: float
    files: list[Path] = field(default_factory=list)
    # the recommended trial against today, seed by seed: recommended as a change only beyond the noise
    improvement: Improvement | None = None

    @property
    def change(self) -> bool:
        """A change is recommended: a trial beats today's manifests beyond the noise of the seeds."""
        return self.recommended is not None and self.improvement is not None and self.improvement.beyond_noise

"""The values ``advise quotas`` passes between its study and its outputs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpu_finops.advise.figures import RunFigures
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


@dataclass
class Trial:
    number: int
    params: dict[str, Any]
    point: Point
    figures: RunFigures | None = None
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
    today: RunFigures
    trials: list[Trial]
    recommended: Trial | None
    pareto: list[Trial]
    ran: int  # trials replayed by this invocation
    seconds: float
    files: list[Path] = field(default_factory=list)

"""The objectives TOML of ``advise quotas``: targets per team and the bounds of the search.

::

    [team.vision]                 # a team is a trace tenant (fct_workloads.tenant)
    p95_wait_hours = 4.0          # constraint: the team's p95 wait at most this
    min_gpu_hour_share = 0.20     # constraint: at least this share of all teams' GPU-hours
    max_gpu_hour_share = 0.50     # constraint: at most this share

    [search]                      # what varies; absent keys stay as the current manifests say
    nominal_quota = true          # every ClusterQueue's GPU nominalQuota per flavor (default)
    borrowing_limit = [0, 64]     # GPUs; each ClusterQueue in a cohort, each flavor
    lending_limit = [0, 64]       # GPUs; at most the nominal quota (Kueue's webhook)
    reclaim_within_cohort = ["Never", "LowerPriority", "Any"]   # spec.preemption
    within_cluster_queue = ["Never", "LowerPriority"]
    fair_sharing_weight = [0.5, 4.0]                            # spec.fairSharing.weight

    [search.cluster_queue.team-vision]   # per ClusterQueue: the same keys, tighter bounds
    borrowing_limit = [0, 16]

Without a file: no team constraint, nominal quotas searched, the rest as today. The Pareto front
is over idle cost and cost of delay (both minimised, both over the steady window, unservable
demand apart: `gpu_finops.advise.figures`); a point is feasible when every constraint holds,
and one constraint is always there: no more unservable workloads than today; the
recommendation is the feasible point of least idle cost plus cost of delay.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler.errors import InputError

POLICIES = ("Never", "LowerPriority", "Any")
_TEAM_KEYS = {"p95_wait_hours", "min_gpu_hour_share", "max_gpu_hour_share"}
_SEARCH_KEYS = {"nominal_quota", "borrowing_limit", "lending_limit", "reclaim_within_cohort",
                "within_cluster_queue", "fair_sharing_weight", "cluster_queue"}
_QUEUE_KEYS = _SEARCH_KEYS - {"cluster_queue", "nominal_quota"}


@dataclass(frozen=True)
class TeamTarget:
    team: str
    p95_wait_hours: float | None = None
    min_gpu_hour_share: float | None = None
    max_gpu_hour_share: float | None = None


@dataclass(frozen=True)
class Bounds:
    """What one ClusterQueue's search varies beyond its nominal quotas (None: as today)."""

    borrowing_limit: tuple[int, int] | None = None
    lending_limit: tuple[int, int] | None = None
    reclaim_within_cohort: tuple[str, ...] | None = None
    within_cluster_queue: tuple[str, ...] | None = None
    fair_sharing_weight: tuple[float, float] | None = None


@dataclass(frozen=True)
class Objectives:
    source: str = "(defaults)"
    teams: tuple[TeamTarget, ...] = ()
    nominal_quota: bool = True
    bounds: Bounds = Bounds()
    per_queue: dict[str, Bounds] = field(default_factory=dict)
    # today's unservable workloads (`advise quotas` sets it from today's replay): a trial may
    # not make more workloads unservable, since their cost is kept apart from the cost of delay
    max_unservable: float | None = None  # a count, or its mean over the replay seeds

    def bounds_of(self, cluster_queue: str) -> Bounds:
        return self.per_queue.get(cluster_queue, self.bounds)


def read_objectives(path: Path | None) -> Objectives:
    if path is None:
        return Objectives()
    path = Path(path)
    from gpu_finops.sweep.spec import read_toml  # the sweep file's reader: one rule for both

    document = read_toml(path)
    for key in document:
        if key not in ("team", "search"):
            raise InputError(path, "unknown table; known: team, search", field=key)
    teams = _teams(path, document.get("team", {}))
    search = document.get("search", {})
    if not isinstance(search, dict):
        raise InputError(path, "must be a table", field="search")
    _known(path, search, _SEARCH_KEYS, "search")
    nominal = search.get("nominal_quota", True)
    if not isinstance(nominal, bool):
        raise InputError(path, f"must be true or false, got {nominal!r}", field="search.nominal_quota")
    base = _bounds(path, search, "search", Bounds())
    queues = search.get("cluster_queue", {})
    if not isinstance(queues, dict):
        raise InputError(path, "must be a table of ClusterQueues", field="search.cluster_queue")
    per_queue = {}
    for name, table in queues.items():
        where = f"search.cluster_queue.{name}"
        if not isinstance(table, dict):
            raise InputError(path, "must be a table", field=where)
        _known(path, table, _QUEUE_KEYS, where)
        per_queue[name] = _bounds(path, table, where, base)
    return Objectives(str(path), teams, nominal, base, per_queue)


def _known(path: Path, table: dict[str, Any], known: set[str], where: str) -> None:
    for key in table:
        if key not in known:
            raise InputError(path, f"unknown key; known: {', '.join(sorted(known))}", field=f"{where}.{key}")


def _teams(path: Path, tables: Any) -> tuple[TeamTarget, ...]:
    if not isinstance(tables, dict):
        raise InputError(path, "must be [team.NAME] tables", field="team")
    teams = []
    for name, table in tables.items():
        where = f"team.{name}"
        if not isinstance(table, dict):
            raise InputError(path, "must be a table", field=where)
        _known(path, table, _TEAM_KEYS, where)
        values: dict[str, float] = {}
        for key, value in table.items():
            if not isinstance(value, int | float) or isinstance(value, bool) or not 0 <= value < math.inf:
                raise InputError(path, f"must be a finite number >= 0, got {value!r}", field=f"{where}.{key}")
            if key.endswith("share") and value > 1:
                raise InputError(path, f"a share is between 0 and 1, got {value!r}", field=f"{where}.{key}")
            values[key] = float(value)
        low, high = values.get("min_gpu_hour_share"), values.get("max_gpu_hour_share")
        if low is not None and high is not None and low > high:
            raise InputError(path, f"min_gpu_hour_share {low} > max_gpu_hour_share {high}", field=where)
        teams.append(TeamTarget(name, **values))
    return tuple(teams)


def _bounds(path: Path, table: dict[str, Any], where: str, base: Bounds) -> Bounds:
    def gpus(key: str) -> tuple[int, int] | None:
        if key not in table:
            return getattr(base, key)
        value = table[key]
        if (not isinstance(value, list) or len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool)
                                                                      for v in value) or not 0 <= value[0] <= value[1]):
            raise InputError(path, f"must be [low, high] whole GPUs, 0 <= low <= high, got {value!r}",
                             field=f"{where}.{key}")
        return (value[0], value[1])

    def policies(key: str) -> tuple[str, ...] | None:
        if key not in table:
            return getattr(base, key)
        value = table[key]
        if not isinstance(value, list) or not value or any(v not in POLICIES for v in value):
            raise InputError(path, f"must be a non-empty list of {', '.join(POLICIES)}, got {value!r}",
                             field=f"{where}.{key}")
        return tuple(dict.fromkeys(value))

    weight = base.fair_sharing_weight
    if "fair_sharing_weight" in table:
        value = table["fair_sharing_weight"]
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value)
                or not 0 < value[0] <= value[1] < math.inf):
            raise InputError(path, f"must be [low, high] with 0 < low <= high, finite, got {value!r}",
                             field=f"{where}.fair_sharing_weight")
        weight = (float(value[0]), float(value[1]))
    return Bounds(gpus("borrowing_limit"), gpus("lending_limit"), policies("reclaim_within_cohort"),
                  policies("within_cluster_queue"), weight)


def violations(objectives: Objectives, figures: Any) -> list[float]:
    """One value per constraint, <= 0 when it holds (Optuna's convention): how far each team is
    from its targets (hours of p95 wait, points of share), then, when ``max_unservable`` is set,
    how many more workloads are unservable than today. A team without workloads counts as 0 h
    of wait and a 0 share."""
    values: list[float] = []
    for target in objectives.teams:
        team = figures.team(target.team)
        p95 = team.p95_wait_h if team else 0.0
        share = team.gpu_hour_share if team else 0.0
        if target.p95_wait_hours is not None:
            values.append(round(p95 - target.p95_wait_hours, 4))
        if target.min_gpu_hour_share is not None:
            values.append(round(target.min_gpu_hour_share - share, 4))
        if target.max_gpu_hour_share is not None:
            values.append(round(share - target.max_gpu_hour_share, 4))
    if objectives.max_unservable is not None:
        values.append(round(float(figures.unservable_workloads - objectives.max_unservable), 4))
    return values

"""A replay's figures, read from the marts: what ``advise quotas`` minimises and constrains.

One function, `run_figures`, so that a change to how the marts define a cost (the cost of
delay, say) is followed here by changing one query. The figures are rounded (cents, hundredths
of a GPU-hour, seconds) before they reach the optimizer: DuckDB sums doubles in parallel, in no
fixed order, and a last-bit difference would send a seeded sampler down another path.

- ``idle_cost``: the effective cost of idle GPU-hours in the steady window (`fct_usage_hourly`,
  ``usage_class = 'idle'``, ``phase = 'steady'``): warm-up and drain idle belong to the trace's
  edges, not to the quotas.
- ``cost_of_delay``: the GPU-hours workloads demanded while pending in the steady window's
  charge periods, capped by what the cluster could have run, at list price
  (`int_pending_demand_capped`, the rows `fct_workloads.pending_demand_list_value` sums, kept to
  the periods of `int_run_phases`' steady window): the same window as ``idle_cost``.
  Unservable workloads (`fct_unservable_demand`) are not in it: no quota of the trial served
  them, so they would drown what quotas can move (on the demo, 84 % of a whole-run cost of
  delay was 7 oversized gangs). They are reported apart, per team and in all:
  ``unservable_workloads`` and ``unservable_cost`` (their GPU-hours waited plus asked, at the
  list price of the cheapest model they accept), and `gpu_finops.advise.objectives.violations`
  keeps a trial from making more workloads unservable than today.
- per team (`fct_workloads.tenant`): workloads, p95 and median wait (hours, as the saved query
  ``wait_times_by_team``, rejected workloads left out, an unservable one waiting to the end of
  the run), the team's GPU-hours and their share of all teams' GPU-hours, its cost of delay,
  workloads still pending at the end and unservable ones with their cost. The cost of delay is
  the sum of the teams'.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from pipeline.connect import connect


@dataclass(frozen=True)
class TeamFigures:
    team: str
    workloads: int
    p95_wait_h: float
    median_wait_h: float
    gpu_hours: float
    gpu_hour_share: float
    cost_of_delay: float
    still_pending: float  # a count; over several seeds, their mean (`gpu_finops.advise.seeds`)
    unservable: float = 0  # workloads these quotas can never admit (a count, or a mean over seeds)
    unservable_cost: float = 0.0  # their GPU-hours waited and asked at list price: apart, not delay


@dataclass(frozen=True)
class RunFigures:
    run_id: str
    idle_cost: float
    cost_of_delay: float
    teams: tuple[TeamFigures, ...] = field(default_factory=tuple)

    @property
    def unservable_workloads(self) -> float:
        return sum(t.unservable for t in self.teams)

    @property
    def unservable_cost(self) -> float:
        """Reported apart from the cost of delay: what no quota of this run served."""
        return round(sum(t.unservable_cost for t in self.teams), 2)

    @property
    def total(self) -> float:
        """What the default recommendation minimises: idle cost plus cost of delay."""
        return round(self.idle_cost + self.cost_of_delay, 2)

    def team(self, name: str) -> TeamFigures | None:
        return next((t for t in self.teams if t.team == name), None)

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "idle_cost": self.idle_cost, "cost_of_delay": self.cost_of_delay,
                "total": self.total, "unservable_workloads": self.unservable_workloads,
                "unservable_cost": self.unservable_cost, "teams": [asdict(t) for t in self.teams]}

    @classmethod
    def from_dict(cls, value: dict[str, Any]) -> RunFigures:
        return cls(value["run_id"], value["idle_cost"], value["cost_of_delay"],
                   tuple(TeamFigures(**t) for t in value["teams"]))


_IDLE = """
SELECT coalesce(sum(effective_cost), 0) FROM fct_usage_hourly
WHERE run_id = ? AND usage_class = 'idle' AND phase = 'steady'
"""
# Every workload's wait (hours), its cost of delay in the steady window and, for an unservable
# workload (one these quotas can never admit), what it cost apart: it waited from its submission
# to the end of the run and never ran, so its GPU-hours waited plus the GPU-hours it asked for
# (bought elsewhere, or not done), at the list price of the cheapest GPU model it accepts.
_WAITS = """
WITH unservable AS (
    SELECT u.run_id, u.workload_id, u.waited_gpu_hours, u.asked_gpu_hours,
           u.waited_gpu_hours / nullif(u.demand_gpus, 0) AS waited_h,
           (SELECT min(p.list_unit_price) FROM stg_prices p
            WHERE p.run_id = u.run_id AND p.resource = 'gpu'
              AND list_contains(string_split(u.gpu_model, '|'), p.gpu_model)) AS price
    FROM fct_unservable_demand u WHERE u.run_id = ?
), steady_delay AS (
    -- the capped pending demand of the steady window's charge periods (int_run_phases)
    SELECT d.workload_id, sum(d.list_value) AS list_value
    FROM int_pending_demand_capped d
    JOIN stg_runs r USING (run_id)
    JOIN int_run_phases p USING (run_id)
    WHERE d.run_id = ? AND d.period_index * r.charge_period_s >= p.warmup_end_s
      AND d.period_index * r.charge_period_s < p.drain_start_s
    GROUP BY d.workload_id
)
SELECT w.tenant AS team, w.final_state,
       coalesce(w.wait_s / 3600, u.waited_h, 0) AS wait_h,
       w.gpu_hours_productive + w.gpu_hours_gang_wait + w.gpu_hours_lost AS gpu_hours,
       CASE WHEN w.outcome = 'unservable' THEN 0 ELSE coalesce(s.list_value, 0) END AS delay_cost,
       CASE WHEN w.outcome = 'unservable' THEN coalesce((u.waited_gpu_hours + u.asked_gpu_hours) * u.price, 0)
            ELSE 0 END AS unservable_cost,
       w.outcome = 'unservable' AS unservable
FROM fct_workloads w LEFT JOIN unservable u USING (run_id, workload_id)
LEFT JOIN steady_delay s USING (workload_id)
WHERE w.run_id = ? AND w.final_state <> 'rejected'
"""
_TEAMS = f"""
WITH waits AS ({_WAITS}), per_team AS (
    SELECT team, count(*) AS workloads,
           coalesce(quantile_cont(wait_h, 0.95), 0) AS p95_wait_h,
           coalesce(median(wait_h), 0) AS median_wait_h,
           sum(gpu_hours) AS gpu_hours, sum(delay_cost) AS cost_of_delay,
           count(*) FILTER (WHERE final_state = 'pending_at_end') AS still_pending,
           count(*) FILTER (WHERE unservable) AS unservable,
           sum(unservable_cost) AS unservable_cost
    FROM waits GROUP BY team
)
SELECT team, workloads, p95_wait_h, median_wait_h, gpu_hours,
       coalesce(gpu_hours / nullif(sum(gpu_hours) OVER (), 0), 0) AS gpu_hour_share,
       coalesce(cost_of_delay, 0), still_pending, unservable, coalesce(unservable_cost, 0)
FROM per_team ORDER BY team
"""


TABLES = ("fct_usage_hourly", "fct_workloads", "fct_unservable_demand", "stg_prices", "int_pending_demand_capped",
          "int_run_phases", "stg_runs")
"""The tables the figures read: a trial builds only these and what they are made from
(`pipeline.partial.build_models`)."""


def run_figures(db: Path, run_id: str) -> RunFigures:
    """The figures of one built run in the database file `db` (see the module docstring)."""
    with connect(db, read_only=True) as con:
        return figures_of(con, run_id)


def figures_of(con: duckdb.DuckDBPyConnection, run_id: str) -> RunFigures:
    """The figures of one built run, read through an open connection."""
    idle = con.execute(_IDLE, [run_id]).fetchone()
    rows = con.execute(_TEAMS, [run_id, run_id, run_id]).fetchall()
    teams = tuple(TeamFigures(str(team), int(n), round(float(p95), 4), round(float(median), 4), round(float(hours), 2),
                              round(float(share), 4), round(float(cost), 2), int(pending), int(unservable),
                              round(float(apart), 2))
                  for team, n, p95, median, hours, share, cost, pending, unservable, apart in rows)
    return RunFigures(run_id, round(float(idle[0] if idle else 0.0), 2), round(sum(t.cost_of_delay for t in teams), 2),
                      teams)

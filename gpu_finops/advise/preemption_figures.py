"""A replay's preemption figures, read from the marts, for ``advise preemption``.

Built in memory by `pipeline.partial.build_models` (the models `fct_workloads` and
`int_pod_intervals` need, as a full build makes them), rounded before they are compared (DuckDB
sums doubles in no fixed order):

- ``lost_gpu_hours`` / ``lost_usd``: GPU-hours lost to preemption (progress since the group's
  last checkpoint, `fct_workloads.gpu_hours_lost`) and their effective cost
  (`preemption_waste_cost`);
- ``overhead_gpu_hours`` / ``overhead_usd``: what writing checkpoints costs, which the replay
  does not model (a checkpoint is free there): every workload with a `checkpoint_interval_s`
  spends ``checkpoint_cost_s`` of all its GPUs per interval of progress, first order, on its
  productive plus lost GPU-hours, at its own effective cost per GPU-hour;
- ``wait_hours``: submission to first running pod, summed over the workloads that started;
  ``wait_gpu_hours`` / ``wait_usd``: every stretch a workload waited (first and after each
  requeue, `int_pending_demand`) times the GPUs it asked for, at the list price of the cheapest
  model it accepts: waiting GPU-hours valued as if they ran, uncapped (a preemption policy moves
  waits between priority classes, and the cluster is full when it matters, where the capped
  cost of delay counts nothing); ``delay_usd``: the project's cost of delay
  (`fct_workloads.pending_demand_list_value`, capped by what the cluster could have run),
  reported beside it; ``still_pending``: workloads that never ran;
- per priority class (`observe`): the preempted pod events its workloads caused, the GPU-hours
  their victims lost (`int_pod_intervals.preemptor`), and how many of those victims went on to
  preempt others (a cascade); per workload kind: preemptions (once per attempt), the group-hours
  it ran and the GPU-hours it lost.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

TABLES = ("fct_workloads", "int_pod_intervals", "int_pending_demand")


@dataclass(frozen=True)
class ReplayFigures:
    lost_gpu_hours: float
    lost_usd: float
    overhead_gpu_hours: float
    overhead_usd: float
    wait_hours: float
    delay_usd: float
    preempted_pods: int
    still_pending: int
    wait_gpu_hours: float
    wait_usd: float

    @property
    def waste_gpu_hours(self) -> float:
        """What a preemption policy trades: work lost plus checkpoint overhead."""
        return round(self.lost_gpu_hours + self.overhead_gpu_hours, 4)

    @property
    def cost_usd(self) -> float:
        """What the advice minimises: lost work, checkpoint overhead and the GPU-hours waited."""
        return round(self.lost_usd + self.overhead_usd + self.wait_usd, 2)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"waste_gpu_hours": self.waste_gpu_hours, "cost_usd": self.cost_usd}


def replay_figures(run_dir: Path, prices: Path, checkpoint_cost_s: float) -> ReplayFigures:
    from pipeline.partial import build_models

    con = build_models([run_dir], prices, TABLES)
    try:
        row = con.execute(_FIGURES, [checkpoint_cost_s]).fetchone()
    finally:
        con.close()
    assert row is not None
    hours, usd = (lambda v: round(float(v or 0), 4)), (lambda v: round(float(v or 0), 2))
    return ReplayFigures(hours(row[0]), usd(row[1]), hours(row[2]), usd(row[3]), hours(row[4]), usd(row[5]),
                         int(row[6] or 0), int(row[7] or 0), hours(row[8]), usd(row[9]))


_FIGURES = """
with w as (
    select f.*, s.checkpoint_interval_s,
        f.gpu_hours_productive + f.gpu_hours_lost as run_gpu_hours,
        f.effective_cost / nullif(f.gpu_hours_productive + f.gpu_hours_lost + f.gpu_hours_gang_wait, 0)
            as usd_per_gpu_hour
    from fct_workloads as f
    inner join stg_workloads as s using (run_id, workload_id)
    where f.final_state <> 'rejected'
),
waits as (
    select d.demand_gpus * (d.end_s - d.start_s) / 3600.0 as gpu_hours,
        (select min(p.list_unit_price) from stg_prices as p
         where p.run_id = d.run_id and p.resource = 'gpu'
             and list_contains(string_split(d.gpu_models, '|'), p.gpu_model)) as usd_per_gpu_hour
    from int_pending_demand as d
)
select
    sum(gpu_hours_lost),
    sum(preemption_waste_cost),
    coalesce(sum(run_gpu_hours * ?1 / checkpoint_interval_s) filter (where checkpoint_interval_s > 0), 0),
    coalesce(sum(run_gpu_hours * ?1 / checkpoint_interval_s * coalesce(usd_per_gpu_hour, 0))
        filter (where checkpoint_interval_s > 0), 0),
    sum(wait_s) / 3600.0,
    sum(pending_demand_list_value),
    (select count(*) from stg_events where event = 'preempted'),
    count(*) filter (where final_state = 'pending_at_end'),
    (select sum(gpu_hours) from waits),
    (select sum(gpu_hours * coalesce(usd_per_gpu_hour, 0)) from waits)
from w
"""


@dataclass(frozen=True)
class ClassObserved:
    priority: int
    workloads: int
    preempted_pods_caused: int
    victims_lost_gpu_hours: float
    cascaded_preempted_pods: int  # pod events caused afterwards by workloads this class preempted


@dataclass(frozen=True)
class KindObserved:
    kind: str
    workloads: int
    gangs: int  # workloads of more than one pod
    preemptions: int  # once per attempt (fct_workloads.preemptions)
    run_hours: float  # group-hours of progress (productive + lost GPU-hours / GPUs of the group)
    run_gpu_hours: float
    lost_gpu_hours: float

    @property
    def mean_time_between_preemptions_s(self) -> float | None:
        return self.run_hours * 3600 / self.preemptions if self.preemptions else None


def observe(run_dir: Path, prices: Path) -> tuple[list[ClassObserved], list[KindObserved]]:
    """Who preempts whom, per priority class, and how often each workload kind is preempted."""
    from pipeline.partial import build_models

    con = build_models([run_dir], prices, TABLES)
    try:
        classes = [ClassObserved(int(p), int(n), int(caused or 0), round(float(lost or 0), 4), int(cascade or 0))
                   for p, n, caused, lost, cascade in con.execute(_CLASSES).fetchall()]
        kinds = [KindObserved(str(k), int(n), int(g), int(p or 0), round(float(h or 0), 4), round(float(gh or 0), 4),
                              round(float(lost or 0), 4)) for k, n, g, p, h, gh, lost in con.execute(_KINDS).fetchall()]
    finally:
        con.close()
    return classes, kinds


_CLASSES = """
with preempted as (
    select e.time_s, e.workload_id as victim, e.preemptor, p.priority as preemptor_priority
    from stg_events as e
    inner join stg_workloads as p on p.run_id = e.run_id and p.workload_id = e.preemptor
    where e.event = 'preempted' and e.preemptor is not null
),
lost as (
    select p.priority, sum(i.gpus * (i.end_s - i.start_s)) / 3600.0 as gpu_hours
    from int_pod_intervals as i
    inner join stg_workloads as p on p.run_id = i.run_id and p.workload_id = i.preemptor
    where i.usage_class = 'lost_to_preemption'
    group by all
),
firsts as (
    select victim, preemptor_priority, min(time_s) as first_s from preempted group by all
),
cascade as (  -- a later preemption by a workload this class preempted before
    select f.preemptor_priority as priority, count(*) as pods
    from firsts as f
    inner join preempted as later on later.preemptor = f.victim and later.time_s > f.first_s
    group by all
),
classes as (
    select priority, count(*) as workloads from stg_workloads group by all
)
select c.priority, c.workloads,
    (select count(*) from preempted as p where p.preemptor_priority = c.priority),
    l.gpu_hours, k.pods
from classes as c
left join lost as l using (priority)
left join cascade as k using (priority)
order by c.priority desc
"""

_KINDS = """
select coalesce(w.kind, 'batch') as kind, count(*), count(*) filter (where w.pods > 1), sum(f.preemptions),
    sum((f.gpu_hours_productive + f.gpu_hours_lost) / nullif(w.pods * w.gpus_per_pod, 0)),
    sum(f.gpu_hours_productive + f.gpu_hours_lost), sum(f.gpu_hours_lost)
from fct_workloads as f
inner join stg_workloads as w using (run_id, workload_id)
where f.final_state <> 'rejected'
group by all
order by kind
"""


"""The idle waterfall's steps as SQL, from the registry (pipeline/registry.py WATERFALL).

int_idle_by_cause.sql holds everything a step reads: `after_0` (every GPU model at every step
of the run's grid, with `free_0`, the usable free GPUs the gang barrier left), `level_members`
(each waiting level on each model of its set, with its wait kind and minimum shape) and
`fit_keyed` (int_shape_fit). The steps join, group and partition on integer keys numbered there:
mkey a run's GPU model, lkey a run's waiting set (wait kind, models, minimum shape), fkey a
run's GPU model × pod size (a fit's); with the step (a run's grid point, numbered in time order)
they stand for the text and double columns they number, so every row is the same, and the
quota step's tens of millions of level-steps are narrow enough to sort in memory. Each step is
the same block: the models' steps with GPUs left that a level of
its waits is on, the levels' members there with their fit, the registry's fit test (a macro of
models/macros.sql) for what each member could have used, and the claim: per waiting set, what
its members could use, scaled to its GPUs where they could use more (its demand counts once
across its models), never more than the GPUs left. The block ends in `waterfall_claims`:
run_id, gpu_model, step, idle_reason, gpus (one row per claim step and model step).
"""

from __future__ import annotations

from pipeline.registry import WATERFALL, Claim

MARKER = "-- @waterfall (pipeline/waterfall.py)"

# a waiting level at a step: one set of GPU models, one minimum shape, one wait kind (lkey)
_LEVEL = "lkey, step"


def _step(n: int, claim: Claim) -> str:
    waits = ", ".join(f"'{wait}'" for wait in claim.waits)
    before = f"free_{n - 1}"
    # what each level still asks for: its GPUs less what the steps before claimed for it there
    if n == 1:
        still_asked, used_join = "l.gpus", ""
    else:
        still_asked = "l.gpus - coalesce(u.gpus, 0)"
        used_join = f"\n        left join used_{n - 1} as u on u.lkey = l.lkey and u.step = f.step"
    return f"""
w{n}_free as (
    -- {claim.cause} ({', '.join(claim.waits)}): every step of a model; ord counts its steps with GPUs left
    select mkey, step, time_s, {before} as free,
        cast(sum(cast({before} > 0 as integer)) over (
            partition by mkey order by step rows between unbounded preceding and current row
        ) as bigint) as ord
    from after_{n - 1} as f
    where exists (select 1 from level_members as l where l.wait in ({waits}) and l.mkey = f.mkey)
),

w{n}_members as (
    -- each level on each model where GPUs are left, at each of its steps, with the fit of its size
    select s.*, coalesce(q.fit_pods, 0) as fit_pods, coalesce(q.unfit_free_gpus, 0) as unfit_free_gpus,
        coalesce(q.free_gpus, 0) as all_free_gpus
    from (
        select l.lkey, l.mkey, l.fkey, l.gpus_per_pod, l.min_pods, {still_asked} as gpus,
            f.step, f.time_s, f.free
        from (
            select l.lkey, l.mkey, l.fkey, l.gpus_per_pod, l.min_pods, l.gpus,
                unnest(range(b.ord - cast(b.free > 0 as bigint) + 1, e.ord + 1)) as ord
            from level_members as l
            inner join w{n}_free as b on b.mkey = l.mkey and b.step = l.step
            inner join w{n}_free as e on e.mkey = l.mkey and e.step = l.next_step - 1
            where l.wait in ({waits})
        ) as l
        inner join w{n}_free as f using (mkey, ord){used_join}
        where f.free > 0
    ) as s
    -- the fit in force at this step (every change of it is a point of the grid)
    -- (of the fit's timelines, only those of the sizes these waits ask for on these models)
    asof left join (
        select * from fit_keyed
        where fkey in (select fkey from level_members where wait in ({waits}))
    ) as q on q.fkey = s.fkey and q.start_s <= s.time_s
    where s.gpus > 1e-9
),

w{n}_wanted as (
    -- the fit test: what each member could use; a level wants at most its GPUs over its models
    select *, usable * least(1, gpus / xsum(usable) over (partition by {_LEVEL})) as wanted
    from (
        select *, {claim.fit_test}(free, fit_pods, unfit_free_gpus, all_free_gpus, gpus_per_pod, min_pods,
            fits_packed_somewhere) as usable
        from (
            select *, bool_or(min_pods * gpus_per_pod <= all_free_gpus + 1e-9) over (partition by {_LEVEL})
                as fits_packed_somewhere
            from w{n}_members
        )
    )
    qualify xsum(usable) over (partition by {_LEVEL}) > 0
),

w{n}_pull as (
    select mkey, step, xsum(wanted) as wanted
    from w{n}_wanted
    group by all
),

after_{n} as (
    -- never more than the GPUs left
    select f.*, least(f.{before}, coalesce(p.wanted, 0)) as claim_{n},
        f.{before} - least(f.{before}, coalesce(p.wanted, 0)) as free_{n}
    from after_{n - 1} as f
    left join w{n}_pull as p using (mkey, step)
),

used_{n} as (
    -- what each level has been given so far at each step (a model short of GPUs gives each its part)
    select {_LEVEL}, xsum(gpus) as gpus
    from (
        {f"select * from used_{n - 1} union all" if n > 1 else ""}
        select w.lkey, w.step, w.wanted * a.claim_{n} / p.wanted as gpus
        from w{n}_wanted as w
        inner join w{n}_pull as p using (mkey, step)
        inner join after_{n} as a using (mkey, step)
        where p.wanted > 0
    )
    group by all
),
"""


def waterfall_ctes() -> str:
    """The CTEs of every step of the waterfall, then `waterfall_claims`."""
    steps = "".join(_step(n, claim) for n, claim in enumerate(WATERFALL, 1))
    last = len(WATERFALL)
    claims = "\n    union all\n".join(
        f"    select run_id, gpu_model, step, '{claim.cause}' as idle_reason, claim_{n} as gpus from after_{last}"
        for n, claim in enumerate(WATERFALL, 1)
    )
    return f"{steps}\nwaterfall_claims as (\n{claims}\n),\n"


def render(sql: str) -> str:
    """A model's SQL with the waterfall's CTEs in place of its marker line (if it has one)."""
    return sql.replace(MARKER, waterfall_ctes()) if MARKER in sql else sql

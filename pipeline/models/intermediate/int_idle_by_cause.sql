-- grain: one row per run × node × charge period × idle reason (gang_barrier, quota, fragmentation, scheduling_latency, shared_device_slack, no_demand) with idle GPU-hours; a cause that explains none of a node-period has no row
-- Idle GPUs are explained, in this order, by what could have used them (docs/cost-model.md §3):
--   shared_device_slack  the unshared part of shared devices (int_shared_device_slack), per node;
-- then the usable free GPUs of each GPU model (GPUs − held − slack) go to
--   gang_barrier         the missing pods of gangs holding reservations at the barrier;
--   fragmentation        workloads a placement attempt failed for (admitted, their quota
--                        reserved; and the missing pods of gangs started one by one);
--   scheduling_latency   admitted workloads not tried yet, backing off, or waiting for
--                        preempted pods to drain;
--   quota                workloads Kueue holds back for quota, only on the free GPUs their
--                        minimum shape fits (int_quota_fit);
--   scheduling_latency   workloads Kueue has not evaluated yet;
--   no_demand            the rest.
-- Demand that can never run is no demand (int_unservable_workloads). A workload accepting
-- several models counts once: at each step its GPUs are split over its models in proportion to
-- their free GPUs (left by the causes before), so Σ over models ≤ its demand. The cluster-level
-- timeline is integrated exactly between its change points; each model-level amount is spread
-- over the model's nodes in proportion to their idle GPU-hours net of slack (capped), and the
-- remainder is no_demand.
with capacity as (
    select * from int_node_capacity_periods
),

intervals as (
    select * from int_pod_intervals
),

pending as (
    select * from int_pending_demand
),

barrier as (
    select * from int_gang_barrier_demand
),

quota_fit as (
    select * from int_quota_fit
),

slack as (
    select * from int_shared_device_slack
),

nodes as (
    select * from stg_nodes
),

runs as (
    select * from stg_runs
),

model_capacity as (
    select run_id, gpu_model, sum(gpus) as model_gpus
    from nodes
    where gpu_model is not null
    group by all
),

demand as (
    -- an admitted workload's latency wait comes before quota (its quota is reserved); only a
    -- quota wait keeps its shape (the fit test), the others are keyed by their models alone
    select
        run_id,
        case when blocked_by = 'latency' and admitted then 'latency_admitted' else blocked_by end as cause,
        gpu_models,
        case when blocked_by = 'quota' then gpus_per_pod else 0 end as gpus_per_pod,
        case when blocked_by = 'quota' then min_pods else 0 end as min_pods,
        start_s,
        end_s,
        demand_gpus as gpus
    from pending
    union all
    select run_id, blocked_by, gpu_model, 0, 0, start_s, end_s, missing_gpus from barrier
),

model_changes as (
    -- what each GPU model holds, its slack, and the missing GPUs of gangs at the barrier
    select i.run_id, n.gpu_model, i.start_s as time_s, i.gpus as held_delta, 0.0 as slack_delta,
        0.0 as barrier_delta
    from intervals as i
    inner join nodes as n using (run_id, node)
    where n.gpu_model is not null
    union all
    select i.run_id, n.gpu_model, i.end_s, -i.gpus, 0.0, 0.0
    from intervals as i
    inner join nodes as n using (run_id, node)
    where n.gpu_model is not null
    union all
    select run_id, gpu_model, start_s, 0.0, slack_gpus, 0.0 from slack
    union all
    select run_id, gpu_model, end_s, 0.0, -slack_gpus, 0.0 from slack
    union all
    select run_id, gpu_models, start_s, 0.0, 0.0, gpus from demand where cause = 'gang_barrier'
    union all
    select run_id, gpu_models, end_s, 0.0, 0.0, -gpus from demand where cause = 'gang_barrier'
),

set_changes as (
    -- waiting demand per cause and set of GPU models ('A|B'), quota's also per minimum shape
    select run_id, cause, gpu_models, gpus_per_pod, min_pods, start_s as time_s, gpus as delta
    from demand where cause <> 'gang_barrier'
    union all
    select run_id, cause, gpu_models, gpus_per_pod, min_pods, end_s, -gpus
    from demand where cause <> 'gang_barrier'
),

grid as (
    -- every change point of the run, and the period boundaries and horizon
    select distinct run_id, time_s from (
        select run_id, time_s from model_changes
        union all
        select run_id, time_s from set_changes
        union all
        select run_id, unnest(list_append(
            list_transform(
                range(0, cast(ceil(horizon_s / charge_period_s) as bigint)),
                lambda k: k * charge_period_s
            ),
            horizon_s
        )) from runs
    )
),

model_points as (
    select run_id, gpu_model, time_s, xsum(held_delta) as held_delta, xsum(slack_delta) as slack_delta,
        xsum(barrier_delta) as barrier_delta
    from model_changes
    group by all
),

model_levels as (
    -- what each model holds from each of its change points on (running sums over the change
    -- points alone: the grid's other points add nothing)
    select
        run_id,
        gpu_model,
        time_s,
        -- requests are whole milli-GPUs: rounding drops the float noise of long running sums
        round(xsum(held_delta) over w, 9) as held_gpus,
        round(xsum(slack_delta) over w, 9) as slack_gpus,
        round(xsum(barrier_delta) over w, 9) as barrier_gpus
    from model_points
    window w as (partition by run_id, gpu_model order by time_s rows between unbounded preceding and current row)
),

grid_steps as (
    -- the grid's points numbered in time order
    select run_id, time_s, row_number() over w as step, lead(time_s) over w as next_time_s,
        count(*) over (partition by run_id) as steps
    from grid
    window w as (partition by run_id order by time_s)
),

model_steps as (
    -- every model at every step of the run's grid: the levels of its last change point
    select
        g.run_id,
        mc.gpu_model,
        g.time_s,
        g.step,
        g.next_time_s,
        mc.model_gpus,
        coalesce(l.held_gpus, 0) as held_gpus,
        coalesce(l.slack_gpus, 0) as slack_gpus,
        coalesce(l.barrier_gpus, 0) as barrier_gpus
    from grid_steps as g
    inner join model_capacity as mc using (run_id)
    asof left join model_levels as l
        on l.run_id = g.run_id and l.gpu_model = mc.gpu_model and l.time_s <= g.time_s
),

set_levels as (
    -- each waiting set's GPUs from each of its change points (all on the grid) to its next
    select
        l.run_id,
        l.cause,
        l.gpu_models,
        l.gpus_per_pod,
        l.min_pods,
        g.step,
        coalesce(lead(g.step) over (
            partition by l.run_id, l.cause, l.gpu_models, l.gpus_per_pod, l.min_pods order by l.time_s
        ), g.steps + 1) as next_step,
        l.gpus
    from (
        select
            run_id,
            cause,
            gpu_models,
            gpus_per_pod,
            min_pods,
            time_s,
            round(xsum(delta) over (
                partition by run_id, cause, gpu_models, gpus_per_pod, min_pods order by time_s
                rows between unbounded preceding and current row
            ), 9) as gpus
        from (
            select run_id, cause, gpu_models, gpus_per_pod, min_pods, time_s, xsum(delta) as delta
            from set_changes
            group by all
        )
    ) as l
    inner join grid_steps as g using (run_id, time_s)
),

set_members as (
    select run_id, gpu_models, unnest(string_split(gpu_models, '|')) as gpu_model
    from (select distinct run_id, gpu_models from set_changes)
),

level_members as (
    -- each waiting level (steps step to next_step − 1) on each model of its set
    select l.*, m.gpu_model
    from set_levels as l
    inner join set_members as m using (run_id, gpu_models)
    where l.gpus > 0
),

-- A set meets a model only at the steps where that model has GPUs left after the causes before
-- (the others add nothing). Each cause numbers those steps per model (ord) and takes, for each
-- waiting level, the numbers of the steps inside it: rows only where a level meets free GPUs,
-- never a row per waiting step.

after_barrier as (
    select
        *,
        greatest(model_gpus - held_gpus - slack_gpus, 0) as usable_gpus,
        least(greatest(model_gpus - held_gpus - slack_gpus, 0), greatest(barrier_gpus, 0)) as barrier_claim,
        greatest(model_gpus - held_gpus - slack_gpus, 0)
            - least(greatest(model_gpus - held_gpus - slack_gpus, 0), greatest(barrier_gpus, 0)) as free_1
    from model_steps
),

placement_free as (
    -- every step of a model; ord counts its steps up to this one with GPUs left
    select run_id, gpu_model, step, free_1 as free,
        cast(sum(cast(free_1 > 0 as integer)) over (
            partition by run_id, gpu_model order by step rows between unbounded preceding and current row
        ) as bigint) as ord
    from after_barrier as f
    -- only the models a waiting level of this cause is on
    where exists (select 1 from level_members as l where l.cause = 'placement' and l.run_id = f.run_id
        and l.gpu_model = f.gpu_model)
),

placement_steps as (
    select l.run_id, l.gpu_models, l.gpus, l.gpu_model, f.step, f.free
    from (
        select l.*, unnest(range(b.ord - cast(b.free > 0 as bigint) + 1, e.ord + 1)) as ord
        from level_members as l
        inner join placement_free as b on b.run_id = l.run_id and b.gpu_model = l.gpu_model and b.step = l.step
        inner join placement_free as e
            on e.run_id = l.run_id and e.gpu_model = l.gpu_model and e.step = l.next_step - 1
        where l.cause = 'placement'
    ) as l
    inner join placement_free as f using (run_id, gpu_model, ord)
    where f.free > 0
),

placement_sets as (
    select run_id, step, gpu_models, any_value(gpus) as gpus, xsum(free) as set_free
    from placement_steps
    group by run_id, step, gpu_models
),

placement_pull as (
    -- per model: Σ over the waiting sets it belongs to of their GPUs ÷ their free GPUs
    select q.run_id, q.step, m.gpu_model, xsum(q.gpus / q.set_free) as pull
    from placement_sets as q
    inner join set_members as m using (run_id, gpu_models)
    where q.set_free > 0
    group by all
),

after_placement as (
    select
        f.*,
        least(f.free_1, f.free_1 * coalesce(p.pull, 0)) as placement_claim,
        f.free_1 - least(f.free_1, f.free_1 * coalesce(p.pull, 0)) as free_2
    from after_barrier as f
    left join placement_pull as p using (run_id, gpu_model, step)
),

admitted_latency_free as (
    -- every step of a model; ord counts its steps up to this one with GPUs left
    select run_id, gpu_model, step, free_2 as free,
        cast(sum(cast(free_2 > 0 as integer)) over (
            partition by run_id, gpu_model order by step rows between unbounded preceding and current row
        ) as bigint) as ord
    from after_placement as f
    -- only the models a waiting level of this cause is on
    where exists (select 1 from level_members as l where l.cause = 'latency_admitted' and l.run_id = f.run_id
        and l.gpu_model = f.gpu_model)
),

admitted_latency_steps as (
    select l.run_id, l.gpu_models, l.gpus, l.gpu_model, f.step, f.free
    from (
        select l.*, unnest(range(b.ord - cast(b.free > 0 as bigint) + 1, e.ord + 1)) as ord
        from level_members as l
        inner join admitted_latency_free as b on b.run_id = l.run_id and b.gpu_model = l.gpu_model and b.step = l.step
        inner join admitted_latency_free as e
            on e.run_id = l.run_id and e.gpu_model = l.gpu_model and e.step = l.next_step - 1
        where l.cause = 'latency_admitted'
    ) as l
    inner join admitted_latency_free as f using (run_id, gpu_model, ord)
    where f.free > 0
),

admitted_latency_sets as (
    select run_id, step, gpu_models, any_value(gpus) as gpus, xsum(free) as set_free
    from admitted_latency_steps
    group by run_id, step, gpu_models
),

admitted_latency_pull as (
    select q.run_id, q.step, m.gpu_model, xsum(q.gpus / q.set_free) as pull
    from admitted_latency_sets as q
    inner join set_members as m using (run_id, gpu_models)
    where q.set_free > 0
    group by all
),

after_admitted_latency as (
    select
        f.*,
        least(f.free_2, f.free_2 * coalesce(p.pull, 0)) as admitted_latency_claim,
        f.free_2 - least(f.free_2, f.free_2 * coalesce(p.pull, 0)) as free_3
    from after_placement as f
    left join admitted_latency_pull as p using (run_id, gpu_model, step)
),

quota_free as (
    -- every step of a model; ord counts its steps up to this one with GPUs left
    select run_id, gpu_model, step, time_s, free_3 as free,
        cast(sum(cast(free_3 > 0 as integer)) over (
            partition by run_id, gpu_model order by step rows between unbounded preceding and current row
        ) as bigint) as ord
    from after_admitted_latency as f
    -- only the models a waiting level of this cause is on
    where exists (select 1 from level_members as l where l.cause = 'quota' and l.run_id = f.run_id
        and l.gpu_model = f.gpu_model)
),

quota_members as (
    -- each quota set on each model it accepts where GPUs are left: the GPUs left there, and the
    -- GPUs its pods fit (int_quota_fit: pods of its size on that model's nodes at this step)
    select
        s.run_id,
        s.step,
        s.gpu_models,
        s.gpus_per_pod,
        s.min_pods,
        s.gpus,
        s.gpu_model,
        s.free as free_3,
        coalesce(q.fit_pods, 0) as fit_pods
    from (
        select l.run_id, l.gpu_models, l.gpus_per_pod, l.min_pods, l.gpus, l.gpu_model, f.step, f.time_s, f.free
        from (
            select l.*, unnest(range(b.ord - cast(b.free > 0 as bigint) + 1, e.ord + 1)) as ord
            from level_members as l
            inner join quota_free as b on b.run_id = l.run_id and b.gpu_model = l.gpu_model and b.step = l.step
            inner join quota_free as e
                on e.run_id = l.run_id and e.gpu_model = l.gpu_model and e.step = l.next_step - 1
            where l.cause = 'quota'
        ) as l
        inner join quota_free as f using (run_id, gpu_model, ord)
        where f.free > 0
    ) as s
    -- the fit level in force at this step (every change of it is a point of the grid)
    asof left join quota_fit as q
        on q.run_id = s.run_id and q.gpu_model = s.gpu_model and q.gpus_per_pod = s.gpus_per_pod
        and q.start_s <= s.time_s
),

quota_sets as (
    -- a set claims on a model only if min_pods of its pods fit on that model's nodes (one
    -- flavor a workload, as Kueue assigns), and there at most the GPUs its pods fit (never
    -- more than the GPUs left there)
    select
        *,
        case when fit_pods >= min_pods then least(free_3, fit_pods * gpus_per_pod) else 0 end as available,
        xsum(case when fit_pods >= min_pods then least(free_3, fit_pods * gpus_per_pod) else 0 end)
            over (partition by run_id, step, gpu_models, gpus_per_pod, min_pods) as set_available
    from quota_members
),

quota_pull as (
    select run_id, step, gpu_model, xsum(available * least(1, gpus / set_available)) as claim
    from quota_sets
    where set_available > 0
    group by all
),

after_quota as (
    select
        f.*,
        least(f.free_3, coalesce(p.claim, 0)) as quota_claim,
        f.free_3 - least(f.free_3, coalesce(p.claim, 0)) as free_4
    from after_admitted_latency as f
    left join quota_pull as p using (run_id, gpu_model, step)
),

latency_free as (
    -- every step of a model; ord counts its steps up to this one with GPUs left
    select run_id, gpu_model, step, free_4 as free,
        cast(sum(cast(free_4 > 0 as integer)) over (
            partition by run_id, gpu_model order by step rows between unbounded preceding and current row
        ) as bigint) as ord
    from after_quota as f
    -- only the models a waiting level of this cause is on
    where exists (select 1 from level_members as l where l.cause = 'latency' and l.run_id = f.run_id
        and l.gpu_model = f.gpu_model)
),

latency_steps as (
    select l.run_id, l.gpu_models, l.gpus, l.gpu_model, f.step, f.free
    from (
        select l.*, unnest(range(b.ord - cast(b.free > 0 as bigint) + 1, e.ord + 1)) as ord
        from level_members as l
        inner join latency_free as b on b.run_id = l.run_id and b.gpu_model = l.gpu_model and b.step = l.step
        inner join latency_free as e
            on e.run_id = l.run_id and e.gpu_model = l.gpu_model and e.step = l.next_step - 1
        where l.cause = 'latency'
    ) as l
    inner join latency_free as f using (run_id, gpu_model, ord)
    where f.free > 0
),

latency_sets as (
    select run_id, step, gpu_models, any_value(gpus) as gpus, xsum(free) as set_free
    from latency_steps
    group by run_id, step, gpu_models
),

latency_pull as (
    select q.run_id, q.step, m.gpu_model, xsum(q.gpus / q.set_free) as pull
    from latency_sets as q
    inner join set_members as m using (run_id, gpu_models)
    where q.set_free > 0
    group by all
),

claimed as (
    select
        f.*,
        f.admitted_latency_claim + least(f.free_4, f.free_4 * coalesce(p.pull, 0)) as latency_claim,
        r.charge_period_s,
        r.horizon_s
    from after_quota as f
    inner join runs as r using (run_id)
    left join latency_pull as p using (run_id, gpu_model, step)
    where f.next_time_s is not null and f.time_s < r.horizon_s
),

model_causes as (
    select
        run_id,
        gpu_model,
        cast(floor(time_s / charge_period_s) as bigint) as period_index,
        xsum(barrier_claim * (next_time_s - time_s) / 3600.0) as gang_barrier_gpu_hours,
        xsum(quota_claim * (next_time_s - time_s) / 3600.0) as quota_gpu_hours,
        xsum(placement_claim * (next_time_s - time_s) / 3600.0) as fragmentation_gpu_hours,
        xsum(latency_claim * (next_time_s - time_s) / 3600.0) as latency_gpu_hours
    from claimed
    group by all
),

node_slack as (
    select run_id, node, period_index, xsum(slack_gpus * (end_s - start_s) / 3600.0) as slack_gpu_hours
    from slack
    group by all
),

node_idle as (
    select
        c.run_id, c.node, c.gpu_model, c.period_index, c.period_start_s, c.period_end_s,
        c.idle_gpu_hours,
        least(coalesce(ns.slack_gpu_hours, 0), c.idle_gpu_hours) as slack_gpu_hours
    from capacity as c
    left join node_slack as ns using (run_id, node, period_index)
),

model_rest as (
    select run_id, gpu_model, period_index, xsum(idle_gpu_hours - slack_gpu_hours) as model_rest_gpu_hours
    from node_idle
    group by all
),

node_shares as (
    select
        n.*,
        n.idle_gpu_hours - n.slack_gpu_hours as rest_gpu_hours,
        r.model_rest_gpu_hours,
        coalesce(m.gang_barrier_gpu_hours, 0) as model_gang_barrier,
        coalesce(m.quota_gpu_hours, 0) as model_quota,
        coalesce(m.fragmentation_gpu_hours, 0) as model_fragmentation,
        coalesce(m.latency_gpu_hours, 0) as model_latency
    from node_idle as n
    -- (CPU-only nodes have no model: their group is the null one)
    inner join model_rest as r on r.run_id = n.run_id and r.gpu_model is not distinct from n.gpu_model
        and r.period_index = n.period_index
    left join model_causes as m on m.run_id = n.run_id and m.gpu_model = n.gpu_model
        and m.period_index = n.period_index
),

split_barrier as (
    select
        *,
        case when model_rest_gpu_hours > 0 then rest_gpu_hours / model_rest_gpu_hours else 0 end as share,
        least(rest_gpu_hours, model_gang_barrier * (
            case when model_rest_gpu_hours > 0 then rest_gpu_hours / model_rest_gpu_hours else 0 end
        )) as gang_barrier_gpu_hours
    from node_shares
),

split_placement as (
    -- the node-level split keeps the model-level order of the causes
    select
        *,
        least(rest_gpu_hours - gang_barrier_gpu_hours, model_fragmentation * share) as placement_gpu_hours
    from split_barrier
),

split_latency as (
    select
        *,
        least(rest_gpu_hours - gang_barrier_gpu_hours - placement_gpu_hours, model_latency * share)
            as latency_gpu_hours
    from split_placement
),

split_all as (
    select
        *,
        least(
            rest_gpu_hours - gang_barrier_gpu_hours - placement_gpu_hours - latency_gpu_hours,
            model_quota * share
        ) as quota_gpu_hours
    from split_latency
),

by_cause as (
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'gang_barrier' as idle_reason, gang_barrier_gpu_hours as gpu_hours
    from split_all
    union all
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'quota', quota_gpu_hours
    from split_all
    union all
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'fragmentation', placement_gpu_hours
    from split_all
    union all
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'scheduling_latency', latency_gpu_hours
    from split_all
    union all
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'shared_device_slack', slack_gpu_hours
    from split_all
    union all
    -- the remainder, so that held + every cause = capacity for every node and period
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'no_demand',
        greatest(rest_gpu_hours - gang_barrier_gpu_hours - quota_gpu_hours - placement_gpu_hours
            - latency_gpu_hours, 0)
    from split_all
),

final as (
    -- most node-periods have one or two causes: zero rows would be most of the table
    select * from by_cause
    where gpu_hours > 0
)

select * from final

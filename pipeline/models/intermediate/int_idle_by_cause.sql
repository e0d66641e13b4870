-- grain: one row per run × node × charge period × idle reason (fragmentation, no_demand)
-- fragmentation per GPU model and period = ∫ min(free GPUs, pending demand) dt, integrated
-- exactly between the cluster-level change points, then spread over that model's nodes in
-- proportion to each node's idle GPU-hours in the period
with capacity as (
    select * from int_node_capacity_periods
),

intervals as (
    select * from int_pod_intervals
),

demand as (
    select * from int_pending_demand
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
    group by all
),

changes as (
    select i.run_id, n.gpu_model, i.start_s as time_s, i.gpus as held_delta, 0.0 as demand_delta
    from intervals as i
    inner join nodes as n using (run_id, node)
    union all
    select i.run_id, n.gpu_model, i.end_s, -i.gpus, 0.0
    from intervals as i
    inner join nodes as n using (run_id, node)
    union all
    select run_id, gpu_model, start_s, 0.0, demand_gpus from demand
    union all
    select run_id, gpu_model, end_s, 0.0, -demand_gpus from demand
    union all
    -- period boundaries (and the horizon) are change points, so no step spans two periods
    select r.run_id, mc.gpu_model, unnest(list_append(
        list_transform(
            range(0, cast(ceil(r.horizon_s / r.charge_period_s) as bigint)),
            lambda k: k * r.charge_period_s
        ),
        r.horizon_s
    )), 0.0, 0.0
    from runs as r
    inner join model_capacity as mc using (run_id)
),

change_points as (
    select run_id, gpu_model, time_s, sum(held_delta) as held_delta, sum(demand_delta) as demand_delta
    from changes
    group by all
),

steps as (
    select
        cp.run_id,
        cp.gpu_model,
        cp.time_s,
        lead(cp.time_s) over (partition by cp.run_id, cp.gpu_model order by cp.time_s) as next_time_s,
        sum(cp.held_delta) over w as held_gpus,
        sum(cp.demand_delta) over w as pending_gpus
    from change_points as cp
    window w as (partition by cp.run_id, cp.gpu_model order by cp.time_s
        rows between unbounded preceding and current row)
),

model_fragmentation as (
    select
        s.run_id,
        s.gpu_model,
        cast(floor(s.time_s / r.charge_period_s) as bigint) as period_index,
        sum(
            greatest(least(mc.model_gpus - s.held_gpus, s.pending_gpus), 0)
            * (s.next_time_s - s.time_s) / 3600.0
        ) as fragmentation_gpu_hours
    from steps as s
    inner join runs as r using (run_id)
    inner join model_capacity as mc using (run_id, gpu_model)
    where s.next_time_s is not null and s.time_s < r.horizon_s
    group by all
),

node_shares as (
    select
        c.*,
        sum(c.idle_gpu_hours) over (partition by c.run_id, c.gpu_model, c.period_index)
            as model_idle_gpu_hours,
        coalesce(f.fragmentation_gpu_hours, 0) as model_fragmentation_gpu_hours
    from capacity as c
    left join model_fragmentation as f using (run_id, gpu_model, period_index)
),

split as (
    select
        *,
        case
            when model_idle_gpu_hours > 0
                then least(
                    idle_gpu_hours,
                    model_fragmentation_gpu_hours * idle_gpu_hours / model_idle_gpu_hours
                )
            else 0
        end as fragmentation_gpu_hours
    from node_shares
),

final as (
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'fragmentation' as idle_reason, fragmentation_gpu_hours as gpu_hours
    from split
    union all
    -- the remainder, so that held + fragmentation + no_demand = capacity for every node
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'no_demand', idle_gpu_hours - fragmentation_gpu_hours
    from split
)

select * from final

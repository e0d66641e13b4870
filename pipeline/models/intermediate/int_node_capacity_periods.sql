-- grain: one row per run × node × charge period (capacity, held and idle GPU-hours)
with nodes as (
    select * from stg_nodes
),

runs as (
    select * from stg_runs
),

usage as (
    select * from int_hourly_usage
),

periods as (
    select
        run_id,
        unnest(range(0, cast(ceil(horizon_s / charge_period_s) as bigint))) as period_index,
        charge_period_s,
        horizon_s
    from runs
),

node_periods as (
    select
        n.run_id,
        n.node,
        n.gpu_model,
        n.gpus,
        p.period_index,
        p.period_index * p.charge_period_s as period_start_s,
        -- a horizon that is not a whole number of periods leaves a shorter last period
        least((p.period_index + 1) * p.charge_period_s, p.horizon_s) as period_end_s
    from nodes as n
    inner join periods as p using (run_id)
),

held as (
    select run_id, node, period_index, sum(gpu_hours) as held_gpu_hours
    from usage
    group by all
),

final as (
    select
        np.run_id,
        np.node,
        np.gpu_model,
        np.gpus,
        np.period_index,
        np.period_start_s,
        np.period_end_s,
        np.gpus * (np.period_end_s - np.period_start_s) / 3600.0 as capacity_gpu_hours,
        coalesce(h.held_gpu_hours, 0) as held_gpu_hours,
        -- over-allocation (a broken log) is flagged by an audit, never turned into negative idle
        greatest(
            np.gpus * (np.period_end_s - np.period_start_s) / 3600.0 - coalesce(h.held_gpu_hours, 0),
            0
        ) as idle_gpu_hours
    from node_periods as np
    left join held as h using (run_id, node, period_index)
)

select * from final

-- grain: one row per run × node × charge period (capacity, held and idle GPU-hours, core-hours, GiB-hours)
with nodes as (
    select * from stg_nodes
),

runs as not materialized (
    select * from stg_runs
),

usage as not materialized (
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
        n.cpu_cores,
        n.memory_gib,
        p.period_index,
        p.period_index * p.charge_period_s as period_start_s,
        -- a horizon that is not a whole number of periods leaves a shorter last period
        least((p.period_index + 1) * p.charge_period_s, p.horizon_s) as period_end_s
    from nodes as n
    inner join periods as p using (run_id)
),

held as (
    select
        run_id,
        node,
        period_index,
        xsum(gpu_hours) as held_gpu_hours,
        xsum(cpu_core_hours) as held_cpu_core_hours,
        xsum(memory_gib_hours) as held_memory_gib_hours
    from usage
    group by all
),

capacity as (
    select
        np.*,
        (np.period_end_s - np.period_start_s) / 3600.0 as period_hours,
        coalesce(h.held_gpu_hours, 0) as held_gpu_hours,
        coalesce(h.held_cpu_core_hours, 0) as held_cpu_core_hours,
        coalesce(h.held_memory_gib_hours, 0) as held_memory_gib_hours
    from node_periods as np
    left join held as h using (run_id, node, period_index)
),

final as (
    select
        run_id,
        node,
        gpu_model,
        gpus,
        period_index,
        period_start_s,
        period_end_s,
        gpus * period_hours as capacity_gpu_hours,
        held_gpu_hours,
        -- over-allocation (a broken log) is flagged by an audit, never turned into negative idle
        greatest(gpus * period_hours - held_gpu_hours, 0) as idle_gpu_hours,
        cpu_cores * period_hours as capacity_cpu_core_hours,
        held_cpu_core_hours,
        greatest(cpu_cores * period_hours - held_cpu_core_hours, 0) as idle_cpu_core_hours,
        memory_gib * period_hours as capacity_memory_gib_hours,
        held_memory_gib_hours,
        greatest(memory_gib * period_hours - held_memory_gib_hours, 0) as idle_memory_gib_hours
    from capacity
)

select * from final

-- grain: one row per run × charge period × pod interval segment (segments split at period boundaries)
with intervals as (
    select * from int_pod_intervals
),

runs as (
    select * from stg_runs
),

workloads as (
    select * from stg_workloads
),

exploded as (
    select
        i.*,
        w.cpu_cores_per_pod as cpu_cores,
        w.memory_gib_per_pod as memory_gib,
        r.charge_period_s,
        r.horizon_s,
        unnest(range(
            cast(floor(i.start_s / r.charge_period_s) as bigint),
            cast(ceil(i.end_s / r.charge_period_s) as bigint)
        )) as period_index
    from intervals as i
    inner join runs as r using (run_id)
    inner join workloads as w using (run_id, workload_id)
),

clipped as (
    select
        *,
        period_index * charge_period_s as period_start_s,
        least((period_index + 1) * charge_period_s, horizon_s) as period_end_s,
        least(end_s, (period_index + 1) * charge_period_s)
            - greatest(start_s, period_index * charge_period_s) as held_s
    from exploded
),

final as (
    select
        run_id,
        period_index,
        period_start_s,
        period_end_s,
        node,
        workload_id,
        pod_index,
        holding_no,
        usage_class,
        borrowed,
        gpus,
        cpu_cores,
        memory_gib,
        held_s,
        gpus * held_s / 3600.0 as gpu_hours,
        cpu_cores * held_s / 3600.0 as cpu_core_hours,
        memory_gib * held_s / 3600.0 as memory_gib_hours
    from clipped
    where held_s > 0
)

select * from final

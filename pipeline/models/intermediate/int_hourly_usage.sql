-- grain: one row per run × charge period × pod interval segment (segments split at period boundaries)
with intervals as (
    select * from int_pod_intervals
),

runs as (
    select * from stg_runs
),

exploded as (
    select
        i.*,
        r.charge_period_s,
        r.horizon_s,
        unnest(range(
            cast(floor(i.start_s / r.charge_period_s) as bigint),
            cast(ceil(i.end_s / r.charge_period_s) as bigint)
        )) as period_index
    from intervals as i
    inner join runs as r using (run_id)
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
        gpus,
        held_s,
        gpus * held_s / 3600.0 as gpu_hours
    from clipped
    where held_s > 0
)

select * from final

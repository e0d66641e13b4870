-- grain: one row per run × ClusterQueue × GPU flavor × charge period (Kueue quota use, for the Queues page)
-- admitted_gpus: time-weighted mean of the GPUs the queue's admitted workloads hold as quota;
-- borrowed_gpus: time-weighted mean of max(admitted − nominal quota, 0), Kueue's own notion of
-- borrowing (null without a quota); borrowing_admitted_gpus: of admissions Kueue flagged
-- `Borrowing`; unused_nominal_gpu_hours: ∫ max(nominal − admitted, 0). Quotas come from
-- cluster_queues.parquet; the integrals from int_queue_usage.
with queue_usage as (
    select * from int_queue_usage
),

runs as not materialized (
    select * from stg_runs
),

bounded as (
    select
        u.*,
        r.start_ts,
        u.period_index * r.charge_period_s as period_start_s,
        least((u.period_index + 1) * r.charge_period_s, r.horizon_s) as period_end_s
    from queue_usage as u
    inner join runs as r using (run_id)
),

final as (
    select
        run_id,
        cluster_queue,
        cohort,
        flavor,
        ts_at(start_ts, period_start_s) as charge_period_start,
        admitted_gpu_hours * 3600.0 / (period_end_s - period_start_s) as admitted_gpus,
        nominal_quota,
        borrowing_limit,
        borrowed_gpu_hours * 3600.0 / (period_end_s - period_start_s) as borrowed_gpus,
        ts_at(start_ts, period_end_s) as charge_period_end,
        lending_limit,
        borrowing_admitted_gpu_hours * 3600.0 / (period_end_s - period_start_s)
            as borrowing_admitted_gpus,
        admitted_gpu_hours,
        borrowed_gpu_hours,
        admissions,
        unused_nominal_gpu_hours
    from bounded
    order by run_id, cluster_queue, flavor, charge_period_start
)

select * from final

-- grain: one row per run × ClusterQueue × GPU flavor × charge period (Kueue quota use, for the Queues page)
-- admitted_gpus: time-weighted mean of the GPUs the queue's admitted workloads hold as quota;
-- borrowed_gpus: time-weighted mean of max(admitted − nominal quota, 0), Kueue's own notion of
-- borrowing (null without a quota); borrowing_admitted_gpus: of admissions Kueue flagged
-- `Borrowing` (their records carry x_Borrowed). Quotas come from cluster_queues.parquet.
with admissions as (
    select * from int_admissions
    where cluster_queue is not null
),

queues as (
    select * from stg_cluster_queues
    where is_gpu
),

runs as (
    select * from stg_runs
),

quotas as (
    select
        run_id,
        cluster_queue,
        flavor,
        any_value(cohort) as cohort,
        sum(nominal_quota) as nominal_quota,
        sum(borrowing_limit) as borrowing_limit,
        sum(lending_limit) as lending_limit
    from queues
    group by all
),

queue_flavors as (
    select run_id, cluster_queue, flavor from quotas
    union
    select run_id, cluster_queue, flavor from admissions
),

changes as (
    select run_id, cluster_queue, flavor, start_s as time_s, gpus as admitted_delta,
        case when borrowed then gpus else 0.0 end as borrowing_delta, 1 as admissions
    from admissions
    union all
    select run_id, cluster_queue, flavor, end_s, -gpus, case when borrowed then -gpus else 0.0 end, 0
    from admissions
    union all
    -- period boundaries are change points, so no step spans two periods
    select q.run_id, q.cluster_queue, q.flavor, unnest(list_append(
        list_transform(
            range(0, cast(ceil(r.horizon_s / r.charge_period_s) as bigint)),
            lambda k: k * r.charge_period_s
        ),
        r.horizon_s
    )), 0.0, 0.0, 0
    from queue_flavors as q
    inner join runs as r using (run_id)
),

change_points as (
    select run_id, cluster_queue, flavor, time_s, sum(admitted_delta) as admitted_delta,
        sum(borrowing_delta) as borrowing_delta, sum(admissions) as admissions
    from changes
    group by all
),

steps as (
    select
        *,
        lead(time_s) over w as next_time_s,
        round(sum(admitted_delta) over (w rows between unbounded preceding and current row), 9)
            as admitted_gpus,
        round(sum(borrowing_delta) over (w rows between unbounded preceding and current row), 9)
            as borrowing_gpus
    from change_points
    window w as (partition by run_id, cluster_queue, flavor order by time_s)
),

periods as (
    select
        s.run_id,
        s.cluster_queue,
        s.flavor,
        cast(floor(s.time_s / r.charge_period_s) as bigint) as period_index,
        sum(s.admitted_gpus * (s.next_time_s - s.time_s)) / 3600.0 as admitted_gpu_hours,
        -- no quota known (no cluster_queues.parquet): borrowing cannot be told, null
        sum(case when q.nominal_quota is not null
            then greatest(s.admitted_gpus - q.nominal_quota, 0) * (s.next_time_s - s.time_s) end)
            / 3600.0 as borrowed_gpu_hours,
        sum(s.borrowing_gpus * (s.next_time_s - s.time_s)) / 3600.0 as borrowing_admitted_gpu_hours,
        sum(s.admissions) as admissions
    from steps as s
    inner join runs as r using (run_id)
    left join quotas as q using (run_id, cluster_queue, flavor)
    where s.next_time_s is not null and s.time_s < r.horizon_s
    group by all
),

bounded as (
    select
        p.*,
        q.cohort,
        q.nominal_quota,
        q.borrowing_limit,
        q.lending_limit,
        r.start_ts,
        p.period_index * r.charge_period_s as period_start_s,
        least((p.period_index + 1) * r.charge_period_s, r.horizon_s) as period_end_s
    from periods as p
    inner join runs as r using (run_id)
    left join quotas as q using (run_id, cluster_queue, flavor)
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
        admissions
    from bounded
    order by run_id, cluster_queue, flavor, charge_period_start
)

select * from final

-- grain: one row per run × ClusterQueue × GPU flavor × charge period (GPU-hours of quota admitted, above and below nominal)
-- integrated exactly between the change points of the queue's admissions (int_admissions):
-- admitted_gpu_hours of quota held; borrowed_gpu_hours = ∫ max(admitted − nominal quota, 0),
-- Kueue's own measure of borrowing (null when no quota is known); unused_nominal_gpu_hours =
-- ∫ max(nominal quota − admitted, 0), the quota the queue owned and left to others;
-- borrowing_admitted_gpu_hours of admissions Kueue flagged `Borrowing`
with admissions as (
    select * from int_admissions
    where cluster_queue is not null
),

queues as (
    select * from stg_cluster_queues
    where is_gpu
),

runs as not materialized (
    select * from stg_runs
),

quotas as (
    select
        run_id,
        cluster_queue,
        flavor,
        any_value(cohort) as cohort,
        xsum(nominal_quota) as nominal_quota,
        xsum(borrowing_limit) as borrowing_limit,
        xsum(lending_limit) as lending_limit
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
    select run_id, cluster_queue, flavor, time_s, xsum(admitted_delta) as admitted_delta,
        xsum(borrowing_delta) as borrowing_delta, sum(admissions) as admissions
    from changes
    group by all
),

steps as (
    select
        *,
        lead(time_s) over w as next_time_s,
        round(xsum(admitted_delta) over (w rows between unbounded preceding and current row), 9)
            as admitted_gpus,
        round(xsum(borrowing_delta) over (w rows between unbounded preceding and current row), 9)
            as borrowing_gpus
    from change_points
    window w as (partition by run_id, cluster_queue, flavor order by time_s)
),

final as (
    select
        s.run_id,
        s.cluster_queue,
        s.flavor,
        cast(floor(s.time_s / r.charge_period_s) as bigint) as period_index,
        any_value(q.cohort) as cohort,
        any_value(q.nominal_quota) as nominal_quota,
        any_value(q.borrowing_limit) as borrowing_limit,
        any_value(q.lending_limit) as lending_limit,
        xsum(s.admitted_gpus * (s.next_time_s - s.time_s)) / 3600.0 as admitted_gpu_hours,
        -- no quota known (no cluster_queues.parquet): borrowing cannot be told, null
        xsum(case when q.nominal_quota is not null
            then greatest(s.admitted_gpus - q.nominal_quota, 0) * (s.next_time_s - s.time_s) end)
            / 3600.0 as borrowed_gpu_hours,
        xsum(case when q.nominal_quota is not null
            then greatest(q.nominal_quota - s.admitted_gpus, 0) * (s.next_time_s - s.time_s) end)
            / 3600.0 as unused_nominal_gpu_hours,
        xsum(s.borrowing_gpus * (s.next_time_s - s.time_s)) / 3600.0 as borrowing_admitted_gpu_hours,
        sum(s.admissions) as admissions
    from steps as s
    inner join runs as r using (run_id)
    left join quotas as q using (run_id, cluster_queue, flavor)
    where s.next_time_s is not null and s.time_s < r.horizon_s
    group by s.run_id, s.cluster_queue, s.flavor, cast(floor(s.time_s / r.charge_period_s) as bigint)
)

select * from final

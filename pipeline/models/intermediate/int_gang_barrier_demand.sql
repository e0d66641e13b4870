-- grain: one row per run × workload × attempt × step while the gang is partially placed × GPU model the workload accepts
-- a gang holding 0 < n < min_count pods (reserved at the barrier, or started one by one)
-- waits for its missing pods: (min_count − n) × gpus_per_pod GPUs, until its progress starts
with holdings as (
    select * from int_pod_holdings
),

gang as (
    select * from int_gang_progress
),

workloads as (
    select * from stg_workloads
),

accepted_models as (
    select * from int_workload_gpu_models
),

deltas as (
    select run_id, workload_id, attempt, hold_start_s as time_s, 1 as delta from holdings
    union all
    select run_id, workload_id, attempt, end_s, -1 from holdings
),

change_points as (
    select run_id, workload_id, attempt, time_s, sum(delta) as delta
    from deltas
    group by all
),

steps as (
    select
        run_id,
        workload_id,
        attempt,
        time_s,
        lead(time_s) over w as next_time_s,
        sum(delta) over (w rows between unbounded preceding and current row) as pods_holding
    from change_points
    window w as (partition by run_id, workload_id, attempt order by time_s)
),

partial as (
    select
        s.run_id,
        s.workload_id,
        s.attempt,
        s.time_s as start_s,
        least(s.next_time_s, coalesce(g.progress_start_s, s.next_time_s)) as end_s,
        (w.min_count - s.pods_holding) * w.gpus_per_pod as missing_gpus
    from steps as s
    inner join workloads as w using (run_id, workload_id)
    left join gang as g using (run_id, workload_id, attempt)
    where s.next_time_s is not null
        and s.pods_holding > 0
        and s.pods_holding < w.min_count
),

final as (
    select p.run_id, p.workload_id, p.attempt, am.gpu_model, p.start_s, p.end_s, p.missing_gpus
    from partial as p
    inner join accepted_models as am using (run_id, workload_id)
    where p.end_s > p.start_s
)

select * from final

-- grain: one row per run × workload × attempt that started at least one pod
-- progress_start_s = first moment the group has min_count pods running in this attempt
with holdings as (
    select * from int_pod_holdings
),

workloads as not materialized (
    select * from stg_workloads
),

run_deltas as (
    select run_id, workload_id, attempt, started_s as time_s, started_seq as seq, 1 as delta
    from holdings
    where started_s is not null
    union all
    select
        run_id, workload_id, attempt, end_s as time_s,
        -- releases cut at the horizon sort after every real row at that time
        coalesce(released_seq, 9223372036854775807) as seq, -1 as delta
    from holdings
    where started_s is not null
),

running as (
    select
        d.*,
        w.min_count,
        sum(d.delta) over (
            partition by d.run_id, d.workload_id, d.attempt order by d.time_s, d.seq
            rows between unbounded preceding and current row
        ) as pods_running
    from run_deltas as d
    inner join workloads as w using (run_id, workload_id)
),

final as (
    select
        run_id,
        workload_id,
        attempt,
        any_value(min_count) as min_count,
        min(time_s) filter (where delta = 1) as first_start_s,
        min(time_s) filter (where delta = 1 and pods_running >= min_count) as progress_start_s,
        max(pods_running) as max_pods_running
    from running
    group by run_id, workload_id, attempt
)

select * from final

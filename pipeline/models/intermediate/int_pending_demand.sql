-- grain: one row per run × workload × stretch of a queue wait with one blocking reason × GPU model the workload accepts
-- a workload waits from `submitted` or `requeued` until its next reserved/started/rejected row;
-- the wait is cut at every `pending` and `admitted` row: while the latest of them is a pending
-- row with a Kueue admission reason the demand is blocked by `quota`, otherwise by `placement`
with events as (
    select * from stg_events
),

workloads as (
    select * from stg_workloads
),

accepted_models as (
    select * from int_workload_gpu_models
),

runs as (
    select * from stg_runs
),

rows_of_interest as (
    select
        run_id,
        workload_id,
        seq,
        time_s,
        event,
        case
            when event in ('submitted', 'requeued') then 'wait'
            when event in ('reserved', 'started', 'rejected') then 'stop'
        end as boundary,
        case
            when event = 'pending' and reason in ('WaitingForQuota', 'ExceedsMaxQuota', 'NoMatchingFlavor')
                then 'quota'
            else 'placement'
        end as blocked_by
    from events
    where event in ('submitted', 'requeued', 'pending', 'admitted', 'reserved', 'started', 'rejected')
),

marked as (
    select
        *,
        last_value(boundary ignore nulls) over (
            partition by run_id, workload_id order by seq
            rows between unbounded preceding and current row
        ) as state,
        lead(time_s) over (partition by run_id, workload_id order by seq) as next_time_s
    from rows_of_interest
),

stretches as (
    -- each row of a wait starts a stretch that lasts until the workload's next row of interest
    select m.run_id, m.workload_id, m.blocked_by, m.time_s as start_s,
        least(coalesce(m.next_time_s, r.horizon_s), r.horizon_s) as end_s
    from marked as m
    inner join runs as r using (run_id)
    where m.state = 'wait' and m.boundary is distinct from 'stop'
),

final as (
    select
        s.run_id,
        s.workload_id,
        am.gpu_model,
        s.blocked_by,
        s.start_s,
        s.end_s,
        w.pods * w.gpus_per_pod as demand_gpus
    from stretches as s
    inner join workloads as w using (run_id, workload_id)
    inner join accepted_models as am using (run_id, workload_id)
    where s.end_s > s.start_s
)

select * from final

-- grain: one row per run × event of one workload
with events as (
    select * from stg_events
),

runs as not materialized (
    select * from stg_runs
),

final as (
    select
        e.run_id,
        e.workload_id,
        e.seq,
        ts_at(r.start_ts, e.time_s) as ts,
        e.time_s,
        e.event,
        e.pod_index,
        e.node,
        e.gpus,
        e.reason,
        e.message,
        e.preemptor,
        e.queue_position,
        e.queue_length
    from events as e
    inner join runs as r using (run_id)
    -- seq is unique within a run: a total order, the same on any number of threads
    order by e.run_id, e.workload_id, e.seq
)

select * from final

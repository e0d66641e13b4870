-- grain: one row per run × pod × holding (from its reserved/started row to its release or the horizon)
-- preemptor: the workload a `preempted` release made room for (null for other ends)
with events as (
    select * from stg_events
),

runs as not materialized (
    select * from stg_runs
),

pod_events as (
    select
        *,
        -- attempt = requeues strictly before this row: the release rows that precede a
        -- requeue belong to the attempt they end
        coalesce(count(*) filter (where event = 'requeued') over (
            partition by run_id, workload_id order by seq
            rows between unbounded preceding and 1 preceding
        ), 0) as attempt
    from events
),

holding_rows as (
    select
        *,
        -- a holding ends with finished/preempted/timed_out; count the releases before this row
        coalesce(count(*) filter (where event in ('finished', 'preempted', 'timed_out')) over (
            partition by run_id, workload_id, pod_index order by seq
            rows between unbounded preceding and 1 preceding
        ), 0) as holding_no
    from pod_events
    where pod_index is not null
        and event in ('reserved', 'started', 'finished', 'preempted', 'timed_out')
),

holdings as (
    select
        run_id,
        workload_id,
        pod_index,
        holding_no,
        arg_min(attempt, seq) as attempt,
        arg_min(node, seq) filter (where event in ('reserved', 'started')) as node,
        arg_min(gpus, seq) filter (where event in ('reserved', 'started')) as gpus,
        min(time_s) filter (where event = 'reserved') as reserved_s,
        min(time_s) filter (where event = 'started') as started_s,
        min(seq) filter (where event = 'started') as started_seq,
        min(time_s) filter (where event in ('finished', 'preempted', 'timed_out')) as released_s,
        min(seq) filter (where event in ('finished', 'preempted', 'timed_out')) as released_seq,
        arg_min(event, seq) filter (where event in ('finished', 'preempted', 'timed_out')) as end_event,
        -- the workload a preemption made room for (schema 1.2's preemptor column)
        arg_min(preemptor, seq) filter (where event in ('finished', 'preempted', 'timed_out')) as preemptor
    from holding_rows
    group by all
    having count(*) filter (where event in ('reserved', 'started')) > 0
),

final as (
    select
        h.run_id,
        h.workload_id,
        h.pod_index,
        h.holding_no,
        h.attempt,
        h.node,
        h.gpus,
        least(coalesce(h.reserved_s, h.started_s), r.horizon_s) as hold_start_s,
        h.reserved_s,
        -- least() skips nulls: a pod that never started must keep a null start
        case when h.started_s is not null then least(h.started_s, r.horizon_s) end as started_s,
        h.started_seq,
        -- pods still holding at the horizon are cut there
        least(coalesce(h.released_s, r.horizon_s), r.horizon_s) as end_s,
        h.released_seq,
        h.end_event,
        h.preemptor,
        h.released_s is null as open_at_horizon
    from holdings as h
    inner join runs as r using (run_id)
)

select * from final

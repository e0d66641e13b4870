-- grain: one row per run × workload × stretch of a queue wait with one blocking cause (workloads that can run only)
-- a workload waits from `submitted` or `requeued` until its next reserved/started/rejected row;
-- the wait is cut at every `pending` and `admitted` row, and the latest of them says what
-- holds it (`blocked_by`):
--   quota     a Kueue `pending` row saying the quota is in use (WaitingForQuota) or admission
--             is held back (WaitingForPodsReady), or any failure code before Kueue admitted it;
--   placement a placement attempt of an admitted workload (or of one in a run without Kueue)
--             failed (Unschedulable, GangNotSatisfiable, TopologyUnsatisfiable, any other code);
--   latency   not tried yet: no attempt since it (re)entered the queue, admitted and not yet
--             placed, queued for evaluation (PendingEvaluation), in a requeue backoff
--             (PodsReadyTimeout), or waiting for preempted workloads to drain
--             (WaitingForPreemptedWorkloads).
-- admitted: Kueue admitted the attempt before this stretch (an `admitted` row since its last
-- `submitted`/`requeued`): its quota is reserved, so free GPUs it waits beside are its own
-- wait, not quota's (docs/cost-model.md §3.1). In a run Kueue admits (it has `admitted`
-- rows), a wait Kueue has not admitted has no pods and no placement attempt: a failure code
-- there (NoMatchingFlavor: no flavor had quota for it) is a quota wait, never placement.
-- Workloads that can never run (int_unservable_workloads) are left out. gpu_models lists the
-- GPU models it accepts, 'A|B' sorted: its demand counts once across them; gpus_per_pod and
-- min_pods are its minimum shape (the fit test of a quota wait).
with events as (
    select * from stg_events
),

workloads as not materialized (
    select * from stg_workloads
),

accepted_models as not materialized (
    select * from int_workload_gpu_models
),

unservable as not materialized (
    select * from int_unservable_workloads
),

runs as not materialized (
    select * from stg_runs
),

model_sets as (
    select run_id, workload_id, string_agg(gpu_model, '|' order by gpu_model) as gpu_models
    from accepted_models
    group by all
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
            when event <> 'pending' then 'latency'
            when reason in ('WaitingForQuota', 'WaitingForPodsReady') then 'quota'
            when reason in ('PendingEvaluation', 'PodsReadyTimeout', 'WaitingForPreemptedWorkloads')
                then 'latency'
            else 'placement'
        end as blocked_by,
        case
            when event in ('submitted', 'requeued') then false
            when event = 'admitted' then true
        end as admission_mark
    from events
    where event in ('submitted', 'requeued', 'pending', 'admitted', 'reserved', 'started', 'rejected')
),

kueue_runs as (
    select distinct run_id from events where event = 'admitted'
),

marked as (
    select
        *,
        last_value(boundary ignore nulls) over (
            partition by run_id, workload_id order by seq
            rows between unbounded preceding and current row
        ) as state,
        coalesce(last_value(admission_mark ignore nulls) over (
            partition by run_id, workload_id order by seq
            rows between unbounded preceding and current row
        ), false) as admitted,
        lead(time_s) over (partition by run_id, workload_id order by seq) as next_time_s
    from rows_of_interest
),

stretches as (
    -- each row of a wait starts a stretch that lasts until the workload's next row of interest
    select
        m.run_id,
        m.workload_id,
        case
            when m.blocked_by = 'placement' and not m.admitted and k.run_id is not null then 'quota'
            else m.blocked_by
        end as blocked_by,
        m.admitted,
        m.time_s as start_s,
        least(coalesce(m.next_time_s, r.horizon_s), r.horizon_s) as end_s
    from marked as m
    inner join runs as r using (run_id)
    left join kueue_runs as k using (run_id)
    where m.state = 'wait' and m.boundary is distinct from 'stop'
),

final as (
    select
        s.run_id,
        s.workload_id,
        w.tenant,
        ms.gpu_models,
        s.blocked_by,
        s.admitted,
        s.start_s,
        s.end_s,
        w.pods * w.gpus_per_pod as demand_gpus,
        w.gpus_per_pod,
        least(coalesce(w.min_count, w.pods), w.pods) as min_pods
    from stretches as s
    inner join workloads as w using (run_id, workload_id)
    inner join model_sets as ms using (run_id, workload_id)
    where s.end_s > s.start_s
        and not exists (
            select 1 from unservable as u where u.run_id = s.run_id and u.workload_id = s.workload_id
        )
)

select * from final

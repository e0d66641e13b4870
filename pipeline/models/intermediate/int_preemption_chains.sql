-- grain: one row per run × preempted pod event (a pod's `preempted` row of the event log)
-- The chain rule (docs/cost-model.md, "Preemption cascades"): a preemption whose preemptor was
-- itself preempted earlier in the run (a `preempted` row of one of its pods, by seq) and has not
-- finished since (no `finished` row of one of its pods after it) joins the chain of the
-- preemptor's latest such row, one level deeper; otherwise it starts a chain, depth 1. The
-- preemptions a preemptor starts between two finishes (or before its first) are one chain,
-- named by the seq of its first preempted pod event. The event log names the preemptor as a
-- workload, not a pod, so the rule reads the preemptor's rows as a workload. A preemption whose
-- preemptor the log does not name (schema 1.1) starts a chain of its own, with no origin.
-- parent_seq: the preempted pod event of the preemptor this one follows (null on depth 1)
with recursive events as (
    select * from stg_events
),

preempted as (
    select run_id, seq, time_s, workload_id as victim_workload_id, pod_index as victim_pod_index,
        preemptor as preemptor_workload_id
    from events
    where event = 'preempted' and pod_index is not null
),

-- the rows that end or renew a workload's recovery: one of its pods preempted, or finished
recovery_marks as (
    select run_id, workload_id, seq as mark_seq, event as mark_event
    from events
    where event in ('preempted', 'finished') and pod_index is not null
),

linked as (
    -- the preemptor's latest mark before this row: preempted = still recovering from it
    select p.*, m.mark_seq, m.mark_event
    from preempted as p
    asof left join recovery_marks as m
        on m.run_id = p.run_id and m.workload_id = p.preemptor_workload_id and p.seq > m.mark_seq
),

links as (
    select
        run_id, seq, time_s, victim_workload_id, victim_pod_index, preemptor_workload_id,
        case when mark_event = 'preempted' then mark_seq end as parent_seq,
        -- chain starters: the preemptor's preemptions since its last finish (or the run start);
        -- a preemption whose preemptor the log does not name (schema 1.1) is a chain of its own
        case when mark_event is distinct from 'preempted'
            then min(seq) over (
                partition by run_id, preemptor_workload_id, mark_event is distinct from 'preempted', mark_seq,
                    case when preemptor_workload_id is null then seq end)
        end as started_chain_id
    from linked
),

walk(run_id, seq, chain_id, depth, root_workload_id) as (
    select run_id, seq, started_chain_id, 1, preemptor_workload_id
    from links
    where parent_seq is null
    union all
    select l.run_id, l.seq, w.chain_id, w.depth + 1, w.root_workload_id
    from links as l
    inner join walk as w on w.run_id = l.run_id and w.seq = l.parent_seq
),

final as (
    select
        l.run_id,
        l.seq,
        l.time_s,
        w.chain_id,
        w.depth,
        l.parent_seq,
        l.victim_workload_id,
        l.victim_pod_index,
        l.preemptor_workload_id,
        w.root_workload_id
    from links as l
    inner join walk as w using (run_id, seq)
)

select * from final

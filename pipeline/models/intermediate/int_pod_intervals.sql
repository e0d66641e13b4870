-- grain: one row per run × pod holding × usage class segment (gang_wait, productive, lost_to_preemption)
-- borrowed: the attempt was admitted by Kueue on quota borrowed from the cohort (its `Borrowing` flag)
-- preemptor: on lost_to_preemption segments, the workload the eviction made room for
with holdings as (
    select * from int_pod_holdings
),

gang as not materialized (
    select * from int_gang_progress
),

workloads as not materialized (
    select * from stg_workloads
),

admissions as not materialized (
    select * from int_admissions
),

bounds as (
    select
        h.*,
        g.progress_start_s as group_progress_start_s,
        w.checkpoint_interval_s,
        coalesce(a.borrowed, false) as borrowed,
        -- the pod's progress starts when both it runs and its group reached min_count
        case
            when h.started_s is null then h.end_s
            when g.progress_start_s is null then h.end_s
            else greatest(h.started_s, least(g.progress_start_s, h.end_s))
        end as progress_start_s
    from holdings as h
    inner join workloads as w using (run_id, workload_id)
    left join gang as g using (run_id, workload_id, attempt)
    left join admissions as a using (run_id, workload_id, attempt)
),

with_checkpoint as (
    select
        *,
        -- an eviction keeps only work up to the group's last checkpoint
        case
            when end_event in ('preempted', 'timed_out') and group_progress_start_s is not null
                then least(end_s, greatest(
                    progress_start_s,
                    last_checkpoint_s(group_progress_start_s, end_s, checkpoint_interval_s)
                ))
            else end_s
        end as kept_until_s
    from bounds
),

segments as (
    -- reserved, not started: waiting at the gang barrier
    select *, hold_start_s as seg_start_s, coalesce(started_s, end_s) as seg_end_s,
        'gang_wait' as usage_class
    from with_checkpoint
    where reserved_s is not null
    union all
    -- started while the group has fewer than min_count pods running: partial placement
    select *, started_s, progress_start_s, 'gang_wait'
    from with_checkpoint
    where started_s is not null
    union all
    select *, progress_start_s, kept_until_s, 'productive'
    from with_checkpoint
    where started_s is not null
    union all
    select *, kept_until_s, end_s, 'lost_to_preemption'
    from with_checkpoint
    where started_s is not null
),

final as (
    select
        run_id,
        workload_id,
        pod_index,
        holding_no,
        attempt,
        node,
        gpus,
        seg_start_s as start_s,
        seg_end_s as end_s,
        usage_class,
        end_event,
        borrowed,
        -- lost work names the workload its eviction made room for
        case when usage_class = 'lost_to_preemption' then preemptor end as preemptor
    from segments
    where seg_end_s > seg_start_s
)

select * from final

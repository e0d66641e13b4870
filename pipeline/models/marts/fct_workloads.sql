-- grain: one row per run × workload (pod group)
-- outcome: finished; failed (it held GPUs and ended without finishing: rejected, or waiting at
-- the end after evictions); unfinished (running or waiting at the end without spending);
-- unservable (can never run: int_unservable_workloads, unservable_reason says why).
-- pending_demand_gpu_hours: the GPU-hours it demanded while pending (its GPUs × its quota,
-- placement and latency waits), capped by what the cluster could have run
-- (int_pending_demand_capped; none for unservable workloads); pending_demand_list_value: those
-- GPU-hours at the list price of the models they were demanded on. Demand, not spend.
-- idle_share_cost: its share of idle capacity under the `window` rule (int_idle_shares);
-- cost_with_idle = effective_cost + idle_share_cost.
-- Sums are exact (xsum, models/macros.sql): a hash join hands rows on in an order that varies
-- between builds and threads, and floating-point addition is not associative (docs/performance.md).
with workloads as (
    select * from stg_workloads
),

events as not materialized (
    select * from stg_events
),

runs as not materialized (
    select * from stg_runs
),

holdings as not materialized (
    select * from int_pod_holdings
),

intervals as not materialized (
    select * from int_pod_intervals
),

records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

unservable as not materialized (
    select * from int_unservable_workloads
),

pending as not materialized (
    select * from int_pending_demand_capped
),

idle_shares as (
    select * from int_idle_shares
    where idle_policy = 'window' and workload_id is not null
),

event_facts as (
    select
        run_id,
        workload_id,
        arg_max(cluster_queue, seq) filter (where cluster_queue is not null) as cluster_queue,
        min(time_s) filter (where event = 'started') as first_start_s,
        max(time_s) filter (where event = 'finished') as last_finish_s,
        count(*) filter (where event = 'rejected') > 0 as rejected,
        arg_max(event, seq) filter (
            where event in ('finished', 'preempted', 'timed_out', 'requeued', 'rejected')
        ) as last_release_event
    from events
    group by all
),

requeues as (
    -- requeues are rare: the seqs of each workload's, to number the attempts of its evictions
    select run_id, workload_id, list(seq) as requeue_seqs
    from events
    where event = 'requeued'
    group by all
),

eviction_facts as (
    -- evictions count once per attempt (requeues strictly before the row), not once per released pod
    select
        run_id,
        workload_id,
        count(distinct attempt) filter (where event = 'preempted') as preemptions,
        count(distinct attempt) filter (where event = 'timed_out') as timeouts
    from (
        select
            e.run_id,
            e.workload_id,
            e.event,
            case when q.requeue_seqs is null then 0
                else len(list_filter(q.requeue_seqs, lambda s: s < e.seq)) end as attempt
        from events as e
        left join requeues as q using (run_id, workload_id)
        where e.event in ('preempted', 'timed_out')
    )
    group by all
),

holding_facts as (
    select run_id, workload_id, bool_or(open_at_horizon) as holding_at_end
    from holdings
    group by all
),

interval_facts as (
    select
        run_id,
        workload_id,
        xsum(case when usage_class = 'productive' then gpus * (end_s - start_s) / 3600.0 end)
            as gpu_hours_productive,
        xsum(case when usage_class = 'gang_wait' then gpus * (end_s - start_s) / 3600.0 end)
            as gpu_hours_gang_wait,
        xsum(case when usage_class = 'lost_to_preemption' then gpus * (end_s - start_s) / 3600.0 end)
            as gpu_hours_lost,
        -- a started pod that still waited for its gang: partial placement
        bool_or(usage_class = 'gang_wait' and start_s >= coalesce(started_s_of_holding, end_s))
            as partial_placement
    from (
        select i.*, h.started_s as started_s_of_holding
        from intervals as i
        inner join holdings as h using (run_id, workload_id, pod_index, holding_no)
    )
    group by all
),

cost_facts as (
    select
        x_RunId as run_id,
        x_Workload as workload_id,
        xsum(EffectiveCost) as effective_cost,
        xsum(ListCost) as list_cost,
        xsum(case when x_UsageClass = 'productive' then EffectiveCost end) as productive_cost,
        xsum(case when x_UsageClass = 'gang_wait' then EffectiveCost end) as gang_wait_cost,
        xsum(case when x_UsageClass = 'lost_to_preemption' then EffectiveCost end) as preemption_waste_cost,
        xsum(case when x_Resource <> 'gpu' then EffectiveCost end) as cpu_memory_cost,
        xsum(case when x_Resource = 'gpu' and x_Borrowed then PricingQuantity end) as gpu_hours_borrowed
    from records
    where x_Workload is not null
    group by all
),

attempt_facts as (
    select run_id, workload_id, count(distinct attempt) as attempts
    from holdings
    group by all
),

wait_facts as (
    select run_id, workload_id, xsum(gpu_hours) as gpu_hours, xsum(list_value) as list_value
    from pending
    group by all
),

idle_share_facts as (
    select run_id, workload_id, xsum(idle_cost) as idle_share_cost
    from idle_shares
    group by all
),

final as (
    select
        w.run_id,
        w.workload_id,
        w.tenant,
        w.queue,
        ef.cluster_queue,
        w.priority,
        w.kind,
        w.pods,
        w.min_count,
        w.gpus_per_pod,
        w.gpu_model,
        ts_at(r.start_ts, w.submit_time_s) as submit_ts,
        ts_at(r.start_ts, ef.first_start_s) as first_start_ts,
        case
            when ef.last_release_event = 'finished' and not coalesce(hf.holding_at_end, false)
                then ts_at(r.start_ts, ef.last_finish_s)
        end as end_ts,
        case
            when coalesce(ef.rejected, false) then 'rejected'
            when coalesce(hf.holding_at_end, false) then 'running_at_end'
            when ef.last_release_event = 'finished' then 'finished'
            else 'pending_at_end'
        end as final_state,
        ef.first_start_s - w.submit_time_s as wait_s,
        coalesce(vf.preemptions, 0) as preemptions,
        coalesce(vf.timeouts, 0) as timeouts,
        coalesce(inf.partial_placement, false) as partial_placement,
        coalesce(inf.gpu_hours_productive, 0) as gpu_hours_productive,
        coalesce(inf.gpu_hours_gang_wait, 0) as gpu_hours_gang_wait,
        coalesce(inf.gpu_hours_lost, 0) as gpu_hours_lost,
        coalesce(cf.effective_cost, 0) as effective_cost,
        coalesce(cf.list_cost, 0) as list_cost,
        coalesce(cf.productive_cost, 0) as productive_cost,
        coalesce(cf.gang_wait_cost, 0) as gang_wait_cost,
        coalesce(cf.preemption_waste_cost, 0) as preemption_waste_cost,
        coalesce(cf.cpu_memory_cost, 0) as cpu_memory_cost,
        coalesce(cf.gpu_hours_borrowed, 0) as gpu_hours_borrowed,
        coalesce(af.attempts, 0) as attempts,
        -- what the workload paid per GPU-hour that moved it forward
        cf.effective_cost / nullif(inf.gpu_hours_productive, 0) as cost_per_useful_gpu_hour,
        case
            when u.reason is not null then 'unservable'
            when ef.last_release_event = 'finished' and not coalesce(hf.holding_at_end, false)
                and not coalesce(ef.rejected, false) then 'finished'
            when coalesce(hf.holding_at_end, false) then 'unfinished'
            when coalesce(cf.effective_cost, 0) > 0 then 'failed'
            else 'unfinished'
        end as outcome,
        u.reason as unservable_reason,
        coalesce(wf.gpu_hours, 0) as pending_demand_gpu_hours,
        coalesce(wf.list_value, 0) as pending_demand_list_value,
        coalesce(isf.idle_share_cost, 0) as idle_share_cost,
        coalesce(cf.effective_cost, 0) + coalesce(isf.idle_share_cost, 0) as cost_with_idle
    from workloads as w
    inner join runs as r using (run_id)
    left join event_facts as ef using (run_id, workload_id)
    left join eviction_facts as vf using (run_id, workload_id)
    left join holding_facts as hf using (run_id, workload_id)
    left join interval_facts as inf using (run_id, workload_id)
    left join cost_facts as cf using (run_id, workload_id)
    left join attempt_facts as af using (run_id, workload_id)
    left join unservable as u using (run_id, workload_id)
    left join wait_facts as wf using (run_id, workload_id)
    left join idle_share_facts as isf using (run_id, workload_id)
    order by w.run_id, w.workload_id
)

select * from final

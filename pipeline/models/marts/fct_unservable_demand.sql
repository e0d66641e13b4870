-- grain: one row per run × workload that can never run (int_unservable_workloads): unservable demand, for capacity planning
-- reason: the fact that says so (LargerThanCluster, UnknownGpuModel, UnknownQueue, ExceedsMaxQuota,
-- NoMatchingFlavor, Misconfigured, Suspended) and evidence where it was read (rejected, kueue,
-- quota_table, cluster). asked_gpu_hours: the GPU-hours it would have used (pods × GPUs per pod
-- × duration); waited_gpu_hours: its GPUs × the time it waited in the run window. None of it is
-- demand for idle causes.
with unservable as (
    select * from int_unservable_workloads
),

workloads as not materialized (
    select * from stg_workloads
),

events as not materialized (
    select * from stg_events
),

runs as not materialized (
    select * from stg_runs
),

phases as not materialized (
    select * from int_run_phases
),

ends as (
    select run_id, workload_id, min(time_s) filter (where event = 'rejected') as rejected_s
    from events
    group by all
),

final as (
    select
        u.run_id,
        u.workload_id,
        u.tenant,
        u.cluster_queue,
        w.kind,
        u.reason,
        u.evidence,
        w.pods,
        w.min_count,
        w.gpus_per_pod,
        w.gpu_model,
        u.demand_gpus,
        ts_at(r.start_ts, w.submit_time_s) as submit_ts,
        phase_of(floor(w.submit_time_s / r.charge_period_s) * r.charge_period_s,
            ph.warmup_end_s, ph.drain_start_s) as submit_phase,
        w.duration_s / 3600.0 as duration_hours,
        u.demand_gpus * w.duration_s / 3600.0 as asked_gpu_hours,
        u.demand_gpus * greatest(least(coalesce(e.rejected_s, r.horizon_s), r.horizon_s)
            - w.submit_time_s, 0) / 3600.0 as waited_gpu_hours
    from unservable as u
    inner join workloads as w using (run_id, workload_id)
    inner join runs as r using (run_id)
    inner join phases as ph using (run_id)
    left join ends as e using (run_id, workload_id)
    order by u.run_id, u.workload_id
)

select * from final

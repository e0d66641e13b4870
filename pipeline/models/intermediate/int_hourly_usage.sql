-- grain: one row per run × charge period × pod interval segment (segments split at period boundaries)
-- borrowed_share: the queue's GPU-hours above nominal quota, Kueue's own measure, carried by the
-- workloads that borrowed: for the ClusterQueue and flavor that admitted the attempt, the
-- charge period's ∫ max(admitted − nominal, 0) (int_queue_usage) ÷ the GPU-hours the attempts
-- Kueue flagged `Borrowing` held there (at most 1), on those attempts only; 0 on attempts
-- admitted within nominal quota; without a known quota, 1 for a flagged attempt and 0
-- otherwise; 0 for workloads Kueue never admitted
with intervals as (
    select * from int_pod_intervals
),

runs as not materialized (
    select * from stg_runs
),

workloads as not materialized (
    select * from stg_workloads
),

admissions as not materialized (
    select * from int_admissions
),

queue_usage as not materialized (
    select * from int_queue_usage
),

exploded as (
    select
        i.*,
        w.cpu_cores_per_pod as cpu_cores,
        w.memory_gib_per_pod as memory_gib,
        r.charge_period_s,
        r.horizon_s,
        unnest(range(
            cast(floor(i.start_s / r.charge_period_s) as bigint),
            cast(ceil(i.end_s / r.charge_period_s) as bigint)
        )) as period_index
    from intervals as i
    inner join runs as r using (run_id)
    inner join workloads as w using (run_id, workload_id)
),

clipped as not materialized (
    -- (read twice, computed twice: the second reading keeps the borrowing attempts alone)
    select
        *,
        period_index * charge_period_s as period_start_s,
        least((period_index + 1) * charge_period_s, horizon_s) as period_end_s,
        least(end_s, (period_index + 1) * charge_period_s)
            - greatest(start_s, period_index * charge_period_s) as held_s
    from exploded
),

borrowing_held as (
    -- GPU-hours the queue's flagged (borrowing) attempts held in the period; the other
    -- attempts add nothing to the sum (a queue and period without any: 0)
    select c.run_id, a.cluster_queue, coalesce(a.flavor, '') as flavor, c.period_index,
        xsum(c.gpus * c.held_s / 3600.0) as borrowing_held_gpu_hours
    from clipped as c
    left join admissions as a using (run_id, workload_id, attempt)
    where c.borrowed
    group by all
),

queued as (
    select
        c.*,
        a.cluster_queue,
        a.flavor,
        q.borrowed_gpu_hours,
        coalesce(b.borrowing_held_gpu_hours, 0.0) as borrowing_held_gpu_hours
    from clipped as c
    left join admissions as a using (run_id, workload_id, attempt)
    left join queue_usage as q
        on q.run_id = c.run_id and q.cluster_queue = a.cluster_queue
        -- an admission without a flavor (a hand-made log) has its own null-flavor row
        and coalesce(q.flavor, '') = coalesce(a.flavor, '') and q.period_index = c.period_index
    left join borrowing_held as b
        on b.run_id = c.run_id and b.cluster_queue is not distinct from a.cluster_queue
        and b.flavor = coalesce(a.flavor, '') and b.period_index = c.period_index
),

shared as (
    select
        * exclude (cluster_queue, flavor, borrowed_gpu_hours, borrowing_held_gpu_hours),
        case
            when cluster_queue is null or not borrowed then 0.0
            when borrowed_gpu_hours is null then 1.0
            when borrowing_held_gpu_hours > 0 then least(borrowed_gpu_hours / borrowing_held_gpu_hours, 1.0)
            else 0.0
        end as borrowed_share
    from queued
),

final as (
    select
        run_id,
        period_index,
        period_start_s,
        period_end_s,
        node,
        workload_id,
        pod_index,
        holding_no,
        attempt,
        usage_class,
        borrowed,
        borrowed_share,
        preemptor,
        gpus,
        cpu_cores,
        memory_gib,
        held_s,
        gpus * held_s / 3600.0 as gpu_hours,
        cpu_cores * held_s / 3600.0 as cpu_core_hours,
        memory_gib * held_s / 3600.0 as memory_gib_hours
    from shared
    where held_s > 0
)

select * from final

-- grain: one row per run × workload × attempt that Kueue admitted (its last `admitted` row)
-- an admission holds pods × gpus_per_pod of quota in its flavor from the `admitted` row until
-- the attempt's `requeued` (or `rejected`) row, else its last pod's `finished` row, else the
-- horizon (pods still running, or admitted and never started)
with events as (
    select * from stg_events
),

workloads as not materialized (
    select * from stg_workloads
),

runs as not materialized (
    select * from stg_runs
),

holdings as not materialized (
    select * from int_pod_holdings
),

numbered as (
    select
        *,
        -- attempt = requeues strictly before this row, as in int_pod_holdings
        coalesce(count(*) filter (where event = 'requeued') over (
            partition by run_id, workload_id order by seq
            rows between unbounded preceding and 1 preceding
        ), 0) as attempt
    from events
    where event in ('admitted', 'requeued', 'rejected', 'finished')
),

admissions as (
    select
        run_id,
        workload_id,
        attempt,
        arg_max(seq, seq) as seq,
        arg_max(time_s, seq) as start_s,
        arg_max(cluster_queue, seq) as cluster_queue,
        arg_max(flavor, seq) as flavor,
        arg_max(coalesce(reason = 'Borrowing', false), seq) as borrowed
    from numbered
    where event = 'admitted'
    group by all
),

attempt_ends as (
    select
        run_id,
        workload_id,
        attempt,
        min(time_s) filter (where event in ('requeued', 'rejected')) as released_s,
        max(time_s) filter (where event = 'finished') as last_finish_s
    from numbered
    group by all
),

open_attempts as (
    select run_id, workload_id, attempt, bool_or(open_at_horizon) as holding_at_horizon
    from holdings
    group by all
),

final as (
    select
        a.run_id,
        a.workload_id,
        a.attempt,
        a.seq,
        a.cluster_queue,
        a.flavor,
        a.borrowed,
        w.pods * w.gpus_per_pod as gpus,
        a.start_s,
        greatest(a.start_s, least(r.horizon_s, case
            when e.released_s is not null then e.released_s
            when coalesce(o.holding_at_horizon, false) then r.horizon_s
            when e.last_finish_s is not null then e.last_finish_s
            else r.horizon_s
        end)) as end_s
    from admissions as a
    inner join workloads as w using (run_id, workload_id)
    inner join runs as r using (run_id)
    left join attempt_ends as e using (run_id, workload_id, attempt)
    left join open_attempts as o using (run_id, workload_id, attempt)
)

select * from final

-- grain: one row per run (its submission window and the bounds of its warm-up, steady and drain phases)
-- warm-up: the charge periods that end by the first submission plus a tenth of the submission
-- window; drain: from the end of the charge period that holds the
-- last submission. A run without workloads is steady throughout.
with runs as (
    select * from stg_runs
),

workloads as not materialized (
    select * from stg_workloads
),

submissions as (
    select run_id, min(submit_time_s) as first_submit_s, max(submit_time_s) as last_submit_s
    from workloads
    group by all
),

bounds as (
    select
        r.run_id,
        r.charge_period_s,
        r.horizon_s,
        s.first_submit_s,
        s.last_submit_s,
        s.first_submit_s + warmup_fraction() * (s.last_submit_s - s.first_submit_s) as warmup_until_s
    from runs as r
    left join submissions as s using (run_id)
),

final as (
    select
        run_id,
        first_submit_s,
        last_submit_s,
        case when first_submit_s is null then 0.0
            else least(floor(warmup_until_s / charge_period_s) * charge_period_s, horizon_s)
        end as warmup_end_s,
        case when last_submit_s is null then horizon_s
            else least((floor(last_submit_s / charge_period_s) + 1) * charge_period_s, horizon_s)
        end as drain_start_s
    from bounds
)

select * from final

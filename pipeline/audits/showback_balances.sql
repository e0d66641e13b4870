-- per run, billing period and idle policy: showback (idle separate), every chargeback policy and the FOCUS Usage rows all add up to the same EffectiveCost, and the reclaim option moves cost without creating any
with showback as (
    select * from fct_showback
),

records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

sides as (
    select run_id, billing_period_start, sum(cost_idle_separate) as separate,
        sum(cost_idle_shared) as shared, sum(cost_idle_by_node) as by_node,
        sum(cost_idle_by_cause) as by_cause, sum(reclaim_adjustment_cost) as reclaim_moved
    from showback
    group by all
),

totals as (
    select x_RunId as run_id, BillingPeriodStart as billing_period_start, sum(EffectiveCost) as total
    from records
    group by all
),

final as (
    select *
    from totals as t
    full outer join sides as s using (run_id, billing_period_start)
    where abs(coalesce(t.total, 0) - coalesce(s.separate, 0)) > 1e-6 * greatest(1, coalesce(t.total, 0))
        or abs(coalesce(t.total, 0) - coalesce(s.shared, 0)) > 1e-6 * greatest(1, coalesce(t.total, 0))
        or abs(coalesce(t.total, 0) - coalesce(s.by_node, 0)) > 1e-6 * greatest(1, coalesce(t.total, 0))
        or abs(coalesce(t.total, 0) - coalesce(s.by_cause, 0)) > 1e-6 * greatest(1, coalesce(t.total, 0))
        or abs(coalesce(s.reclaim_moved, 0)) > 1e-6 * greatest(1, coalesce(t.total, 0))
)

select * from final

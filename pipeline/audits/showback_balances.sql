-- per run and billing period: showback with idle separate, chargeback with idle shared and the FOCUS Usage rows all add up to the same EffectiveCost
with showback as (
    select * from fct_showback
),

records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

sides as (
    select run_id, billing_period_start, sum(cost_idle_separate) as separate,
        sum(cost_idle_shared) as shared
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
)

select * from final

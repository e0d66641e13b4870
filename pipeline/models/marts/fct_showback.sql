-- grain: one row per run × billing period × tenant (plus `__idle__`): showback with idle separate, chargeback with idle shared
-- cost_idle_separate: a team's own usage; idle capacity on the `__idle__` row.
-- cost_idle_shared: plus the team's share of idle, as OpenCost shares it (`__weighted__`): per
-- resource, in proportion to the team's cost of that resource in the run and billing period.
-- Idle of a resource nobody used cannot be shared and stays on `__idle__`. Both columns sum
-- to the same total; commitment purchases are not usage (their cost is amortized in the rows).
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

usage as (
    select
        x_RunId as run_id,
        BillingPeriodStart as billing_period_start,
        x_Tenant as tenant,
        x_Resource as resource,
        sum(EffectiveCost) as cost,
        sum(ListCost) as list_cost,
        coalesce(sum(PricingQuantity) filter (where x_Resource = 'gpu'), 0) as gpu_hours,
        coalesce(sum(EffectiveCost) filter (where x_UsageClass = 'productive'), 0) as productive_cost,
        coalesce(sum(EffectiveCost) filter (where x_UsageClass = 'gang_wait'), 0) as gang_wait_cost,
        coalesce(sum(EffectiveCost) filter (where x_UsageClass = 'lost_to_preemption'), 0)
            as preemption_waste_cost
    from records
    group by all
),

idle as (
    select run_id, billing_period_start, resource, sum(cost) as idle_cost
    from usage
    where tenant = '__idle__'
    group by all
),

weighted as (
    select
        u.*,
        sum(u.cost) over (partition by u.run_id, u.billing_period_start, u.resource) as resource_cost
    from usage as u
    where u.tenant <> '__idle__'
),

shares as (
    select
        w.run_id,
        w.billing_period_start,
        w.tenant,
        w.resource,
        case when w.resource_cost > 0 then coalesce(i.idle_cost, 0) * w.cost / w.resource_cost else 0 end
            as idle_share
    from weighted as w
    left join idle as i using (run_id, billing_period_start, resource)
),

unshared_idle as (
    -- idle of a resource without any allocated cost in the period stays with `__idle__`
    select i.run_id, i.billing_period_start, '__idle__' as tenant, i.resource, i.idle_cost as kept
    from idle as i
    where not exists (
        select 1 from weighted as w
        where w.run_id = i.run_id and w.billing_period_start = i.billing_period_start
            and w.resource = i.resource and w.resource_cost > 0
    )
),

per_tenant as (
    select
        u.run_id,
        u.billing_period_start,
        u.tenant,
        sum(u.gpu_hours) as gpu_hours,
        sum(u.list_cost) as list_cost,
        sum(u.cost) as cost_idle_separate,
        sum(u.productive_cost) as productive_cost,
        sum(u.gang_wait_cost) as gang_wait_cost,
        sum(u.preemption_waste_cost) as preemption_waste_cost
    from usage as u
    group by all
),

final as (
    select
        t.run_id,
        t.billing_period_start,
        t.billing_period_start + interval 1 month as billing_period_end,
        t.tenant,
        t.gpu_hours,
        t.list_cost,
        t.productive_cost,
        t.gang_wait_cost,
        t.preemption_waste_cost,
        t.cost_idle_separate,
        coalesce(s.idle_share, 0) as idle_share,
        case
            when t.tenant = '__idle__' then coalesce(k.kept, 0)
            else t.cost_idle_separate + coalesce(s.idle_share, 0)
        end as cost_idle_shared
    from per_tenant as t
    left join (
        select run_id, billing_period_start, tenant, sum(idle_share) as idle_share
        from shares
        group by all
    ) as s using (run_id, billing_period_start, tenant)
    left join (
        select run_id, billing_period_start, tenant, sum(kept) as kept
        from unshared_idle
        group by all
    ) as k using (run_id, billing_period_start, tenant)
    order by t.run_id, t.billing_period_start, t.tenant
)

select * from final

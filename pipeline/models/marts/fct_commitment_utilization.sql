-- grain: one row per run × commitment pool (the Committed capacity of one SKU) × billing period
-- utilization = committed hours used ÷ committed hours; the pool's cost (BilledCost of its
-- Purchase rows) equals the EffectiveCost of its Used plus Unused rows (the amortization).
-- coverage = covered usage ÷ commitment-eligible usage on the same records as utilization:
-- committed hours used (status Used) ÷ those + on-demand (Standard) hours used. Spot usage is
-- not eligible and Unused rows are not usage (FOCUS), so neither is in it (FinOps' commitment
-- discount coverage);
-- coverable_on_demand_quantity = Σ over charge periods of min(unused committed, on-demand used):
-- on-demand (Standard) usage the pool's idle commitment could have carried, and
-- coverable_on_demand_cost what it cost at the list price. Spot usage is not coverage.
with records as (
    select * from focus_cost_records
),

commitments as not materialized (
    select * from int_commitments
),

per_period as (
    -- the SKU's hours per charge period, by how they were bought and used
    select
        x_RunId as run_id,
        SkuId as sku_id,
        BillingPeriodStart as billing_period_start,
        ChargePeriodStart as charge_period_start,
        coalesce(xsum(case when CommitmentDiscountStatus = 'Used' then PricingQuantity end), 0) as used,
        coalesce(xsum(case when CommitmentDiscountStatus = 'Unused' then PricingQuantity end), 0) as unused,
        coalesce(xsum(case when PricingCategory = 'Standard' and x_UsageClass <> 'idle' then PricingQuantity end), 0) as on_demand,
        coalesce(xsum(case when PricingCategory = 'Standard' then PricingQuantity end), 0) as on_demand_capacity,
        coalesce(xsum(case when PricingCategory = 'Dynamic' and x_UsageClass <> 'idle' then PricingQuantity end), 0) as spot,
        any_value(ListUnitPrice) filter (where PricingCategory = 'Standard') as on_demand_list_price
    from records
    where ChargeCategory = 'Usage'
    group by all
),

coverage as (
    select
        run_id,
        sku_id,
        billing_period_start,
        xsum(on_demand) as on_demand_quantity,
        xsum(on_demand_capacity) as on_demand_capacity_quantity,
        xsum(spot) as spot_quantity,
        xsum(least(unused, on_demand)) as coverable_on_demand_quantity,
        coalesce(xsum(least(unused, on_demand) * on_demand_list_price), 0) as coverable_on_demand_cost
    from per_period
    group by all
),

pools as (
    select
        x_RunId as run_id,
        CommitmentDiscountId as commitment_id,
        BillingPeriodStart as billing_period_start,
        any_value(SkuId) filter (where ChargeCategory = 'Usage') as sku_id,
        any_value(x_GpuModel) as gpu_model,
        any_value(x_Resource) as resource,
        any_value(CommitmentDiscountUnit) as unit,
        coalesce(xsum(case when ChargeCategory = 'Purchase' then PricingQuantity end), 0) as committed_quantity,
        coalesce(xsum(case when CommitmentDiscountStatus = 'Used' then PricingQuantity end), 0) as used_quantity,
        coalesce(xsum(case when CommitmentDiscountStatus = 'Unused' then PricingQuantity end), 0)
            as unused_quantity,
        coalesce(xsum(case when ChargeCategory = 'Purchase' then BilledCost end), 0) as commitment_cost,
        coalesce(xsum(case when CommitmentDiscountStatus = 'Used' then EffectiveCost end), 0) as used_cost,
        coalesce(xsum(case when CommitmentDiscountStatus = 'Unused' then EffectiveCost end), 0) as unused_cost
    from records
    where CommitmentDiscountId is not null
    group by x_RunId, CommitmentDiscountId, BillingPeriodStart
),

final as (
    select
        p.run_id,
        p.commitment_id,
        p.billing_period_start,
        p.sku_id,
        c.nodes,
        p.gpu_model,
        p.resource,
        p.unit,
        p.committed_quantity,
        p.used_quantity,
        p.unused_quantity,
        p.commitment_cost,
        p.used_cost,
        p.unused_cost,
        p.used_quantity / nullif(p.committed_quantity, 0) as utilization,
        coalesce(v.on_demand_quantity, 0) as on_demand_quantity,
        coalesce(v.on_demand_capacity_quantity, 0) as on_demand_capacity_quantity,
        coalesce(v.spot_quantity, 0) as spot_quantity,
        p.used_quantity + coalesce(v.on_demand_quantity, 0) as eligible_quantity,
        p.used_quantity / nullif(p.used_quantity + coalesce(v.on_demand_quantity, 0), 0) as coverage,
        coalesce(v.coverable_on_demand_quantity, 0) as coverable_on_demand_quantity,
        coalesce(v.coverable_on_demand_cost, 0) as coverable_on_demand_cost
    from pools as p
    left join commitments as c
        on c.run_id = p.run_id and c.commitment_id = p.commitment_id
        and c.billing_period_start = p.billing_period_start
    left join coverage as v
        on v.run_id = p.run_id and v.sku_id = p.sku_id and v.billing_period_start = p.billing_period_start
    order by all
)

select * from final

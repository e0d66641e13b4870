-- grain: one row per run × commitment (Committed node × resource) × billing period
-- utilization = used ÷ committed quantity; the commitment's cost (BilledCost of its Purchase
-- rows) equals the EffectiveCost of its Used plus Unused rows (the amortization)
with records as (
    select * from focus_cost_records
    where CommitmentDiscountId is not null
),

final as (
    select
        x_RunId as run_id,
        CommitmentDiscountId as commitment_id,
        BillingPeriodStart as billing_period_start,
        any_value(x_Node) as node,
        any_value(x_GpuModel) as gpu_model,
        any_value(x_Resource) as resource,
        any_value(CommitmentDiscountUnit) as unit,
        coalesce(sum(PricingQuantity) filter (where ChargeCategory = 'Purchase'), 0) as committed_quantity,
        coalesce(sum(PricingQuantity) filter (where CommitmentDiscountStatus = 'Used'), 0) as used_quantity,
        coalesce(sum(PricingQuantity) filter (where CommitmentDiscountStatus = 'Unused'), 0)
            as unused_quantity,
        coalesce(sum(BilledCost) filter (where ChargeCategory = 'Purchase'), 0) as commitment_cost,
        coalesce(sum(EffectiveCost) filter (where CommitmentDiscountStatus = 'Used'), 0) as used_cost,
        coalesce(sum(EffectiveCost) filter (where CommitmentDiscountStatus = 'Unused'), 0) as unused_cost,
        coalesce(sum(PricingQuantity) filter (where CommitmentDiscountStatus = 'Used'), 0)
            / nullif(sum(PricingQuantity) filter (where ChargeCategory = 'Purchase'), 0) as utilization
    from records
    group by x_RunId, CommitmentDiscountId, BillingPeriodStart
    order by all
)

select * from final

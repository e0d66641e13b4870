-- ContractedCost = ContractedUnitPrice × PricingQuantity, and BilledCost = EffectiveCost = ContractedCost
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, ChargePeriodStart, x_Workload, x_UsageClass,
        ContractedUnitPrice, PricingQuantity, ContractedCost, BilledCost, EffectiveCost
    from records
    where ContractedCost is distinct from ContractedUnitPrice * PricingQuantity
        or BilledCost is distinct from ContractedCost
        or EffectiveCost is distinct from ContractedCost
)

select * from final

-- ContractedCost = ContractedUnitPrice × PricingQuantity; EffectiveCost = ContractedCost on Usage rows and 0 on Purchase rows; BilledCost = ContractedCost except on usage a commitment paid for (0)
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, ChargePeriodStart, ChargeCategory, x_Workload, x_UsageClass,
        ContractedUnitPrice, PricingQuantity, ContractedCost, BilledCost, EffectiveCost,
        CommitmentDiscountId
    from records
    where ContractedCost is distinct from ContractedUnitPrice * PricingQuantity
        or EffectiveCost is distinct from (case when ChargeCategory = 'Purchase' then 0.0 else ContractedCost end)
        or BilledCost is distinct from (
            case when ChargeCategory = 'Usage' and CommitmentDiscountId is not null then 0.0
                else ContractedCost end
        )
)

select * from final

-- ContractedCost = ContractedUnitPrice × PricingQuantity (commitment discounts excluded, FOCUS); on usage no commitment covers, EffectiveCost = BilledCost = ContractedCost; on usage a commitment covers, BilledCost 0 (the purchase billed it) and EffectiveCost its amortized share, never above ContractedCost; on Purchase rows BilledCost = ContractedCost and EffectiveCost 0
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, ChargePeriodStart, ChargeCategory, x_Workload, x_UsageClass,
        ContractedUnitPrice, PricingQuantity, ContractedCost, BilledCost, EffectiveCost,
        CommitmentDiscountId
    from records
    where ContractedCost is distinct from ContractedUnitPrice * PricingQuantity
        or (ChargeCategory = 'Purchase'
            and (EffectiveCost is distinct from 0.0 or BilledCost is distinct from ContractedCost))
        or (ChargeCategory = 'Usage' and CommitmentDiscountId is null
            and (EffectiveCost is distinct from ContractedCost or BilledCost is distinct from ContractedCost))
        or (ChargeCategory = 'Usage' and CommitmentDiscountId is not null
            and (BilledCost is distinct from 0.0 or EffectiveCost > ContractedCost))
)

select * from final

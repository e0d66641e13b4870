-- no negative (or missing) quantity, unit price or cost on any record; ConsumedQuantity is missing exactly on Purchase and Unused-commitment rows
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, ChargePeriodStart, ChargeCategory, x_Workload, x_UsageClass,
        ConsumedQuantity, PricingQuantity, ListUnitPrice, ContractedUnitPrice,
        ListCost, ContractedCost, BilledCost, EffectiveCost
    from records
    where not (
        coalesce(ConsumedQuantity, 0) >= 0 and PricingQuantity >= 0
        and ListUnitPrice >= 0 and ContractedUnitPrice >= 0
        and ListCost >= 0 and ContractedCost >= 0 and BilledCost >= 0 and EffectiveCost >= 0
    )
    or (ConsumedQuantity is null) != (
        ChargeCategory <> 'Usage' or coalesce(CommitmentDiscountStatus = 'Unused', false)
    )
    or PricingQuantity is null or ListCost is null
    or ContractedCost is null or BilledCost is null or EffectiveCost is null
)

select * from final

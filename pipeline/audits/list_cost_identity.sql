-- ListCost = ListUnitPrice × PricingQuantity on every row
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, ChargePeriodStart, x_Workload, x_UsageClass,
        ListUnitPrice, PricingQuantity, ListCost
    from records
    where ListCost is distinct from ListUnitPrice * PricingQuantity
)

select * from final

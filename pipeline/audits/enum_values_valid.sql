-- enum columns hold an allowed value on every row (the FOCUS validator only checks the column)
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, x_Workload, ChargeCategory, ChargeFrequency, PricingCategory,
        CommitmentDiscountStatus, x_UsageClass, x_IdleReason, x_Resource, x_Phase
    from records
    where ChargeCategory is null
        or ChargeCategory not in ('Usage', 'Purchase', 'Tax', 'Credit', 'Adjustment')
        or ChargeFrequency is null
        or ChargeFrequency not in ('One-Time', 'Recurring', 'Usage-Based')
        or PricingCategory is null
        or PricingCategory not in ('Standard', 'Dynamic', 'Committed', 'Other')
        or CommitmentDiscountStatus not in ('Used', 'Unused')
        or x_UsageClass is null
        -- the registry's names (pipeline/registry.py, through its macros)
        or not list_contains(record_usage_classes(), x_UsageClass)
        or (x_IdleReason is not null and not list_contains(idle_reasons(), x_IdleReason))
        or x_Resource is null
        or x_Resource not in ('gpu', 'cpu', 'memory')
        or (ChargeCategory = 'Usage') != (x_Phase is not null)
        or x_Phase not in ('warmup', 'steady', 'drain')
)

select * from final

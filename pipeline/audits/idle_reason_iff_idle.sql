-- x_IdleReason is set exactly on idle rows; idle rows belong to no workload and tenant __idle__
with records as (
    select * from focus_cost_records
),

final as (
    select x_RunId, x_Node, x_Workload, x_Tenant, x_UsageClass, x_IdleReason
    from records
    where (x_UsageClass = 'idle') != (x_IdleReason is not null)
        or (x_UsageClass = 'idle' and (x_Workload is not null or x_Tenant != '__idle__'))
        or (x_UsageClass != 'idle' and x_Workload is null)
)

select * from final

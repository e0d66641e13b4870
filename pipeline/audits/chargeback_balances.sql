-- per run, charge period, GPU model, resource and idle policy: the charged costs in fct_chargeback add up to Σ EffectiveCost of the cell's Usage rows, and no team is charged a negative idle share (tolerance 1e-9 relative)
with chargeback as (
    select * from fct_chargeback
),

records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

cells as (
    select x_RunId as run_id, ChargePeriodStart as charge_period_start, coalesce(x_GpuModel, '') as gpu_model,
        x_Resource as resource, sum(EffectiveCost) as total
    from records
    group by all
),

charged as (
    select run_id, charge_period_start, coalesce(gpu_model, '') as gpu_model, resource, idle_policy,
        sum(charged_cost) as charged,
        min(idle_share_cost) as least_share
    from chargeback
    group by all
),

expected as (
    select c.*, p.idle_policy
    from cells as c
    cross join (select unnest(['separate', 'window', 'node', 'cause']) as idle_policy) as p
),

final as (
    select *
    from expected as e
    full outer join charged as c using (run_id, charge_period_start, gpu_model, resource, idle_policy)
    where abs(coalesce(e.total, 0) - coalesce(c.charged, 0)) > 1e-9 * greatest(1, abs(coalesce(e.total, 0)))
        or c.least_share < -1e-12
)

select * from final

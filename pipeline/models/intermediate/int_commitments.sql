-- grain: one row per run × commitment pool (the Committed capacity of one SKU) × billing period (calendar month of the charge periods' starts)
-- The Committed nodes of a SKU (a resource of one GPU model's price row, e.g. gpu-h100) are one
-- usage-based commitment, pooled as reserved capacity is: paid per billing period for every
-- charge period that starts in it, used or not, whichever of its nodes the usage ran on.
with capacity as (
    select * from int_node_capacity_periods
),

node_prices as not materialized (
    select * from int_node_prices
),

runs as not materialized (
    select * from stg_runs
),

committed_periods as (
    select
        c.run_id,
        c.node,
        p.resource,
        p.gpu_model,
        p.unit,
        p.list_unit_price,
        -- the commitment's own price: the rate its purchase is billed at
        p.effective_unit_price as contracted_unit_price,
        p.sku_id,
        ts_at(r.start_ts, c.period_start_s) as charge_period_start,
        ts_at(r.start_ts, c.period_end_s) as charge_period_end,
        p.units * (c.period_end_s - c.period_start_s) / 3600.0 as quantity
    from capacity as c
    inner join node_prices as p using (run_id, node)
    inner join runs as r using (run_id)
    where p.pricing_category = 'Committed'
),

final as (
    select
        run_id,
        sku_id,
        any_value(resource) as resource,
        format('k8s://{}/commitment/{}', run_id, sku_id) as commitment_id,
        any_value(gpu_model) as gpu_model,
        any_value(unit) as unit,
        any_value(list_unit_price) as list_unit_price,
        any_value(contracted_unit_price) as contracted_unit_price,
        count(distinct node) as nodes,
        date_trunc('month', charge_period_start) as billing_period_start,
        min(charge_period_start) as charge_period_start,
        max(charge_period_end) as charge_period_end,
        xsum(quantity) as committed_quantity
    from committed_periods
    group by run_id, sku_id, date_trunc('month', charge_period_start)
)

select * from final

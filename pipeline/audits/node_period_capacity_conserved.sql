-- every node, charge period and priced resource: Σ PricingQuantity of the Usage rows = capacity × period hours (tolerance 1e-9)
with records as (
    select * from focus_cost_records
    where ChargeCategory = 'Usage'
),

node_prices as (
    select * from int_node_prices
),

runs as (
    select * from dim_runs
),

periods as (
    -- every period of the run window, so a node-period with no records at all is caught too
    select
        r.run_id,
        r.start_ts + to_microseconds(cast(k * s.charge_period_s * 1000000 as bigint)) as period_start,
        least(k * s.charge_period_s + s.charge_period_s, r.horizon_s) - k * s.charge_period_s as period_s
    from runs as r
    inner join stg_runs as s using (run_id),
        unnest(range(0, cast(ceil(r.horizon_s / s.charge_period_s) as bigint))) as t(k)
),

expected as (
    select p.run_id, n.node, n.resource, p.period_start, n.units * p.period_s / 3600.0 as capacity
    from periods as p
    inner join node_prices as n using (run_id)
),

actual as (
    select x_RunId as run_id, x_Node as node, x_Resource as resource, ChargePeriodStart as period_start,
        sum(PricingQuantity) as consumed
    from records
    group by all
),

final as (
    select e.*, coalesce(a.consumed, 0) as consumed
    from expected as e
    full outer join actual as a using (run_id, node, resource, period_start)
    where abs(coalesce(e.capacity, 0) - coalesce(a.consumed, 0)) > 1e-9 * greatest(1, abs(coalesce(e.capacity, 0)))
)

select * from final

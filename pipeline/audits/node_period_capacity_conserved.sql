-- every node and charge period: Σ ConsumedQuantity = node GPUs × period hours (tolerance 1e-9)
with records as (
    select * from focus_cost_records
),

nodes as (
    select * from dim_nodes
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
    select p.run_id, n.node, p.period_start, n.gpus * p.period_s / 3600.0 as capacity_gpu_hours
    from periods as p
    inner join nodes as n using (run_id)
),

actual as (
    select x_RunId as run_id, x_Node as node, ChargePeriodStart as period_start,
        sum(ConsumedQuantity) as consumed_gpu_hours
    from records
    group by all
),

final as (
    select e.*, coalesce(a.consumed_gpu_hours, 0) as consumed_gpu_hours
    from expected as e
    full outer join actual as a using (run_id, node, period_start)
    where abs(coalesce(e.capacity_gpu_hours, 0) - coalesce(a.consumed_gpu_hours, 0)) > 1e-9
)

select * from final

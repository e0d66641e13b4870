-- grain: one row per run × node × step of its fractional-GPU holdings (split at charge-period boundaries)
-- F = Σ requests below one GPU on the node; the devices they share are counted as the fewest
-- that hold them, ceil(F), so slack = ceil(F) − F GPUs sit unshared on shared devices. The
-- event log names no device: this is the least slack the placement can have, and the part of
-- the node's idle that only a fractional request could use (cause `fragmentation`).
with intervals as (
    select * from int_pod_intervals
),

nodes as not materialized (
    select * from stg_nodes
),

runs as not materialized (
    select * from stg_runs
),

shared_nodes as (
    select distinct run_id, node from intervals where gpus < 1
),

changes as (
    select i.run_id, i.node, i.start_s as time_s,
        case when i.gpus < 1 then i.gpus else 0 end as fractional_delta, i.gpus as held_delta
    from intervals as i
    inner join shared_nodes using (run_id, node)
    union all
    select i.run_id, i.node, i.end_s, case when i.gpus < 1 then -i.gpus else 0 end, -i.gpus
    from intervals as i
    inner join shared_nodes using (run_id, node)
    union all
    -- period boundaries are change points, so no step spans two periods
    select s.run_id, s.node, unnest(list_transform(
        range(0, cast(ceil(r.horizon_s / r.charge_period_s) as bigint)),
        lambda k: k * r.charge_period_s
    )), 0.0, 0.0
    from shared_nodes as s
    inner join runs as r using (run_id)
),

change_points as (
    select run_id, node, time_s, xsum(fractional_delta) as fractional_delta, xsum(held_delta) as held_delta
    from changes
    group by all
),

steps as (
    select
        run_id,
        node,
        time_s,
        lead(time_s) over (partition by run_id, node order by time_s) as next_time_s,
        -- requests are whole milli-GPUs: rounding drops the float noise of long running sums
        round(xsum(fractional_delta) over w, 9) as fractional_gpus,
        round(xsum(held_delta) over w, 9) as held_gpus
    from change_points
    window w as (partition by run_id, node order by time_s rows between unbounded preceding and current row)
),

final as (
    select
        s.run_id,
        s.node,
        n.gpu_model,
        cast(floor(s.time_s / r.charge_period_s) as bigint) as period_index,
        s.time_s as start_s,
        least(s.next_time_s, r.horizon_s) as end_s,
        s.fractional_gpus,
        least(
            greatest(ceil(s.fractional_gpus - 1e-9) - s.fractional_gpus, 0),
            greatest(n.gpus - s.held_gpus, 0)
        ) as slack_gpus
    from steps as s
    inner join nodes as n using (run_id, node)
    inner join runs as r using (run_id)
    where s.next_time_s is not null and s.time_s < r.horizon_s and s.fractional_gpus > 0
)

select * from final
where slack_gpus > 0 and end_s > start_s

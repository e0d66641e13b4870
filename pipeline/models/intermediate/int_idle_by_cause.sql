-- grain: one row per run × node × charge period × idle reason (gang_barrier, quota, fragmentation, no_demand)
-- per GPU model, the cluster-level timeline is integrated exactly between its change points:
-- usable free GPUs = model GPUs − held − shared-device slack; they go first to the missing pods
-- of partially placed gangs (gang_barrier), then to demand Kueue holds back (quota), then to
-- demand placement cannot serve in that shape (fragmentation). Each model-level amount is
-- spread over the model's nodes in proportion to their idle GPU-hours net of slack (capped);
-- the node's own slack is added to fragmentation and the remainder is no_demand
with capacity as (
    select * from int_node_capacity_periods
),

intervals as (
    select * from int_pod_intervals
),

pending as (
    select * from int_pending_demand
),

barrier as (
    select * from int_gang_barrier_demand
),

slack as (
    select * from int_shared_device_slack
),

nodes as (
    select * from stg_nodes
),

runs as (
    select * from stg_runs
),

model_capacity as (
    select run_id, gpu_model, sum(gpus) as model_gpus
    from nodes
    where gpu_model is not null
    group by all
),

changes as (
    select i.run_id, n.gpu_model, i.start_s as time_s, i.gpus as held_delta, 0.0 as slack_delta,
        0.0 as barrier_delta, 0.0 as quota_delta, 0.0 as placement_delta
    from intervals as i
    inner join nodes as n using (run_id, node)
    union all
    select i.run_id, n.gpu_model, i.end_s, -i.gpus, 0.0, 0.0, 0.0, 0.0
    from intervals as i
    inner join nodes as n using (run_id, node)
    union all
    select run_id, gpu_model, start_s, 0.0, slack_gpus, 0.0, 0.0, 0.0 from slack
    union all
    select run_id, gpu_model, end_s, 0.0, -slack_gpus, 0.0, 0.0, 0.0 from slack
    union all
    select run_id, gpu_model, start_s, 0.0, 0.0, missing_gpus, 0.0, 0.0 from barrier
    union all
    select run_id, gpu_model, end_s, 0.0, 0.0, -missing_gpus, 0.0, 0.0 from barrier
    union all
    select run_id, gpu_model, start_s, 0.0, 0.0, 0.0,
        case when blocked_by = 'quota' then demand_gpus else 0.0 end,
        case when blocked_by = 'quota' then 0.0 else demand_gpus end
    from pending
    union all
    select run_id, gpu_model, end_s, 0.0, 0.0, 0.0,
        case when blocked_by = 'quota' then -demand_gpus else 0.0 end,
        case when blocked_by = 'quota' then 0.0 else -demand_gpus end
    from pending
    union all
    -- period boundaries (and the horizon) are change points, so no step spans two periods
    select r.run_id, mc.gpu_model, unnest(list_append(
        list_transform(
            range(0, cast(ceil(r.horizon_s / r.charge_period_s) as bigint)),
            lambda k: k * r.charge_period_s
        ),
        r.horizon_s
    )), 0.0, 0.0, 0.0, 0.0, 0.0
    from runs as r
    inner join model_capacity as mc using (run_id)
),

change_points as (
    select
        run_id, gpu_model, time_s,
        sum(held_delta) as held_delta,
        sum(slack_delta) as slack_delta,
        sum(barrier_delta) as barrier_delta,
        sum(quota_delta) as quota_delta,
        sum(placement_delta) as placement_delta
    from changes
    group by all
),

steps as (
    select
        run_id,
        gpu_model,
        time_s,
        lead(time_s) over (partition by run_id, gpu_model order by time_s) as next_time_s,
        -- requests are whole milli-GPUs: rounding drops the float noise of long running sums
        round(sum(held_delta) over w, 9) as held_gpus,
        round(sum(slack_delta) over w, 9) as slack_gpus,
        round(sum(barrier_delta) over w, 9) as barrier_gpus,
        round(sum(quota_delta) over w, 9) as quota_gpus,
        round(sum(placement_delta) over w, 9) as placement_gpus
    from change_points
    window w as (partition by run_id, gpu_model order by time_s
        rows between unbounded preceding and current row)
),

claimed as (
    select
        s.*,
        r.charge_period_s,
        r.horizon_s,
        greatest(mc.model_gpus - s.held_gpus - s.slack_gpus, 0) as usable_gpus
    from steps as s
    inner join runs as r using (run_id)
    inner join model_capacity as mc using (run_id, gpu_model)
    where s.next_time_s is not null and s.time_s < r.horizon_s
),

claimed_in_order as (
    select
        *,
        least(usable_gpus, greatest(barrier_gpus, 0)) as barrier_claim
    from claimed
),

claimed_by_quota as (
    select
        *,
        least(usable_gpus - barrier_claim, greatest(quota_gpus, 0)) as quota_claim
    from claimed_in_order
),

claimed_all as (
    select
        *,
        least(usable_gpus - barrier_claim - quota_claim, greatest(placement_gpus, 0)) as placement_claim
    from claimed_by_quota
),

model_causes as (
    select
        run_id,
        gpu_model,
        cast(floor(time_s / charge_period_s) as bigint) as period_index,
        sum(barrier_claim * (next_time_s - time_s) / 3600.0) as gang_barrier_gpu_hours,
        sum(quota_claim * (next_time_s - time_s) / 3600.0) as quota_gpu_hours,
        sum(placement_claim * (next_time_s - time_s) / 3600.0) as fragmentation_gpu_hours
    from claimed_all
    group by all
),

node_slack as (
    select run_id, node, period_index, sum(slack_gpus * (end_s - start_s) / 3600.0) as slack_gpu_hours
    from slack
    group by all
),

node_idle as (
    select
        c.run_id, c.node, c.gpu_model, c.period_index, c.period_start_s, c.period_end_s,
        c.idle_gpu_hours,
        least(coalesce(ns.slack_gpu_hours, 0), c.idle_gpu_hours) as slack_gpu_hours
    from capacity as c
    left join node_slack as ns using (run_id, node, period_index)
),

node_shares as (
    select
        n.*,
        n.idle_gpu_hours - n.slack_gpu_hours as rest_gpu_hours,
        sum(n.idle_gpu_hours - n.slack_gpu_hours) over (
            partition by n.run_id, n.gpu_model, n.period_index
        ) as model_rest_gpu_hours,
        coalesce(m.gang_barrier_gpu_hours, 0) as model_gang_barrier,
        coalesce(m.quota_gpu_hours, 0) as model_quota,
        coalesce(m.fragmentation_gpu_hours, 0) as model_fragmentation
    from node_idle as n
    left join model_causes as m using (run_id, gpu_model, period_index)
),

split_barrier as (
    select
        *,
        case when model_rest_gpu_hours > 0 then rest_gpu_hours / model_rest_gpu_hours else 0 end as share,
        least(rest_gpu_hours, model_gang_barrier * (
            case when model_rest_gpu_hours > 0 then rest_gpu_hours / model_rest_gpu_hours else 0 end
        )) as gang_barrier_gpu_hours
    from node_shares
),

split_quota as (
    select
        *,
        least(rest_gpu_hours - gang_barrier_gpu_hours, model_quota * share) as quota_gpu_hours
    from split_barrier
),

split_all as (
    select
        *,
        least(rest_gpu_hours - gang_barrier_gpu_hours - quota_gpu_hours, model_fragmentation * share)
            as placement_gpu_hours
    from split_quota
),

final as (
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'gang_barrier' as idle_reason, gang_barrier_gpu_hours as gpu_hours
    from split_all
    union all
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'quota', quota_gpu_hours
    from split_all
    union all
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'fragmentation', placement_gpu_hours + slack_gpu_hours
    from split_all
    union all
    -- the remainder, so that held + every cause = capacity for every node and period
    select run_id, node, gpu_model, period_index, period_start_s, period_end_s,
        'no_demand',
        greatest(rest_gpu_hours - gang_barrier_gpu_hours - quota_gpu_hours - placement_gpu_hours, 0)
    from split_all
)

select * from final

-- grain: one row per run × charge period × GPU model × priced resource × idle policy × recipient (a workload, a team, or the platform's `__idle__`)
-- THE chargeback rule (docs/cost-model.md §6): who carries the idle capacity of a cell, for each
-- idle policy. Costs are priced as the FOCUS rows are (unit price × quantity).
--   separate  nobody: all idle stays on the platform line (`__idle__`), i.e. showback;
--   window    per charge period × GPU model × resource, in proportion to each workload's cost of
--             that resource in the cell (by GPU-hours where it cost nothing); a cell nobody used
--             keeps its idle on `__idle__`. Teams pay only the idle of the periods and models
--             they used (OpenCost's weighted idle, never across windows);
--   node      the same per charge period × node (OpenCost's idle by node);
--   cause     by idle cause: quota idle to the teams that own the flavor's nominal quota, in
--             proportion to the quota they left unused in the period; gang_barrier idle to the
--             gangs waiting at the barrier on that model, by their missing GPU-hours;
--             shared_device_slack to the fractional tenants of that node and period, by their
--             GPU-hours; no_demand and capacity_shortfall to the platform (never to the
--             waiting team); fragmentation, scheduling_latency and CPU/memory idle as
--             `window` (who carries each cause is the registry's, pipeline/registry.py). A
--             cause without owners in the cell falls back to `window`, and a cell without
--             users to the platform.
-- gpu_model is the node's ('' for CPU-only nodes); workload_id is null when the recipient is a
-- team as a whole (quota owners) or the platform. Every other share names the workload whose
-- use (or wait) earned it, under every policy: allocation by label (fct_label_allocation) sums
-- these rows by the workloads' labels.
-- Sums are exact (xsum, models/macros.sql): a hash join hands rows on in an order that varies
-- between builds and threads, and floating-point addition is not associative (docs/performance.md).
-- The joins, windows and groups run on integer keys (a priced node resource, a GPU model × resource,
-- a node, a model, a workload: numbered below); the names are joined back once, to the result.
with lines as not materialized (
    select * from int_cost_lines
),

node_prices as (
    -- pkey: a priced resource of a node; ckey: a GPU model × resource (a `window` cell's key
    -- without its period); mkey: a GPU model; nkey: a node
    select
        *,
        coalesce(gpu_model, '') as model,
        row_number() over (order by run_id, node, resource) as pkey,
        dense_rank() over (order by run_id, coalesce(gpu_model, ''), resource) as ckey,
        dense_rank() over (order by run_id, coalesce(gpu_model, '')) as mkey,
        dense_rank() over (order by run_id, node) as nkey
    from int_node_prices
),

cells as (
    select distinct ckey, run_id, model as gpu_model, resource from node_prices
),

node_keys as (
    select distinct run_id, node, nkey from node_prices
),

model_keys as (
    select distinct run_id, model as gpu_model, mkey from node_prices
),

workloads as (
    -- wkey: a workload. A used line's workload is one of the run's (an unknown one would leave
    -- the `node` policy short and fail the chargeback_balances audit)
    select *, row_number() over (order by run_id, workload_id) as wkey
    from stg_workloads
),

barrier as (
    select * from int_gang_barrier_demand
    where blocked_by = 'gang_barrier'
),

usage as not materialized (
    select * from int_hourly_usage
),

queue_usage as not materialized (
    select * from int_queue_usage
),

admissions as not materialized (
    select * from int_admissions
),

holdings as not materialized (
    select * from int_pod_holdings
),

nodes as not materialized (
    select * from stg_nodes
),

events as not materialized (
    select * from stg_events
),

runs as not materialized (
    select * from stg_runs
),

used as (
    select l.period_index, p.pkey, p.ckey, w.wkey,
        xsum(l.quantity) as quantity, xsum(p.effective_unit_price * l.quantity) as cost
    from lines as l
    inner join node_prices as p using (run_id, node, resource)
    inner join workloads as w using (run_id, workload_id)
    where l.workload_id is not null
    group by l.period_index, p.pkey, p.ckey, w.wkey
),

idle as (
    -- an idle line is the only one of its run × period × node × resource × reason (int_cost_lines'
    -- grain), so each is a group of one row: its values rounded as xsum rounds a sum of one
    -- (xone, models/macros.sql), without a hash aggregate over 3.3 M groups at bench-1m
    select l.period_index, p.pkey, p.ckey, p.nkey, p.mkey, l.idle_reason,
        xone(l.quantity) as quantity, xone(p.effective_unit_price * l.quantity) as cost,
        xone(p.list_unit_price * l.quantity) as list_cost
    from lines as l
    inner join node_prices as p using (run_id, node, resource)
    where l.workload_id is null
),

-- window: per charge period × GPU model × resource -------------------------------------------
cell_users as (
    select period_index, ckey, wkey, xsum(quantity) as quantity, xsum(cost) as cost
    from used
    group by all
),

cell_totals as (
    -- a cell's usage, summed once per cell and joined to its users (a window over the cell's
    -- users would sort them)
    select period_index, ckey, xsum(quantity) as quantity, xsum(cost) as cost
    from cell_users
    group by all
),

cell_weights as (
    select
        u.*,
        -- by cost (OpenCost's weighted idle); by quantity where the cell's usage cost nothing
        case when t.cost > 0 then u.cost / t.cost else u.quantity / t.quantity end as weight
    from cell_users as u
    inner join cell_totals as t using (period_index, ckey)
),

cell_idle as (
    select period_index, ckey, idle_reason,
        xsum(quantity) as quantity, xsum(cost) as cost, xsum(list_cost) as list_cost
    from idle
    group by all
),

window_shares as (
    select i.period_index, i.ckey, u.wkey, i.quantity * u.weight as quantity, i.cost * u.weight as cost,
        i.list_cost * u.weight as list_cost
    from cell_idle as i
    inner join cell_weights as u using (period_index, ckey)
    where u.weight > 0
    union all
    select i.period_index, i.ckey, null, i.quantity, i.cost, i.list_cost
    from cell_idle as i
    where not exists (
        select 1 from cell_weights as u
        where u.period_index = i.period_index and u.ckey = i.ckey and u.weight > 0
    )
),

-- node: per charge period × node × resource ---------------------------------------------------
node_totals as (
    select period_index, pkey, xsum(quantity) as quantity, xsum(cost) as cost
    from used
    group by all
),

node_weights as (
    select
        u.*,
        case when t.cost > 0 then u.cost / t.cost else u.quantity / t.quantity end as weight
    from used as u
    inner join node_totals as t using (period_index, pkey)
),

node_idle as (
    select period_index, pkey, ckey,
        xsum(quantity) as quantity, xsum(cost) as cost, xsum(list_cost) as list_cost
    from idle
    group by all
),

node_shares as (
    select i.period_index, i.ckey, cast(null as varchar) as team, u.wkey,
        i.quantity * u.weight as quantity, i.cost * u.weight as cost, i.list_cost * u.weight as list_cost
    from node_idle as i
    inner join node_weights as u using (period_index, pkey)
    where u.weight > 0
    union all
    select i.period_index, i.ckey, '__idle__', null, i.quantity, i.cost, i.list_cost
    from node_idle as i
    where not exists (
        select 1 from node_weights as u
        where u.period_index = i.period_index and u.pkey = i.pkey and u.weight > 0
    )
),

-- cause: the owners of each cause -------------------------------------------------------------
slack_owners as (
    -- fractional tenants of a node in a period, by their fractional GPU-hours
    select u.period_index, n.nkey, w.wkey, xsum(u.gpu_hours) as weight
    from usage as u
    inner join workloads as w using (run_id, workload_id)
    inner join node_keys as n using (run_id, node)
    where u.gpus < 1
    group by all
),

barrier_owners as (
    -- the gangs waiting at the barrier on a model in a period, by their missing GPU-hours
    select
        k as period_index,
        m.mkey,
        w.wkey,
        xsum(b.missing_gpus * (least(b.end_s, (k + 1) * r.charge_period_s)
            - greatest(b.start_s, k * r.charge_period_s)) / 3600.0) as weight
    from barrier as b
    inner join runs as r using (run_id)
    inner join workloads as w using (run_id, workload_id)
    inner join model_keys as m on m.run_id = b.run_id and m.gpu_model = b.gpu_model,
        unnest(range(
            cast(floor(b.start_s / r.charge_period_s) as bigint),
            cast(ceil(b.end_s / r.charge_period_s) as bigint)
        )) as t(k)
    group by all
),

flavor_models as (
    -- the GPU model each Kueue flavor stands for: where its admitted pods ran (most GPU-hours)
    -- (ties between models go to the greater name: the same on any number of threads)
    select a.run_id, a.flavor, arg_max(n.gpu_model, (h.gpus * (h.end_s - h.hold_start_s), n.gpu_model)) as gpu_model
    from admissions as a
    inner join holdings as h using (run_id, workload_id, attempt)
    inner join nodes as n using (run_id, node)
    where a.flavor is not null and n.gpu_model is not null
    group by all
),

queue_tenants as (
    -- the teams whose workloads queue in a ClusterQueue, each an equal part of its quota
    select run_id, cluster_queue, tenant,
        1.0 / count(*) over (partition by run_id, cluster_queue) as part
    from (select distinct run_id, cluster_queue, tenant from events where cluster_queue is not null)
),

quota_owners as (
    -- the quota of a model's flavor that its owners left unused in the period
    select q.period_index, m.mkey, t.tenant as team, xsum(q.unused_nominal_gpu_hours * t.part) as weight
    from queue_usage as q
    inner join flavor_models as f using (run_id, flavor)
    inner join model_keys as m using (run_id, gpu_model)
    inner join queue_tenants as t using (run_id, cluster_queue)
    where q.unused_nominal_gpu_hours > 0
    group by all
),

owned as (
    select 'shared_device_slack' as idle_reason, i.period_index, i.pkey, i.ckey,
        cast(null as varchar) as team, o.wkey, o.weight / xsum(o.weight) over cell as weight
    from idle as i
    inner join slack_owners as o using (period_index, nkey)
    where i.idle_reason = 'shared_device_slack' and o.weight > 0
    window cell as (partition by i.period_index, i.pkey)
    union all
    select 'gang_barrier', i.period_index, i.pkey, i.ckey, null, o.wkey, o.weight / xsum(o.weight) over cell
    from idle as i
    inner join barrier_owners as o using (period_index, mkey)
    where i.idle_reason = 'gang_barrier' and o.weight > 0
    window cell as (partition by i.period_index, i.pkey)
    union all
    select 'quota', i.period_index, i.pkey, i.ckey, o.team, null, o.weight / xsum(o.weight) over cell
    from idle as i
    inner join quota_owners as o using (period_index, mkey)
    where i.idle_reason = 'quota' and o.weight > 0
    window cell as (partition by i.period_index, i.pkey)
),

owned_cells as (
    select distinct period_index, pkey, idle_reason from owned
),

cause_rest as (
    -- every other idle cause (and owned causes without owners there), cell by cell
    select i.period_index, i.ckey,
        xsum(i.quantity) as quantity, xsum(i.cost) as cost, xsum(i.list_cost) as list_cost
    from idle as i
    where not list_contains(platform_idle_causes(), i.idle_reason)
        and not exists (
            select 1 from owned_cells as o
            where o.period_index = i.period_index and o.pkey = i.pkey and o.idle_reason = i.idle_reason
        )
    group by all
),

cause_shares as (
    -- owned causes to their owners
    select o.period_index, o.ckey, o.team, o.wkey,
        i.quantity * o.weight as quantity, i.cost * o.weight as cost, i.list_cost * o.weight as list_cost
    from owned as o
    inner join idle as i using (period_index, pkey, idle_reason)
    union all
    -- the causes the registry charges to the platform (no demand, capacity shortfall)
    select period_index, ckey, '__idle__', null, quantity, cost, list_cost
    from idle
    where list_contains(platform_idle_causes(), idle_reason)
    union all
    -- the rest as `window`
    select r.period_index, r.ckey, null, u.wkey, r.quantity * u.weight, r.cost * u.weight, r.list_cost * u.weight
    from cause_rest as r
    inner join cell_weights as u using (period_index, ckey)
    where u.weight > 0
    union all
    select r.period_index, r.ckey, '__idle__', null, r.quantity, r.cost, r.list_cost
    from cause_rest as r
    where not exists (
        select 1 from cell_weights as u
        where u.period_index = r.period_index and u.ckey = r.ckey and u.weight > 0
    )
),

shares as (
    -- team: the recipient where no workload earned the share (the platform, a quota owner); a
    -- workload's shares go to its tenant (`window`: the platform if it has none)
    select period_index, ckey, 'separate' as idle_policy, '__idle__' as team, cast(null as bigint) as wkey,
        xsum(quantity) as idle_quantity, xsum(cost) as idle_cost, xsum(list_cost) as idle_list_cost
    from idle
    group by all
    union all
    select period_index, ckey, 'window', '__idle__', wkey, xsum(quantity), xsum(cost), xsum(list_cost)
    from window_shares
    group by all
    union all
    select period_index, ckey, 'node', team, wkey, xsum(quantity), xsum(cost), xsum(list_cost)
    from node_shares
    group by all
    union all
    select period_index, ckey, 'cause', team, wkey, xsum(quantity), xsum(cost), xsum(list_cost)
    from cause_shares
    group by all
),

final as (
    select c.run_id, s.period_index, c.gpu_model, c.resource, s.idle_policy,
        coalesce(w.tenant, s.team) as tenant, w.workload_id, s.idle_quantity, s.idle_cost, s.idle_list_cost
    from shares as s
    inner join cells as c using (ckey)
    left join workloads as w using (wkey)
)

select * from final

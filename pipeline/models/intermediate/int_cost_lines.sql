-- grain: one row per run × charge period × node × priced resource × workload × usage class × preemptor × borrowed × usage sub-class, plus idle lines per run × charge period × node × priced resource × idle reason
-- the quantities a FOCUS Usage row is made of, in the resource's unit, before pricing. A
-- workload's GPU-hours are split into the share above its ClusterQueue's nominal quota
-- (borrowed = true, int_hourly_usage.borrowed_share) and the rest; CPU and memory are never
-- borrowed GPU-hours. preemptor is set on lost_to_preemption lines only.
-- usage_subclass splits a productive GPU line by the workload's gpu_utilization (its mean
-- engine-active fraction, carried as active_fraction): `active` (quantity × fraction) and
-- `allocated_idle` (the rest: held, paid, engines idle), or one `unmeasured` line when the
-- utilisation is unknown. Every other line has no sub-class. The parts add up to the line.
with usage as (
    select * from int_hourly_usage
),

workloads as (
    select * from stg_workloads
),

idle_gpu as (
    select * from int_idle_by_cause
),

capacity as (
    select * from int_node_capacity_periods
),

node_prices as (
    select * from int_node_prices
),

allocated as (
    select
        run_id, period_index, period_start_s, period_end_s, node, workload_id, usage_class, preemptor,
        xsum(case when gpus > 0 then gpu_hours end) as gpu,
        xsum(case when gpus > 0 then gpu_hours * borrowed_share end) as gpu_borrowed,
        xsum(case when cpu_cores > 0 then cpu_core_hours end) as cpu,
        xsum(case when memory_gib > 0 then memory_gib_hours end) as memory
    from usage
    group by all
),

allocated_lines as (
    -- each workload's lines, made in one pass (no intermediate is read twice): a GPU line below
    -- its ClusterQueue's nominal quota and one above it (borrowed), a CPU line, a memory line,
    -- each where it is not empty; a productive GPU line is split by the workload's utilisation
    -- into `active` (quantity × fraction) and `allocated_idle` (the remainder, not
    -- quantity × (1 − fraction): the two parts add up to the line exactly), or is one
    -- `unmeasured` line when the utilisation is unknown
    select
        a.run_id, a.period_index, a.period_start_s, a.period_end_s, a.node, l.resource, a.workload_id,
        a.usage_class, cast(null as varchar) as idle_reason, a.preemptor, l.borrowed, l.quantity,
        l.usage_subclass, l.active_fraction
    from (
        select
            a.*,
            -- what borrowing leaves below 1e-12 GPU-hours is float noise
            case when a.gpu - coalesce(a.gpu_borrowed, 0) > (case when a.gpu_borrowed > 0 then 1e-12 else 0 end)
                then a.gpu - coalesce(a.gpu_borrowed, 0) end as gpu_own,
            case when a.gpu_borrowed > 1e-12 then a.gpu_borrowed end as gpu_lent,
            w.gpu_utilization as u
        from allocated as a
        left join workloads as w on a.usage_class = 'productive' and w.run_id = a.run_id
            and w.workload_id = a.workload_id
    ) as a,
    unnest(flatten(
        -- [(resource, borrowed, quantity)] of the non-empty lines, then the sub-class parts
        list_transform(
            list_filter([
                {'resource': 'gpu', 'borrowed': false, 'quantity': a.gpu_own},
                {'resource': 'gpu', 'borrowed': true, 'quantity': a.gpu_lent},
                {'resource': 'cpu', 'borrowed': false, 'quantity': case when a.cpu > 0 then a.cpu end},
                {'resource': 'memory', 'borrowed': false, 'quantity': case when a.memory > 0 then a.memory end}
            ], lambda x: x.quantity is not null),
            lambda x: case when x.resource = 'gpu' and a.usage_class = 'productive' then
                list_filter([
                    {'resource': x.resource, 'borrowed': x.borrowed, 'quantity': x.quantity,
                        'usage_subclass': 'unmeasured', 'active_fraction': cast(null as double),
                        'keep': a.u is null},
                    {'resource': x.resource, 'borrowed': x.borrowed, 'quantity': x.quantity * a.u,
                        'usage_subclass': 'active', 'active_fraction': a.u, 'keep': a.u > 0},
                    {'resource': x.resource, 'borrowed': x.borrowed, 'quantity': x.quantity - x.quantity * a.u,
                        'usage_subclass': 'allocated_idle', 'active_fraction': a.u, 'keep': a.u < 1}
                ], lambda y: y.keep)
            else
                [{'resource': x.resource, 'borrowed': x.borrowed, 'quantity': x.quantity,
                    'usage_subclass': cast(null as varchar), 'active_fraction': cast(null as double),
                    'keep': true}]
            end
        )
    )) as t(l)
),

idle_lines as (
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu' as resource,
        cast(null as varchar) as workload_id, 'idle' as usage_class, idle_reason,
        cast(null as varchar) as preemptor, false as borrowed, gpu_hours as quantity,
        cast(null as varchar) as usage_subclass, cast(null as double) as active_fraction
    from idle_gpu
    union all
    -- idle causes are a GPU notion: CPU and memory no pod requested are just unallocated
    select run_id, period_index, period_start_s, period_end_s, node, 'cpu', null, 'idle',
        'unallocated', null, false, idle_cpu_core_hours, null, null
    from capacity
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'memory', null, 'idle',
        'unallocated', null, false, idle_memory_gib_hours, null, null
    from capacity
),

final as (
    select l.*
    from allocated_lines as l
    inner join node_prices as p using (run_id, node, resource)
    union all
    -- a remainder below 1e-12 units is float noise, not idle capacity
    select l.*
    from idle_lines as l
    inner join node_prices as p using (run_id, node, resource)
    where l.quantity > 1e-12
)

select * from final

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

workloads as not materialized (
    select * from stg_workloads
),

idle_gpu as not materialized (
    select * from int_idle_by_cause
),

capacity as not materialized (
    select * from int_node_capacity_periods
),

node_prices as not materialized (
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

allocated_parts as (
    -- each workload's quantities per resource, GPUs split below its ClusterQueue's nominal quota
    -- and above it (borrowed)
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
),

gpu_parts as (
    select run_id, period_index, period_start_s, period_end_s, node, workload_id, usage_class, preemptor, u,
        false as borrowed, gpu_own as quantity
    from allocated_parts
    where gpu_own is not null
    union all
    select run_id, period_index, period_start_s, period_end_s, node, workload_id, usage_class, preemptor, u,
        true, gpu_lent
    from allocated_parts
    where gpu_lent is not null
),

allocated_lines as (
    -- each workload's lines, each where it is not empty: a GPU line below its ClusterQueue's
    -- nominal quota and one above it (borrowed), a CPU line, a memory line; a productive GPU
    -- line is split by the workload's utilisation into `active` (quantity × fraction) and
    -- `allocated_idle` (the remainder, not quantity × (1 − fraction): the two parts add up to
    -- the line exactly), or is one `unmeasured` line when the utilisation is unknown. (Plain
    -- filtered scans of the parts: a list of the lines built per row and unnested costs more.)
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu' as resource, workload_id,
        usage_class, cast(null as varchar) as idle_reason, preemptor, borrowed, quantity,
        cast(null as varchar) as usage_subclass, cast(null as double) as active_fraction
    from gpu_parts
    where usage_class <> 'productive'
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu', workload_id, usage_class, null,
        preemptor, borrowed, quantity, 'unmeasured', null
    from gpu_parts
    where usage_class = 'productive' and u is null
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu', workload_id, usage_class, null,
        preemptor, borrowed, quantity * u, 'active', u
    from gpu_parts
    where usage_class = 'productive' and u > 0
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu', workload_id, usage_class, null,
        preemptor, borrowed, quantity - quantity * u, 'allocated_idle', u
    from gpu_parts
    where usage_class = 'productive' and u < 1
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'cpu', workload_id, usage_class, null,
        preemptor, false, cpu, null, null
    from allocated_parts
    where cpu > 0
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'memory', workload_id, usage_class, null,
        preemptor, false, memory, null, null
    from allocated_parts
    where memory > 0
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

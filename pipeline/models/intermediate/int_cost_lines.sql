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
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu' as resource, workload_id,
        usage_class, cast(null as varchar) as idle_reason, preemptor, false as borrowed,
        gpu - coalesce(gpu_borrowed, 0) as quantity
    -- what borrowing leaves below 1e-12 GPU-hours is float noise
    from allocated where gpu - coalesce(gpu_borrowed, 0) > (case when gpu_borrowed > 0 then 1e-12 else 0 end)
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu', workload_id,
        usage_class, null, preemptor, true, gpu_borrowed
    from allocated where gpu_borrowed > 1e-12
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'cpu', workload_id,
        usage_class, null, preemptor, false, cpu
    from allocated where cpu > 0
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'memory', workload_id,
        usage_class, null, preemptor, false, memory
    from allocated where memory > 0
),

productive_gpu_lines as (
    -- the productive GPU lines with their workload's utilisation, read once for the three parts
    select l.*, w.gpu_utilization
    from allocated_lines as l
    left join workloads as w using (run_id, workload_id)
    where l.resource = 'gpu' and l.usage_class = 'productive'
),

subclassed_lines as (
    select l.*, cast(null as varchar) as usage_subclass, cast(null as double) as active_fraction
    from allocated_lines as l
    where not (l.resource = 'gpu' and l.usage_class = 'productive')
    union all
    select l.* exclude (gpu_utilization), 'unmeasured', null
    from productive_gpu_lines as l
    where l.gpu_utilization is null
    union all
    select l.* exclude (gpu_utilization) replace (l.quantity * l.gpu_utilization as quantity), 'active',
        l.gpu_utilization
    from productive_gpu_lines as l
    where l.gpu_utilization > 0
    union all
    -- the remainder, not quantity × (1 − fraction): the two parts add up to the line exactly
    select l.* exclude (gpu_utilization) replace (l.quantity - l.quantity * l.gpu_utilization as quantity),
        'allocated_idle', l.gpu_utilization
    from productive_gpu_lines as l
    where l.gpu_utilization < 1
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
    from subclassed_lines as l
    inner join node_prices as p using (run_id, node, resource)
    union all
    -- a remainder below 1e-12 units is float noise, not idle capacity
    select l.*
    from idle_lines as l
    inner join node_prices as p using (run_id, node, resource)
    where l.quantity > 1e-12
)

select * from final

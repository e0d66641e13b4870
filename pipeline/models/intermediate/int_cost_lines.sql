-- grain: one row per run × charge period × node × priced resource × workload × usage class × borrowed, plus idle lines per run × charge period × node × priced resource × idle reason
-- the quantities a FOCUS Usage row is made of, in the resource's unit, before pricing
with usage as (
    select * from int_hourly_usage
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
        run_id, period_index, period_start_s, period_end_s, node, workload_id, usage_class, borrowed,
        sum(gpu_hours) filter (where gpus > 0) as gpu,
        sum(cpu_core_hours) filter (where cpu_cores > 0) as cpu,
        sum(memory_gib_hours) filter (where memory_gib > 0) as memory
    from usage
    group by all
),

allocated_lines as (
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu' as resource, workload_id,
        usage_class, cast(null as varchar) as idle_reason, borrowed, gpu as quantity
    from allocated where gpu > 0
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'cpu', workload_id,
        usage_class, null, borrowed, cpu
    from allocated where cpu > 0
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'memory', workload_id,
        usage_class, null, borrowed, memory
    from allocated where memory > 0
),

idle_lines as (
    select run_id, period_index, period_start_s, period_end_s, node, 'gpu' as resource,
        cast(null as varchar) as workload_id, 'idle' as usage_class, idle_reason, false as borrowed,
        gpu_hours as quantity
    from idle_gpu
    union all
    -- idle causes are a GPU notion: CPU and memory no pod requested are just unallocated
    select run_id, period_index, period_start_s, period_end_s, node, 'cpu', null, 'idle',
        'unallocated', false, idle_cpu_core_hours
    from capacity
    union all
    select run_id, period_index, period_start_s, period_end_s, node, 'memory', null, 'idle',
        'unallocated', false, idle_memory_gib_hours
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

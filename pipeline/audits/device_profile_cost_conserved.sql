-- fct_device_profile_cost: per run, its workload rows add up to the DRA workloads' GPU-hours and their cost (to the cent), counted from the cost lines and node prices, not from the FOCUS records it reads
with profile_cost as (
    select run_id, sum(gpu_hours) as gpu_hours, sum(effective_cost) as effective_cost
    from fct_device_profile_cost
    where usage = 'workload'
    group by all
),

dra_lines as (
    select l.run_id, sum(l.quantity) as gpu_hours, sum(l.quantity * p.effective_unit_price) as effective_cost
    from int_cost_lines as l
    inner join int_node_prices as p using (run_id, node, resource)
    where l.resource = 'gpu' and l.workload_id is not null
        and exists (
            select 1 from stg_device_allocations as a
            where a.run_id = l.run_id and a.workload_id = l.workload_id and a.node = l.node and a.in_pod_gpus
        )
    group by all
),

final as (
    select run_id, c.gpu_hours as profile_gpu_hours, d.gpu_hours as dra_gpu_hours,
        c.effective_cost as profile_cost, d.effective_cost as dra_cost
    from profile_cost as c
    full join dra_lines as d using (run_id)
    where abs(coalesce(c.gpu_hours, 0) - coalesce(d.gpu_hours, 0)) > 1e-9 * greatest(1, coalesce(d.gpu_hours, 0))
        or abs(coalesce(c.effective_cost, 0) - coalesce(d.effective_cost, 0)) >= 0.005
)

select * from final

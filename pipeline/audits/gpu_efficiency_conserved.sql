-- fct_gpu_efficiency: active + allocated idle + unmeasured = allocated (GPU-hours and cost), and its allocated GPU-hours are every workload's productive GPU-hours
with efficiency as (
    select * from fct_gpu_efficiency
),

workloads as (
    select * from fct_workloads
),

per_row as (
    select run_id, tenant, kind, gpu_model, allocated_gpu_hours,
        active_gpu_hours + allocated_idle_gpu_hours + unmeasured_gpu_hours as parts
    from efficiency
    where abs(allocated_gpu_hours - (active_gpu_hours + allocated_idle_gpu_hours + unmeasured_gpu_hours))
            > 1e-9 * greatest(1, allocated_gpu_hours)
        or abs(allocated_cost - (active_cost + allocated_idle_cost + unmeasured_cost)) > 1e-9 * greatest(1, allocated_cost)
        or not (efficiency between 0 and 1)
),

per_run as (
    select e.run_id, null as tenant, null as kind, null as gpu_model, e.allocated, w.productive
    from (select run_id, sum(allocated_gpu_hours) as allocated from efficiency group by all) as e
    full join (select run_id, sum(gpu_hours_productive) as productive from workloads group by all) as w
        using (run_id)
    where abs(coalesce(e.allocated, 0) - coalesce(w.productive, 0)) > 1e-6 * greatest(1, coalesce(w.productive, 0))
),

final as (
    select * from per_row
    union all
    select * from per_run
)

select * from final

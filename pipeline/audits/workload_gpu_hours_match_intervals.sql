-- Σ held GPU-hours per workload in the cost records = Σ over its pod intervals
with records as (
    select * from focus_cost_records
    where x_Resource = 'gpu' and x_Workload is not null
),

intervals as (
    select * from fct_pod_intervals
),

from_records as (
    select x_RunId as run_id, x_Workload as workload_id, sum(PricingQuantity) as gpu_hours
    from records
    group by all
),

from_intervals as (
    select run_id, workload_id,
        sum(gpus * (epoch_us(end_ts) - epoch_us(start_ts)) / 3600e6) as gpu_hours
    from intervals
    where gpus > 0
    group by all
),

final as (
    select run_id, workload_id, r.gpu_hours as record_gpu_hours, i.gpu_hours as interval_gpu_hours
    from from_records as r
    full outer join from_intervals as i using (run_id, workload_id)
    -- timestamps are rounded to the microsecond: allow that much per interval end
    where abs(coalesce(r.gpu_hours, 0) - coalesce(i.gpu_hours, 0)) > 1e-6
)

select * from final

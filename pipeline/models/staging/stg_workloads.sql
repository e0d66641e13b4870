-- grain: one row per run × workload (pod group; workloads.parquet, WORKLOAD_SCHEMA)
with source as (
    select * from raw_workloads
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(workload_id as varchar) as workload_id,
        cast(submit_time_s as double) as submit_time_s,
        cast(duration_s as double) as duration_s,
        cast(pods as integer) as pods,
        cast(min_count as integer) as min_count,
        cast(gpus_per_pod as double) as gpus_per_pod,
        -- empty string and null both mean "any GPU model"
        nullif(cast(gpu_model as varchar), '') as gpu_model,
        -- requests in the price book's units: cores and GiB
        coalesce(cast(cpu_milli_per_pod as double), 0) / 1000.0 as cpu_cores_per_pod,
        coalesce(cast(memory_mib_per_pod as double), 0) / 1024.0 as memory_gib_per_pod,
        cast(tenant as varchar) as tenant,
        nullif(cast(queue as varchar), '') as queue,
        cast(priority as integer) as priority,
        cast(checkpoint_interval_s as double) as checkpoint_interval_s,
        coalesce(nullif(cast(kind as varchar), ''), 'batch') as kind,
        -- mean GPU engine-active fraction while running (0..1); null = not measured, never 0 or 1
        cast(gpu_utilization as double) as gpu_utilization,
        -- pod labels and annotations (keys sorted); null = none (a run before schema 1.4 too)
        cast(labels as map(varchar, varchar)) as labels
    from source
)

select * from final

-- grain: one row per run × ClusterQueue × flavor × resource (cluster_queues.parquet, QUEUE_SCHEMA)
with source as (
    select * from raw_cluster_queues
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(cluster_queue as varchar) as cluster_queue,
        cast(cohort as varchar) as cohort,
        cast(flavor as varchar) as flavor,
        cast(resource as varchar) as resource,
        -- Kueue names GPUs by their device-plugin resource (nvidia.com/gpu, amd.com/gpu, …)
        cast(resource as varchar) = 'gpu' or cast(resource as varchar) like '%/gpu' as is_gpu,
        cast(nominal_quota as double) as nominal_quota,
        cast(borrowing_limit as double) as borrowing_limit,
        cast(lending_limit as double) as lending_limit,
        cast(fair_sharing_weight as double) as fair_sharing_weight
    from source
)

select * from final

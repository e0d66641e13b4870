-- grain: one row per run × event-log row (events.parquet, EVENT_SCHEMA)
with source as (
    select * from raw_events
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(seq as bigint) as seq,
        cast(time_s as double) as time_s,
        cast(event as varchar) as event,
        cast(workload_id as varchar) as workload_id,
        cast(pod_index as integer) as pod_index,
        cast(node as varchar) as node,
        cast(gpus as double) as gpus,
        cast(gpu_model as varchar) as gpu_model,
        cast(tenant as varchar) as tenant,
        cast(queue as varchar) as queue,
        cast(cluster_queue as varchar) as cluster_queue,
        cast(priority as integer) as priority,
        cast(reason as varchar) as reason,
        cast(message as varchar) as message,
        cast(flavor as varchar) as flavor,
        cast(preemptor as varchar) as preemptor,
        cast(queue_position as integer) as queue_position,
        cast(queue_length as integer) as queue_length
    from source
)

select * from final

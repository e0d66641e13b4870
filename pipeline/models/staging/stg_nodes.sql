-- grain: one row per run × node (cluster.parquet, CLUSTER_SCHEMA)
with source as (
    select * from raw_nodes
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(node as varchar) as node,
        -- null on CPU-only nodes
        nullif(cast(gpu_model as varchar), '') as gpu_model,
        cast(gpus as integer) as gpus,
        -- capacity in the price book's units; 0 = the node does not model that resource
        coalesce(cast(cpu_milli as double), 0) / 1000.0 as cpu_cores,
        coalesce(cast(memory_mib as double), 0) / 1024.0 as memory_gib,
        cast(zone as varchar) as zone,
        cast(block as varchar) as block,
        cast(rack as varchar) as rack,
        cast(pricing_category as varchar) as pricing_category
    from source
)

select * from final

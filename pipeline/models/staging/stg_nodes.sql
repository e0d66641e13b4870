-- grain: one row per run × node (cluster.parquet, CLUSTER_SCHEMA)
with source as (
    select * from raw_nodes
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(node as varchar) as node,
        cast(gpu_model as varchar) as gpu_model,
        cast(gpus as integer) as gpus,
        cast(zone as varchar) as zone,
        cast(block as varchar) as block,
        cast(rack as varchar) as rack,
        cast(pricing_category as varchar) as pricing_category
    from source
)

select * from final

-- grain: one row per run × node
with nodes as (
    select * from stg_nodes
),

final as (
    select run_id, node, gpu_model, gpus, zone, block, rack, pricing_category, cpu_cores, memory_gib
    from nodes
)

select * from final

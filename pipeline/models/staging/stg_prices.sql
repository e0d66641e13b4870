-- grain: one row per run × priced resource × GPU model (the price book the run was built with)
with source as (
    select * from raw_prices
),

final as (
    select
        cast(run_id as varchar) as run_id,
        -- gpu: $ per GPU-hour; cpu: $ per core-hour; memory: $ per GiB-hour
        coalesce(cast(resource as varchar), 'gpu') as resource,
        -- null on a cpu/memory row: the default for nodes without a row of their own model
        cast(gpu_model as varchar) as gpu_model,
        cast(list_usd_per_gpu_hour as double) as list_unit_price,
        cast(contracted_usd_per_gpu_hour as double) as contracted_unit_price,
        cast(spot_usd_per_gpu_hour as double) as spot_unit_price
    from source
)

select * from final

-- grain: one row per run × GPU model (the price book the run was built with)
with source as (
    select * from raw_prices
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(gpu_model as varchar) as gpu_model,
        cast(list_usd_per_gpu_hour as double) as list_usd_per_gpu_hour,
        cast(contracted_usd_per_gpu_hour as double) as contracted_usd_per_gpu_hour,
        cast(spot_usd_per_gpu_hour as double) as spot_usd_per_gpu_hour
    from source
)

select * from final

-- grain: one row per run × device a DRA ResourceSlice publishes (devices.parquet, DEVICE_SCHEMA; none without --dra)
with source as (
    select * from raw_devices
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(node as varchar) as node,
        cast(driver as varchar) as driver,
        cast(pool as varchar) as pool,
        cast(device as varchar) as device,
        cast(gpu_unit as integer) as gpu_unit,
        cast(share_milli as integer) as share_milli,
        -- draws on a counter set without taking all of it: a MIG slice of its GPU
        cast(partition as boolean) as partition,
        cast(profile as varchar) as profile
    from source
)

select * from final

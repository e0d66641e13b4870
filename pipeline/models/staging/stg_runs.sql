-- grain: one row per run (run.json plus the build's charge period)
with source as (
    select * from raw_runs
),

final as (
    select
        cast(run_id as varchar) as run_id,
        cast(schema_version as varchar) as schema_version,
        cast(profile as varchar) as profile,
        cast(seed as bigint) as seed,
        cast(start_ts as timestamp) as start_ts,
        cast(horizon_s as double) as horizon_s,
        cast(charge_period_s as double) as charge_period_s
    from source
)

select * from final

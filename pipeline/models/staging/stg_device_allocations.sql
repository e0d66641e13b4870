-- grain: one row per run × pod placement × device it took (device_allocations.parquet, DEVICE_ALLOCATION_SCHEMA; none without --dra)
-- seq is the pod's reserved (or, when not reserved first, started) event row: it joins stg_events exactly
with source as (
    select * from raw_device_allocations
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
        cast(driver as varchar) as driver,
        cast(pool as varchar) as pool,
        cast(device as varchar) as device,
        cast(gpu_unit as integer) as gpu_unit,
        cast(share_milli as integer) as share_milli,
        cast(partition as boolean) as partition,
        cast(profile as varchar) as profile,
        -- ResourceClaimTemplate, ResourceClaim (a PodGroup's shared claim) or count (a plain GPU count)
        cast(claim_kind as varchar) as claim_kind,
        cast(claim as varchar) as claim,
        cast(request as varchar) as request,
        cast(allocated_by_pod as integer) as allocated_by_pod,
        -- false on a shared claim's other pods: the allocating pod's gpus carry the device's share
        cast(in_pod_gpus as boolean) as in_pod_gpus
    from source
)

select * from final

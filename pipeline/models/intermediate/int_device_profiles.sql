-- grain: one row per run × workload × node its pods took DRA devices on (whose share is in their gpus)
-- device_profile names what the workload's GPU-hours on that node are made of: a partition's
-- profile attribute (a MIG slice: `1g.10gb`; `partition` when it has none), `whole` (whole GPUs),
-- `capacity` (a share of a device by consumable capacity), or `mixed` when its pods there took
-- devices of more than one of these. gpu_share: the share of its GPU one device stands for, when
-- every such device has the same (null for `mixed` or unequal shares).
with allocations as (
    select * from stg_device_allocations
    where in_pod_gpus
),

labelled as (
    select
        run_id,
        workload_id,
        node,
        share_milli,
        case
            when partition then coalesce(profile, 'partition')
            when share_milli >= 1000 then 'whole'
            else 'capacity'
        end as label
    from allocations
),

final as (
    select
        run_id,
        workload_id,
        node,
        case when count(distinct label) = 1 then any_value(label) else 'mixed' end as device_profile,
        case when count(distinct label) = 1 and count(distinct share_milli) = 1
            then any_value(share_milli) / 1000 end as gpu_share,
        count(*) as device_allocations
    from labelled
    group by all
)

select * from final

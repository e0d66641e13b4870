-- grain: one row per run × workload × GPU model of the cluster that the workload accepts
-- gpu_model null = any model of the cluster; "A|B" = either
with workloads as (
    select * from stg_workloads
),

nodes as not materialized (
    select * from stg_nodes
),

cluster_models as (
    select distinct run_id, gpu_model from nodes where gpu_model is not null
),

final as (
    select w.run_id, w.workload_id, m.gpu_model
    from workloads as w
    inner join cluster_models as m
        on m.run_id = w.run_id
        and (
            w.gpu_model is null
            or list_contains(list_transform(string_split(w.gpu_model, '|'), lambda x: trim(x)), m.gpu_model)
        )
)

select * from final

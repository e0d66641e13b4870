-- grain: one row per run × workload × charge period × GPU model with GPU-hours demanded while pending there (int_pending_demand_capped: capped by what the cluster could have run)
-- The periods behind fct_workloads.pending_demand_gpu_hours, so a window (a phase, dates) sums
-- the periods inside it rather than pro-rating each workload's whole wait. list_value: those
-- GPU-hours at the model's list price. Demand, not spend: nobody paid it.
with capped as (
    select * from int_pending_demand_capped
),

runs as not materialized (
    select * from stg_runs
),

final as (
    select
        c.run_id,
        c.workload_id,
        c.tenant,
        ts_at(r.start_ts, c.period_index * r.charge_period_s) as charge_period_start,
        c.gpu_model,
        c.gpu_hours,
        c.list_value
    from capped as c
    inner join runs as r using (run_id)
)

select * from final

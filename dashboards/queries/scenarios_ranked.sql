-- title: Scenarios ranked by cost
-- question: Which run (a sweep's scenario, or a profile) costs least, and where does each lose GPU-hours: idle by cause, partial placement, preemption, and how long do workloads wait?
WITH usage AS (
    SELECT run_id,
           sum(effective_cost) AS cost,
           sum(effective_cost) FILTER (WHERE usage_class IN ('idle', 'gang_wait', 'lost_to_preemption')) AS waste_cost,
           sum(gpu_hours) FILTER (WHERE resource = 'gpu' AND idle_reason = 'fragmentation') AS idle_fragmentation_h,
           sum(gpu_hours) FILTER (WHERE resource = 'gpu' AND idle_reason = 'quota') AS idle_quota_h,
           sum(gpu_hours) FILTER (WHERE resource = 'gpu' AND idle_reason = 'gang_barrier') AS idle_gang_barrier_h,
           sum(gpu_hours) FILTER (WHERE resource = 'gpu' AND idle_reason = 'no_demand') AS idle_no_demand_h,
           sum(gpu_hours) FILTER (WHERE resource = 'gpu' AND usage_class = 'gang_wait') AS partial_placement_h,
           sum(gpu_hours) FILTER (WHERE resource = 'gpu' AND usage_class = 'lost_to_preemption') AS lost_h
    FROM fct_usage_hourly
    GROUP BY run_id
),
waits AS (
    SELECT run_id, quantile_cont(wait_s, 0.95) / 3600 AS p95_wait_h,
           count(*) FILTER (WHERE final_state = 'finished') AS finished
    FROM fct_workloads
    WHERE final_state <> 'rejected'
    GROUP BY run_id
)
SELECT rank() OVER (ORDER BY u.cost) AS rank, r.run_id, r.profile,
       round(u.cost, 2) AS cost,
       round(u.cost - first_value(u.cost) OVER (ORDER BY u.cost), 2) AS above_cheapest,
       round(u.waste_cost, 2) AS waste_cost,
       round(coalesce(u.idle_fragmentation_h, 0), 1) AS idle_fragmentation_h,
       round(coalesce(u.idle_quota_h, 0), 1) AS idle_quota_h,
       round(coalesce(u.idle_gang_barrier_h, 0), 1) AS idle_gang_barrier_h,
       round(coalesce(u.idle_no_demand_h, 0), 1) AS idle_no_demand_h,
       round(coalesce(u.partial_placement_h, 0), 1) AS partial_placement_h,
       round(coalesce(u.lost_h, 0), 1) AS lost_to_preemption_h,
       round(w.p95_wait_h, 2) AS p95_wait_h, w.finished
FROM dim_runs r
JOIN usage u USING (run_id)
LEFT JOIN waits w USING (run_id)
ORDER BY rank, r.run_id

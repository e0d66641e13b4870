-- title: GPU-hours demanded while pending, per team
-- question: How many GPU-hours did each team's workloads demand while they waited to run (for quota, for placement, or not yet tried), capped by what the cluster could have run, and what are they worth at list price? Demand, not spend; demand that can never run is in unservable_demand.
SELECT run_id, tenant AS team,
       count(*) FILTER (WHERE pending_demand_gpu_hours > 0) AS workloads_that_waited,
       round(sum(pending_demand_gpu_hours), 1) AS pending_demand_gpu_hours,
       round(sum(pending_demand_list_value), 2) AS pending_demand_list_value,
       round(median(wait_s) FILTER (WHERE pending_demand_gpu_hours > 0) / 3600, 2) AS median_wait_h
FROM fct_workloads
WHERE outcome <> 'unservable'
GROUP BY ALL
ORDER BY run_id, pending_demand_list_value DESC

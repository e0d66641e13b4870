-- title: Ten costliest workloads per run
-- question: Which workloads cost the most?
SELECT run_id, workload_id, team, kind, effective_cost, gpu_hours
FROM (
    SELECT r.x_RunId AS run_id, r.x_Workload AS workload_id, any_value(r.x_Tenant) AS team,
           any_value(w.kind) AS kind,
           round(sum(r.EffectiveCost), 2) AS effective_cost,
           round(sum(r.ConsumedQuantity) FILTER (WHERE r.x_Resource = 'gpu'), 1) AS gpu_hours,
           row_number() OVER (PARTITION BY r.x_RunId ORDER BY sum(r.EffectiveCost) DESC) AS rank
    FROM focus_cost_records r
    LEFT JOIN fct_workloads w ON w.run_id = r.x_RunId AND w.workload_id = r.x_Workload
    WHERE r.ChargeCategory = 'Usage' AND r.x_Workload IS NOT NULL
    GROUP BY r.x_RunId, r.x_Workload
)
WHERE rank <= 10
ORDER BY run_id, effective_cost DESC

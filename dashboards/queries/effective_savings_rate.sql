-- title: Effective savings rate
-- question: How far below list price did the capacity paid for cost? FinOps' effective savings rate, (ListCost − EffectiveCost) ÷ ListCost over every Usage row (idle included, so where pods landed does not move it), per run and phase, with the cost of committed capacity left unused (part of the effective cost): fct_unit_economics' effective_savings_rate, which has it per month beside the commitment savings rate.
SELECT run_id, phase,
       round(sum(list_cost), 2) AS list_cost,
       round(sum(effective_cost), 2) AS effective_cost,
       round(coalesce(sum(effective_cost) FILTER (
           WHERE usage_class = 'idle' AND pricing_category = 'Committed'), 0), 2) AS unused_commitment_cost,
       round(100 * (sum(list_cost) - sum(effective_cost)) / nullif(sum(list_cost), 0), 1)
           AS effective_savings_rate_pct
FROM fct_usage_hourly
GROUP BY run_id, phase
ORDER BY run_id, CASE phase WHEN 'warmup' THEN 0 WHEN 'steady' THEN 1 ELSE 2 END

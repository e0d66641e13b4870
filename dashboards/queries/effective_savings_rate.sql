-- title: Effective savings rate
-- question: How much below list price did the capacity that was used cost, once committed capacity left unused is counted as a loss? (list cost of the used capacity − its effective cost − the cost of idle Committed capacity) ÷ that list cost, per run and phase: fct_unit_economics' effective_savings_rate, which has it per month.
SELECT run_id, phase,
       round(sum(list_cost) FILTER (WHERE usage_class <> 'idle'), 2) AS used_list_cost,
       round(sum(effective_cost) FILTER (WHERE usage_class <> 'idle'), 2) AS used_effective_cost,
       round(coalesce(sum(effective_cost) FILTER (
           WHERE usage_class = 'idle' AND pricing_category = 'Committed'), 0), 2) AS unused_commitment_cost,
       round(100 * (sum(list_cost) FILTER (WHERE usage_class <> 'idle')
                    - sum(effective_cost) FILTER (WHERE usage_class <> 'idle')
                    - coalesce(sum(effective_cost) FILTER (
                        WHERE usage_class = 'idle' AND pricing_category = 'Committed'), 0))
             / nullif(sum(list_cost) FILTER (WHERE usage_class <> 'idle'), 0), 1)
           AS effective_savings_rate_pct
FROM fct_usage_hourly
GROUP BY run_id, phase
ORDER BY run_id, CASE phase WHEN 'warmup' THEN 0 WHEN 'steady' THEN 1 ELSE 2 END

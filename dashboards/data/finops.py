"""FinOps metrics read from the marts: unservable demand, avoidable and sunk idle, commitment
pools, the cost of waiting, checkpoint loss per eviction, cost per training run and the
effective savings rate. Every rule is the pipeline's (docs/cost-model.md); these only filter and
add up its columns."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.core import (
    _FOCUS_TENANT,
    _FOCUS_WHERE,
    _USAGE_WHERE,
    Filters,
    _df,
    _execute,
    table_columns,
)

# Workloads of these kinds are training runs (as fct_unit_economics counts them).
TRAINING_KINDS = ("training", "fine-tune")


def _empty(columns: list[str]) -> pd.DataFrame:
    return pd.DataFrame({column: [] for column in columns})


def unservable_demand(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Demand that can never run, per team and reason (fct_unservable_demand): workloads,
    the largest request (GPUs), GPU-hours asked (GPUs × duration) and waited in the run.
    Workloads submitted before the selection ends count: they wait through it."""
    columns = ["tenant", "reason", "workloads", "max_gpus", "asked_gpu_hours", "waited_gpu_hours"]
    if not table_columns(con, "fct_unservable_demand"):
        return _empty(columns)
    return _df(
        con,
        """
        SELECT u.tenant, u.reason, count(*) AS workloads, max(u.demand_gpus) AS max_gpus,
               sum(u.asked_gpu_hours) AS asked_gpu_hours, sum(u.waited_gpu_hours) AS waited_gpu_hours
        FROM fct_unservable_demand u
        WHERE u.run_id = $run_id
          AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], u.tenant))
          AND ($ts_to::TIMESTAMP IS NULL OR u.submit_ts < $ts_to::TIMESTAMP)
        GROUP BY ALL
        ORDER BY asked_gpu_hours DESC, u.tenant, u.reason
        """,
        filters.params(),
    )


def idle_by_payment(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Idle GPU capacity split by how it is paid: ``sunk`` on Committed nodes (paid whatever
    happens), ``avoidable`` on nodes paid by the hour (on-demand, spot). Per kind and cause:
    gpu_hours, effective_cost. No team filter: idle capacity belongs to no team."""
    columns = ["kind", "cause", "gpu_hours", "effective_cost"]
    if "pricing_category" not in table_columns(con, "fct_usage_hourly"):
        return _empty(columns)
    return _df(
        con,
        f"""
        SELECT CASE WHEN u.pricing_category = 'Committed' THEN 'sunk' ELSE 'avoidable' END AS kind,
               u.idle_reason AS cause,
               sum(u.gpu_hours) AS gpu_hours, sum(u.effective_cost) AS effective_cost
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE} AND u.usage_class = 'idle' AND u.resource = 'gpu'
        GROUP BY ALL
        HAVING sum(u.gpu_hours) > 0
        ORDER BY kind, effective_cost DESC, cause
        """,
        filters.params(),
    )


def commitment_pools(con: duckdb.DuckDBPyConnection, run_id: str) -> pd.DataFrame:
    """The run's commitment pools per billing month (fct_commitment_utilization): committed,
    used and unused hours, utilization, coverage and the on-demand hours they could have
    carried. Monthly, so the date and phase filters do not apply."""
    return _df(
        con,
        """
        SELECT billing_period_start, sku_id, nodes, gpu_model, resource, unit, committed_quantity,
               used_quantity, unused_quantity, commitment_cost, unused_cost, utilization,
               on_demand_quantity, coverage, coverable_on_demand_quantity, coverable_on_demand_cost
        FROM fct_commitment_utilization
        WHERE run_id = $run_id
        ORDER BY billing_period_start, resource, sku_id
        """,
        {"run_id": run_id},
    )


def savings(con: duckdb.DuckDBPyConnection, filters: Filters) -> dict[str, float]:
    """The effective savings rate of the selection on both of the FinOps Foundation's bases,
    over the capacity paid (every Usage record, idle included, so where pods landed does not
    move it; fct_unit_economics' rule): ``esr_over_list`` (ESROverList, (ListCost −
    EffectiveCost) ÷ ListCost: every discount) and ``esr_over_contract`` (ESROverContract,
    (ContractedCost − EffectiveCost) ÷ ContractedCost: the commitments' part beyond the
    negotiated rates), with their parts and the cost of committed capacity left unused (part of
    the effective cost). ``effective_savings_rate`` is the list basis."""
    row = _execute(
        con,
        f"""
        SELECT coalesce(sum(r.ListCost), 0),
               coalesce(sum(r.ContractedCost), 0),
               coalesce(sum(r.EffectiveCost), 0),
               coalesce(sum(r.EffectiveCost) FILTER (WHERE r.CommitmentDiscountStatus = 'Unused'), 0)
        FROM focus_cost_records r
        WHERE {_FOCUS_WHERE}
        """,
        filters.params(),
    ).fetchone()
    assert row is not None  # an aggregate always returns one row
    list_cost, contracted, effective, unused = (float(v) for v in row)
    over_list = (list_cost - effective) / list_cost if list_cost else 0.0
    over_contract = (contracted - effective) / contracted if contracted else 0.0
    return {"list_cost": list_cost, "contracted_cost": contracted, "effective_cost": effective,
            "unused_commitment_cost": unused, "effective_savings_rate": over_list,
            "esr_over_list": over_list, "esr_over_contract": over_contract}


def waiting_cost_by_team(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """GPU-hours demanded while pending per team: the charge periods of fct_pending_demand inside
    the window (what its workloads asked for while they waited to run, capped by the idle
    GPU-hours of each period and model), and their value at list price (demand, not spend).
    Columns: tenant, workloads (that waited in the window), pending_demand_gpu_hours,
    pending_demand_list_value, median_wait_h (of those workloads' whole waits)."""
    columns = ["tenant", "workloads", "pending_demand_gpu_hours", "pending_demand_list_value",
               "median_wait_h"]
    if "list_value" not in table_columns(con, "fct_pending_demand"):
        return _empty(columns)
    return _df(
        con,
        """
        WITH periods AS (
            SELECT p.workload_id, p.tenant, sum(p.gpu_hours) AS gpu_hours, sum(p.list_value) AS list_value
            FROM fct_pending_demand p
            WHERE p.run_id = $run_id
              AND ($ts_from::TIMESTAMP IS NULL OR p.charge_period_start >= $ts_from::TIMESTAMP)
              AND ($ts_to::TIMESTAMP IS NULL OR p.charge_period_start < $ts_to::TIMESTAMP)
              AND (len($gpu_models::VARCHAR[]) = 0 OR list_contains($gpu_models::VARCHAR[], p.gpu_model))
            GROUP BY p.workload_id, p.tenant
        )
        SELECT p.tenant, count(*) AS workloads, sum(p.gpu_hours) AS pending_demand_gpu_hours,
               sum(p.list_value) AS pending_demand_list_value, median(w.wait_s) / 3600.0 AS median_wait_h
        FROM periods p JOIN fct_workloads w ON w.run_id = $run_id AND w.workload_id = p.workload_id
        WHERE (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], p.tenant))
          AND p.gpu_hours > 0
        GROUP BY p.tenant
        ORDER BY pending_demand_list_value DESC, p.tenant
        """,
        filters.params(),
    )


def eviction_losses(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Checkpoint loss per eviction (fct_evictions), per victim team and whether another queue
    reclaimed the GPUs: evictions, lost GPU-hours and cost, and the mean per eviction.
    Columns: tenant, cause (reclaim, preemption, time-out), evictions, lost_gpu_hours,
    lost_cost, lost_cost_per_eviction."""
    columns = ["tenant", "cause", "evictions", "lost_gpu_hours", "lost_cost", "lost_cost_per_eviction"]
    if not table_columns(con, "fct_evictions"):
        return _empty(columns)
    return _df(
        con,
        """
        SELECT e.tenant,
               CASE WHEN e.end_event = 'timed_out' THEN 'time-out'
                    WHEN e.reclaim THEN 'reclaim' ELSE 'preemption' END AS cause,
               count(*) AS evictions, sum(e.lost_gpu_hours) AS lost_gpu_hours,
               sum(e.lost_cost) AS lost_cost, avg(e.lost_cost) AS lost_cost_per_eviction
        FROM fct_evictions e
        WHERE e.run_id = $run_id
          AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], e.tenant))
          AND ($ts_from::TIMESTAMP IS NULL OR e.evicted_ts >= $ts_from::TIMESTAMP)
          AND ($ts_to::TIMESTAMP IS NULL OR e.evicted_ts < $ts_to::TIMESTAMP)
        GROUP BY ALL
        ORDER BY lost_cost DESC, e.tenant, cause
        """,
        filters.params(),
    )


def training_run_costs(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Cost per training run (kinds training and fine-tune) over the selected window, by its
    outcome at the window's end: finished by then; failed (held GPUs and ended the run without
    finishing) when the window reaches the run's end; else unfinished (running or waiting). A
    run's cost is what its usage cost inside the window (the FOCUS records of its charge periods
    there) plus the idle it carries there: its share of the idle capacity of those charge
    periods and GPU models under the `window` policy (int_idle_shares, the chargeback's rule, so
    the total is part of the teams' charged cost). Columns: outcome, runs, usage_cost_per_run,
    idle_share_per_run, cost_per_run, total_cost."""
    columns = ["outcome", "runs", "usage_cost_per_run", "idle_share_per_run", "cost_per_run", "total_cost"]
    if "outcome" not in table_columns(con, "fct_workloads") or not table_columns(con, "int_idle_shares"):
        return _empty(columns)
    return _df(
        con,
        f"""
        WITH usage AS (
            SELECT r.x_Workload AS workload_id, sum(r.EffectiveCost) AS cost
            FROM focus_cost_records r
            WHERE {_FOCUS_WHERE} {_FOCUS_TENANT} AND r.x_Workload IS NOT NULL
            GROUP BY r.x_Workload
        ),
        idle_share AS (
            -- the idle each workload carries in the window's charge periods (policy window)
            SELECT s.workload_id, sum(s.idle_cost) AS cost
            FROM int_idle_shares s
            JOIN stg_runs g ON g.run_id = s.run_id
            WHERE s.run_id = $run_id AND s.idle_policy = 'window' AND s.workload_id IS NOT NULL
              AND ($ts_from::TIMESTAMP IS NULL
                   OR g.start_ts + to_microseconds(CAST(round(s.period_index * g.charge_period_s * 1e6) AS BIGINT))
                      >= $ts_from::TIMESTAMP)
              AND ($ts_to::TIMESTAMP IS NULL
                   OR g.start_ts + to_microseconds(CAST(round(s.period_index * g.charge_period_s * 1e6) AS BIGINT))
                      < $ts_to::TIMESTAMP)
              AND (len($gpu_models::VARCHAR[]) = 0 OR list_contains($gpu_models::VARCHAR[], s.gpu_model))
              AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], s.tenant))
            GROUP BY s.workload_id
        ),
        cost AS (
            SELECT workload_id, coalesce(u.cost, 0) AS usage_cost, coalesce(i.cost, 0) AS idle_share
            FROM usage u FULL JOIN idle_share i USING (workload_id)
        ),
        runs AS (
            -- finished: by the window's end; failed (held GPUs, never finished): known at the
            -- end of the run, so only for a window that reaches it
            SELECT CASE WHEN w.outcome = 'finished'
                             AND w.end_ts <= coalesce($ts_to::TIMESTAMP, d.end_ts) THEN 'finished'
                        WHEN w.outcome = 'failed'
                             AND coalesce($ts_to::TIMESTAMP, d.end_ts) >= d.end_ts THEN 'failed'
                        ELSE 'unfinished' END AS outcome,
                   c.usage_cost, c.idle_share
            FROM cost c
            JOIN fct_workloads w ON w.run_id = $run_id AND w.workload_id = c.workload_id
            JOIN dim_runs d ON d.run_id = w.run_id
            WHERE list_contains($kinds::VARCHAR[], w.kind)
        )
        SELECT outcome, count(*) AS runs, avg(usage_cost) AS usage_cost_per_run,
               avg(idle_share) AS idle_share_per_run, avg(usage_cost + idle_share) AS cost_per_run,
               sum(usage_cost + idle_share) AS total_cost
        FROM runs
        GROUP BY outcome
        ORDER BY CASE outcome WHEN 'finished' THEN 0 WHEN 'failed' THEN 1 ELSE 2 END
        """,
        {**filters.params(), "kinds": list(TRAINING_KINDS)},
    )

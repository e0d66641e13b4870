"""GPU efficiency read from the cost records: productive GPU-hours split into active and
allocated idle by each workload's measured engine-active fraction (docs/cost-model.md 3.5).
Unmeasured hours stay unmeasured: efficiency counts measured hours only and is None when none
are. These only filter and add up the pipeline's rows (the fct_gpu_efficiency rule)."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.core import _FOCUS_TENANT, _FOCUS_WHERE, Filters, _df, _execute, table_columns

EFFICIENCY_COLUMNS = ["tenant", "kind", "workloads", "allocated_gpu_hours", "active_gpu_hours",
                      "allocated_idle_gpu_hours", "unmeasured_gpu_hours", "efficiency", "allocated_idle_cost",
                      "unmeasured_cost"]


def _has_split(con: duckdb.DuckDBPyConnection) -> bool:
    """A database built before the split has no x_UsageSubClass: an empty state, not an error."""
    return "x_UsageSubClass" in table_columns(con, "focus_cost_records")


def gpu_efficiency(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Per team and workload kind: productive (allocated) GPU-hours, their active, allocated-idle
    and unmeasured parts, efficiency = active ÷ measured, the cost of allocated idle and of the
    unmeasured hours. Honours the date, phase, team and GPU model filters."""
    if not _has_split(con):
        return pd.DataFrame({column: [] for column in EFFICIENCY_COLUMNS})
    return _df(
        con,
        f"""
        SELECT r.x_Tenant AS tenant, w.kind, count(DISTINCT r.x_Workload) AS workloads,
               sum(r.PricingQuantity) AS allocated_gpu_hours,
               coalesce(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass = 'active'), 0) AS active_gpu_hours,
               coalesce(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass = 'allocated_idle'), 0)
                   AS allocated_idle_gpu_hours,
               coalesce(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass = 'unmeasured'), 0)
                   AS unmeasured_gpu_hours,
               sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass = 'active')
                   / nullif(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass <> 'unmeasured'), 0)
                   AS efficiency,
               coalesce(sum(r.EffectiveCost) FILTER (WHERE r.x_UsageSubClass = 'allocated_idle'), 0)
                   AS allocated_idle_cost,
               coalesce(sum(r.EffectiveCost) FILTER (WHERE r.x_UsageSubClass = 'unmeasured'), 0) AS unmeasured_cost
        FROM focus_cost_records r
        JOIN fct_workloads w ON w.run_id = r.x_RunId AND w.workload_id = r.x_Workload
        WHERE {_FOCUS_WHERE} {_FOCUS_TENANT}
          AND r.x_Resource = 'gpu' AND r.x_UsageClass = 'productive'
        GROUP BY ALL
        ORDER BY allocated_idle_cost DESC, tenant, w.kind
        """,
        filters.params(),
    )


def allocated_idle(con: duckdb.DuckDBPyConnection, filters: Filters) -> dict[str, float | None]:
    """The selection's GPU-hours held but idle inside allocations and their cost, beside the
    measured share: allocated_idle_gpu_hours, allocated_idle_cost, measured_gpu_hours,
    unmeasured_gpu_hours, efficiency (None when nothing is measured)."""
    empty: dict[str, float | None] = {"allocated_idle_gpu_hours": 0.0, "allocated_idle_cost": 0.0,
                                      "measured_gpu_hours": 0.0, "unmeasured_gpu_hours": 0.0, "efficiency": None}
    if not _has_split(con):
        return empty
    row = _execute(
        con,
        f"""
        SELECT coalesce(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass = 'allocated_idle'), 0),
               coalesce(sum(r.EffectiveCost) FILTER (WHERE r.x_UsageSubClass = 'allocated_idle'), 0),
               coalesce(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass IN ('active', 'allocated_idle')), 0),
               coalesce(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass = 'unmeasured'), 0),
               coalesce(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageSubClass = 'active'), 0)
        FROM focus_cost_records r
        WHERE {_FOCUS_WHERE} {_FOCUS_TENANT}
          AND r.x_Resource = 'gpu' AND r.x_UsageClass = 'productive'
        """,
        filters.params(),
    ).fetchone()
    assert row is not None  # an aggregate always returns one row
    idle_hours, idle_cost, measured, unmeasured, active = (float(v) for v in row)
    return {"allocated_idle_gpu_hours": idle_hours, "allocated_idle_cost": idle_cost,
            "measured_gpu_hours": measured, "unmeasured_gpu_hours": unmeasured,
            "efficiency": active / measured if measured else None}

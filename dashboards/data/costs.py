"""Teams and idle GPUs: showback / chargeback under an idle policy (read from the fct_chargeback
mart), idle by cause, where and when GPUs sat idle, fragmentation."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.core import (
    _FOCUS_WHERE,
    _USAGE_WHERE,
    IDLE_TENANT,
    Filters,
    _df,
    check_bucket,
    focus_gpu_rows,
)
from dashboards.errors import DashboardError

IDLE_POLICIES = ("separate", "window", "node", "cause")
# The chargeback's idle policy: the report's "Chargeback per team", the budgets' spend and the
# Teams page's default all use it, so a figure reads the same on every surface.
CHARGEBACK_POLICY = "window"
"""Who carries idle capacity: the rule lives in the pipeline (int_idle_shares, read through the
``fct_chargeback`` mart), never here. ``separate``: nobody, idle is the platform's line
(``__idle__``, showback); ``window``: the teams that used the GPU model in the charge period, in
proportion to their cost there (chargeback); ``node``: the same per node; ``cause``: each idle
cause to its owner (quota to the owners of the unused quota, the barrier to the waiting gang's
team, shared-device slack to the fractional tenants, no demand to the platform).
docs/cost-model.md §6."""

HEATMAP_LEVELS = ("rack", "node")


def _check_policy(idle_policy: str) -> str:
    if idle_policy not in IDLE_POLICIES:
        raise DashboardError(f"unknown idle policy {idle_policy!r}: use {', '.join(IDLE_POLICIES)}")
    return idle_policy


# The team filter applies after the rule shared idle, so a team's share does not change when
# other teams are hidden; fct_chargeback's gpu_model is the node's.
_CHARGEBACK_WHERE = """
    c.run_id = $run_id AND c.idle_policy = $policy
    AND ($ts_from::TIMESTAMP IS NULL OR c.charge_period_start >= $ts_from::TIMESTAMP)
    AND ($ts_to::TIMESTAMP IS NULL OR c.charge_period_start < $ts_to::TIMESTAMP)
    AND (len($gpu_models::VARCHAR[]) = 0 OR list_contains($gpu_models::VARCHAR[], c.gpu_model))
    AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], c.tenant))
"""


def _charged(reclaim: bool) -> str:
    """What a row is charged: usage and idle share, plus the reclaim moves when asked (a fixed
    fragment, never user text)."""
    return ("c.charged_cost + c.reclaim_adjustment_cost" if reclaim else "c.charged_cost")


def team_showback(
    con: duckdb.DuckDBPyConnection, filters: Filters, idle_policy: str = "separate",
    reclaim: bool = False,
) -> pd.DataFrame:
    """Per team (and ``__idle__``, the platform line): GPU-hours by class, usage cost (every
    resource), the idle it carries under ``idle_policy`` and what it is charged; with
    ``reclaim``, lost work of cross-queue preemptions is charged to the preemptor's team.

    Columns: tenant, gpu_hours, productive_gpu_hours, gang_wait_gpu_hours, lost_gpu_hours,
    usage_cost, list_cost, idle_share_gpu_hours, idle_share_cost, reclaim_adjustment_cost,
    charged_cost, share (of the selection's charged cost). The platform line is hidden when
    teams are selected.
    """
    return _df(
        con,
        f"""
        SELECT c.tenant,
               sum(c.gpu_hours) AS gpu_hours,
               sum(c.productive_gpu_hours) AS productive_gpu_hours,
               sum(c.gang_wait_gpu_hours) AS gang_wait_gpu_hours,
               sum(c.lost_gpu_hours) AS lost_gpu_hours,
               sum(c.usage_cost) AS usage_cost,
               sum(c.list_cost) AS list_cost,
               sum(c.idle_share_gpu_hours) AS idle_share_gpu_hours,
               sum(c.idle_share_cost) AS idle_share_cost,
               CASE WHEN $reclaim THEN sum(c.reclaim_adjustment_cost) ELSE 0.0 END
                   AS reclaim_adjustment_cost,
               sum({_charged(reclaim)}) AS charged_cost,
               sum({_charged(reclaim)}) / nullif(sum(sum({_charged(reclaim)})) OVER (), 0) AS share
        FROM fct_chargeback c
        WHERE {_CHARGEBACK_WHERE}
        GROUP BY c.tenant
        HAVING sum(abs(c.charged_cost)) + sum(abs(c.reclaim_adjustment_cost)) > 0
        ORDER BY c.tenant = $idle, charged_cost DESC, c.tenant
        """,
        {**filters.params(), "idle": IDLE_TENANT, "policy": _check_policy(idle_policy),
         "reclaim": bool(reclaim)},
    )


def team_cost_over_time(
    con: duckdb.DuckDBPyConnection, filters: Filters, bucket: str = "day",
    idle_policy: str = "separate", reclaim: bool = False,
) -> pd.DataFrame:
    """period_start, tenant, charged_cost, gpu_hours per ``bucket``, under the idle policy
    (gpu_hours: held plus carried idle)."""
    return _df(
        con,
        f"""
        SELECT date_trunc($bucket, c.charge_period_start) AS period_start, c.tenant,
               sum({_charged(reclaim)}) AS charged_cost,
               sum(c.gpu_hours) + sum(c.idle_share_gpu_hours) AS gpu_hours
        FROM fct_chargeback c
        WHERE {_CHARGEBACK_WHERE}
        GROUP BY ALL
        HAVING sum(abs(c.charged_cost)) + sum(abs(c.reclaim_adjustment_cost)) > 0
        ORDER BY period_start, c.tenant
        """,
        {**filters.params(), "bucket": check_bucket(bucket), "policy": _check_policy(idle_policy)},
    )


def idle_by_cause_over_time(
    con: duckdb.DuckDBPyConnection, filters: Filters, bucket: str = "hour"
) -> pd.DataFrame:
    """period_start, cause, gpu_hours, effective_cost: idle by reason, plus GPUs held by
    partially placed gangs (``gang_wait (partial placement)``). No team filter: idle capacity
    belongs to no team."""
    return _df(
        con,
        f"""
        SELECT date_trunc($bucket, u.charge_period_start) AS period_start,
               CASE WHEN u.usage_class = 'idle' THEN coalesce(u.idle_reason, 'unknown')
                    ELSE 'gang_wait (partial placement)' END AS cause,
               sum(u.gpu_hours) AS gpu_hours,
               sum(u.effective_cost) AS effective_cost
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE} AND u.usage_class IN ('idle', 'gang_wait')
        GROUP BY ALL
        ORDER BY period_start, cause
        """,
        {**filters.params(), "bucket": check_bucket(bucket)},
    )


def idle_heatmap(
    con: duckdb.DuckDBPyConnection, filters: Filters, level: str = "rack", bucket: str = "day",
    limit: int = 40,
) -> pd.DataFrame:
    """Idle share per rack (or node) and time bucket, for the ``limit`` idlest racks or nodes.

    Columns: place, period_start, capacity_gpu_hours, idle_gpu_hours, idle_pct,
    fragmentation_gpu_hours, places_total (how many racks or nodes there are in all).
    """
    if level not in HEATMAP_LEVELS:
        raise DashboardError(f"unknown heatmap level {level!r}: use {', '.join(HEATMAP_LEVELS)}")
    place = "r.x_Rack" if level == "rack" else "r.x_Node"  # a fixed column name, never user text
    gpu = focus_gpu_rows(con)
    return _df(
        con,
        f"""
        WITH cells AS (
            SELECT coalesce({place}, '(none)') AS place,
                   date_trunc($bucket, r.ChargePeriodStart) AS period_start,
                   -- PricingQuantity is the capacity on every row (idle consumes nothing)
                   sum(r.PricingQuantity) AS capacity_gpu_hours,
                   coalesce(sum(r.PricingQuantity) FILTER (WHERE r.x_UsageClass = 'idle'), 0)
                       AS idle_gpu_hours,
                   coalesce(sum(r.PricingQuantity) FILTER (
                       WHERE r.x_UsageClass = 'idle' AND r.x_IdleReason = 'fragmentation'), 0)
                       AS fragmentation_gpu_hours
            FROM focus_cost_records r
            WHERE {_FOCUS_WHERE} AND {gpu}
            GROUP BY ALL
        ),
        ranked AS (
            SELECT place, sum(idle_gpu_hours) AS idle_total,
                   row_number() OVER (ORDER BY sum(idle_gpu_hours) DESC, place) AS rank,
                   count(*) OVER () AS places_total
            FROM cells GROUP BY place
        )
        SELECT c.place, c.period_start, c.capacity_gpu_hours, c.idle_gpu_hours,
               c.idle_gpu_hours / nullif(c.capacity_gpu_hours, 0) AS idle_pct,
               c.fragmentation_gpu_hours, k.places_total
        FROM cells c JOIN ranked k USING (place)
        WHERE k.rank <= $limit
        ORDER BY k.rank, c.period_start
        """,
        {**filters.params(), "bucket": check_bucket(bucket), "limit": int(limit)},
    )


def fragmentation_by_model(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Per GPU model: capacity, idle and fragmentation GPU-hours and cost.

    Fragmentation: GPUs free on nodes where none of a waiting shape's pods fits, while its
    minimum would fit the model's free GPUs packed (docs/cost-model.md §3.1). Columns: gpu_model,
    capacity_gpu_hours, idle_gpu_hours, fragmentation_gpu_hours, fragmentation_cost,
    fragmentation_pct (of capacity), fragmentation_share_of_idle.
    """
    return _df(
        con,
        f"""
        SELECT u.gpu_model,
               sum(u.gpu_hours) AS capacity_gpu_hours,
               coalesce(sum(u.gpu_hours) FILTER (WHERE u.usage_class = 'idle'), 0)
                   AS idle_gpu_hours,
               coalesce(sum(u.gpu_hours) FILTER (WHERE u.idle_reason = 'fragmentation'), 0)
                   AS fragmentation_gpu_hours,
               coalesce(sum(u.effective_cost) FILTER (WHERE u.idle_reason = 'fragmentation'), 0)
                   AS fragmentation_cost,
               fragmentation_gpu_hours / nullif(capacity_gpu_hours, 0) AS fragmentation_pct,
               fragmentation_gpu_hours / nullif(idle_gpu_hours, 0) AS fragmentation_share_of_idle
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE}
        GROUP BY u.gpu_model
        ORDER BY fragmentation_gpu_hours DESC, u.gpu_model
        """,
        filters.params(),
    )

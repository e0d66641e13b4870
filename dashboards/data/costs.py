"""Teams and idle GPUs: showback / chargeback under an idle policy, idle by cause, where and when
GPUs sat idle, fragmentation."""

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
    usage_resource,
)
from dashboards.errors import DashboardError

IDLE_POLICIES = ("separate", "shared")
"""``separate``: idle capacity is its own line (``__idle__``), charged to nobody (showback).
``shared``: the idle cost of each priced resource (GPU, CPU, memory) is shared back to the teams
in proportion to their cost of that resource in the selection (chargeback; OpenCost's
"weighted" idle, the rule of the ``fct_showback`` mart, whose billing period is a month). Idle of
a resource nobody used stays on ``__idle__``: it is never dropped."""

HEATMAP_LEVELS = ("rack", "node")


def _check_policy(idle_policy: str) -> str:
    if idle_policy not in IDLE_POLICIES:
        raise DashboardError(f"unknown idle policy {idle_policy!r}: use {', '.join(IDLE_POLICIES)}")
    return idle_policy


def _chargeback(con: duckdb.DuckDBPyConnection) -> str:
    """CTEs ending in ``chargeback``: one row per team (or __idle__) × charge period ×
    resource with its usage and its idle share under the policy ($shared). The team filter is
    applied after sharing, so a team's share does not change when other teams are hidden."""
    resource = usage_resource(con)  # a column name or a literal, never user text
    return f"""
    WITH usage AS (
        SELECT u.charge_period_start, u.tenant, {resource} AS resource, u.usage_class,
               u.gpu_hours, u.effective_cost, u.list_cost
        FROM fct_usage_hourly u
        WHERE {_USAGE_WHERE}
    ),
    used AS (
        SELECT charge_period_start, tenant, resource,
               sum(gpu_hours) AS gpu_hours,
               coalesce(sum(gpu_hours) FILTER (WHERE usage_class = 'productive'), 0)
                   AS productive_gpu_hours,
               coalesce(sum(gpu_hours) FILTER (WHERE usage_class = 'gang_wait'), 0)
                   AS gang_wait_gpu_hours,
               coalesce(sum(gpu_hours) FILTER (WHERE usage_class = 'lost_to_preemption'), 0)
                   AS lost_gpu_hours,
               sum(effective_cost) AS usage_cost,
               sum(list_cost) AS list_cost,
               0.0 AS idle_share_gpu_hours, 0.0 AS idle_share_cost
        FROM usage
        WHERE usage_class <> 'idle' AND tenant IS DISTINCT FROM $idle
        GROUP BY ALL
    ),
    weights AS (
        -- each team's share of what the selection's users paid for the resource
        SELECT tenant, resource,
               sum(usage_cost) / sum(sum(usage_cost)) OVER (PARTITION BY resource) AS weight
        FROM used GROUP BY tenant, resource
        QUALIFY sum(sum(usage_cost)) OVER (PARTITION BY resource) > 0
    ),
    idle AS (
        SELECT charge_period_start, resource,
               sum(gpu_hours) AS idle_gpu_hours, sum(effective_cost) AS idle_cost
        FROM usage WHERE usage_class = 'idle'
        GROUP BY ALL
    ),
    shared AS (
        SELECT i.charge_period_start, w.tenant, i.resource,
               i.idle_gpu_hours * w.weight AS idle_share_gpu_hours,
               i.idle_cost * w.weight AS idle_share_cost
        FROM idle i JOIN weights w USING (resource)
        WHERE $shared
    ),
    unallocated AS (
        -- what no team carries: all idle when separate, idle of unused resources when shared
        SELECT i.charge_period_start, $idle AS tenant, i.resource,
               i.idle_gpu_hours AS idle_share_gpu_hours, i.idle_cost AS idle_share_cost
        FROM idle i
        WHERE NOT $shared OR i.resource NOT IN (SELECT resource FROM weights)
    ),
    chargeback AS (
        SELECT * FROM used
        UNION ALL BY NAME SELECT * FROM shared
        UNION ALL BY NAME SELECT * FROM unallocated
    )
"""


_TEAM_SELECTED = """
    (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], c.tenant))
"""


def team_showback(
    con: duckdb.DuckDBPyConnection, filters: Filters, idle_policy: str = "separate"
) -> pd.DataFrame:
    """Per team: GPU-hours by class, usage cost (every resource), the idle share and what the
    team is charged.

    Columns: tenant, gpu_hours, productive_gpu_hours, gang_wait_gpu_hours, lost_gpu_hours,
    usage_cost, list_cost, idle_share_gpu_hours, idle_share_cost, charged_cost, share (of the
    selection's charged cost). ``__idle__`` is a row of its own under ``separate`` (and under
    ``shared`` for idle that nobody could carry); it is hidden when teams are selected.
    """
    return _df(
        con,
        f"""
        {_chargeback(con)}
        SELECT c.tenant,
               coalesce(sum(c.gpu_hours), 0) AS gpu_hours,
               coalesce(sum(c.productive_gpu_hours), 0) AS productive_gpu_hours,
               coalesce(sum(c.gang_wait_gpu_hours), 0) AS gang_wait_gpu_hours,
               coalesce(sum(c.lost_gpu_hours), 0) AS lost_gpu_hours,
               coalesce(sum(c.usage_cost), 0) AS usage_cost,
               coalesce(sum(c.list_cost), 0) AS list_cost,
               coalesce(sum(c.idle_share_gpu_hours), 0) AS idle_share_gpu_hours,
               coalesce(sum(c.idle_share_cost), 0) AS idle_share_cost,
               coalesce(sum(c.usage_cost), 0) + coalesce(sum(c.idle_share_cost), 0)
                   AS charged_cost,
               (coalesce(sum(c.usage_cost), 0) + coalesce(sum(c.idle_share_cost), 0))
                   / nullif(sum(coalesce(sum(c.usage_cost), 0)
                                + coalesce(sum(c.idle_share_cost), 0)) OVER (), 0) AS share
        FROM chargeback c
        WHERE {_TEAM_SELECTED}
        GROUP BY c.tenant
        ORDER BY c.tenant = $idle, charged_cost DESC, c.tenant
        """,
        {**filters.params(), "idle": IDLE_TENANT, "shared": _check_policy(idle_policy) == "shared"},
    )


def team_cost_over_time(
    con: duckdb.DuckDBPyConnection, filters: Filters, bucket: str = "day",
    idle_policy: str = "separate",
) -> pd.DataFrame:
    """period_start, tenant, charged_cost, gpu_hours per ``bucket``, under the idle policy."""
    return _df(
        con,
        f"""
        {_chargeback(con)}
        SELECT date_trunc($bucket, c.charge_period_start) AS period_start, c.tenant,
               coalesce(sum(c.usage_cost), 0) + coalesce(sum(c.idle_share_cost), 0)
                   AS charged_cost,
               coalesce(sum(c.gpu_hours), 0) + coalesce(sum(c.idle_share_gpu_hours), 0)
                   AS gpu_hours
        FROM chargeback c
        WHERE {_TEAM_SELECTED}
        GROUP BY ALL
        ORDER BY period_start, c.tenant
        """,
        {**filters.params(), "idle": IDLE_TENANT, "bucket": check_bucket(bucket),
         "shared": _check_policy(idle_policy) == "shared"},
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
                   sum(r.ConsumedQuantity) AS capacity_gpu_hours,
                   coalesce(sum(r.ConsumedQuantity) FILTER (WHERE r.x_UsageClass = 'idle'), 0)
                       AS idle_gpu_hours,
                   coalesce(sum(r.ConsumedQuantity) FILTER (
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

    Fragmentation: GPUs free while a pending workload asked for that model and could not use
    them (docs/tables.md, "How idle GPU-hours are split"). Columns: gpu_model,
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

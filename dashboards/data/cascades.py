"""Preemption cascades (fct_preemption_cascades): the chains, who preempts whom, how deep.

A chain starts with a preemptor that was not recovering from a preemption of its own; a victim
that preempts in turn carries it one level deeper (docs/cost-model.md, "Preemption cascades").
The selection is the preempted pods of the run in the window whose victim is of a selected
team and accepts a selected GPU model (as the page's victims); a database built before the mart existed gives empty frames.
"""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.core import Filters, _df, table_columns

CHAIN_COLUMNS = ["chain_id", "origin", "origin_priority", "origin_kind", "origin_tenant", "preempted_pods",
                 "preempted_in_cascade", "victim_workloads", "depth", "first_preempted_at",
                 "lost_gpu_hours", "lost_cost"]
PAIR_COLUMNS = ["preemptor_priority", "victim_priority", "preempted_pods", "preempted_in_cascade",
                "lost_gpu_hours", "lost_cost"]
DEPTH_COLUMNS = ["depth", "preempted_pods", "chains", "lost_gpu_hours", "lost_cost"]

# fct_preemption_cascades (alias c) in the selection: the victim's team and GPU models
_CASCADES_WHERE = """
    c.run_id = $run_id
    AND ($ts_from::TIMESTAMP IS NULL OR c.preempted_at >= $ts_from::TIMESTAMP)
    AND ($ts_to::TIMESTAMP IS NULL OR c.preempted_at < $ts_to::TIMESTAMP)
    AND (len($tenants::VARCHAR[]) = 0 OR list_contains($tenants::VARCHAR[], c.victim_tenant))
    AND (len($gpu_models::VARCHAR[]) = 0 OR c.victim_workload_id IN (
        SELECT v.workload_id FROM fct_workloads v
        WHERE v.run_id = $run_id AND (coalesce(v.gpu_model, '') = ''
            OR len(list_intersect(string_split(v.gpu_model, '|'), $gpu_models::VARCHAR[])) > 0)))
"""


def has_cascades(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the database has fct_preemption_cascades (databases built before it do not)."""
    return {"chain_id", "depth", "root_workload_id", "lost_gpu_hours"} <= table_columns(
        con, "fct_preemption_cascades")


def preemption_chains(con: duckdb.DuckDBPyConnection, filters: Filters, top: int | None = None) -> pd.DataFrame:
    """One row per chain with a preempted pod in the selection, most GPU-hours lost first
    (``top``: only the first ones): its origin preemptor (its priority, kind and team), the
    pods preempted, those preempted in the cascade (depth > 1), the victim workloads, the
    deepest level, the first preemption, the GPU-hours and cost lost."""
    if not has_cascades(con):
        return pd.DataFrame({c: [] for c in CHAIN_COLUMNS})
    return _df(
        con,
        f"""
        SELECT c.chain_id, any_value(c.root_workload_id) AS origin,
               any_value(w.priority) AS origin_priority, any_value(w.kind) AS origin_kind,
               any_value(w.tenant) AS origin_tenant,
               count(*) AS preempted_pods,
               count(*) FILTER (WHERE c.depth > 1) AS preempted_in_cascade,
               count(DISTINCT c.victim_workload_id) AS victim_workloads,
               max(c.depth) AS depth, min(c.preempted_at) AS first_preempted_at,
               sum(c.lost_gpu_hours) AS lost_gpu_hours, sum(c.lost_cost) AS lost_cost
        FROM fct_preemption_cascades c
        LEFT JOIN fct_workloads w ON w.run_id = c.run_id AND w.workload_id = c.root_workload_id
        WHERE {_CASCADES_WHERE}
        GROUP BY c.chain_id
        ORDER BY lost_gpu_hours DESC, preempted_pods DESC, c.chain_id
        LIMIT $top
        """,
        {**filters.params(), "top": top},
    )


def preemption_pairs(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Who preempts whom: one row per preemptor priority × victim priority in the selection,
    with the pods preempted, those in a cascade, the GPU-hours and cost lost."""
    if not has_cascades(con):
        return pd.DataFrame({c: [] for c in PAIR_COLUMNS})
    return _df(
        con,
        f"""
        SELECT c.preemptor_priority, c.victim_priority, count(*) AS preempted_pods,
               count(*) FILTER (WHERE c.depth > 1) AS preempted_in_cascade,
               sum(c.lost_gpu_hours) AS lost_gpu_hours, sum(c.lost_cost) AS lost_cost
        FROM fct_preemption_cascades c
        WHERE {_CASCADES_WHERE}
        GROUP BY ALL
        ORDER BY c.preemptor_priority DESC, c.victim_priority DESC
        """,
        filters.params(),
    )


def preemption_depths(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """How deep the cascades go: one row per depth with pods preempted in the selection (1 =
    by a preemptor not recovering from a preemption), the chains reaching it there, the
    GPU-hours and cost lost."""
    if not has_cascades(con):
        return pd.DataFrame({c: [] for c in DEPTH_COLUMNS})
    return _df(
        con,
        f"""
        SELECT c.depth, count(*) AS preempted_pods, count(DISTINCT c.chain_id) AS chains,
               sum(c.lost_gpu_hours) AS lost_gpu_hours, sum(c.lost_cost) AS lost_cost
        FROM fct_preemption_cascades c
        WHERE {_CASCADES_WHERE}
        GROUP BY c.depth
        ORDER BY c.depth
        """,
        filters.params(),
    )

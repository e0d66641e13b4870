"""The batch report's section on preemption cascades: the three costliest chains, named in
its note (dashboards/data/cascades.py; docs/cost-model.md, "Preemption cascades")."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards import cascade_charts, data
from dashboards.report_render import Section

COSTLIEST = 3
RULE = ("A chain starts with a preemptor that was not recovering from a preemption of its own; a "
        "victim that preempts in turn carries it one level deeper. Lost: each preempted pod's work "
        "since its group's last checkpoint.")


def costliest_chains_section(con: duckdb.DuckDBPyConnection, filters: data.Filters) -> Section:
    """The ``COSTLIEST`` chains that lost the most GPU-hours in the selection, as a table, a
    chart and a note that names them."""
    chains = data.preemption_chains(con, filters, top=COSTLIEST)
    return Section("costliest_chains", "Costliest preemption chains", chains_note(chains), chains,
                   cascade_charts.chains_chart)


def _priority(value: object) -> str:
    return "priority unknown" if pd.isna(value) else f"priority {int(str(value))}"


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def chains_note(chains: pd.DataFrame) -> str:
    """The rule, then each chain in words: its origin, pods preempted (in the cascade), depth,
    GPU-hours and cost lost."""
    if chains.empty:
        return f"{RULE} No pod was preempted in the selection."
    named = "; ".join(
        f"chain {row.chain_id}, started by {row.origin} ({_priority(row.origin_priority)}): "
        f"{_count(int(row.preempted_pods), 'pod')} preempted ({int(row.preempted_in_cascade):,} in the cascade), "
        f"{_count(int(row.depth), 'level')} deep, "
        f"{float(row.lost_gpu_hours):,.1f} GPU-hours lost (${float(row.lost_cost):,.2f})"
        for row in chains.itertuples(index=False))
    which = "The costliest" if len(chains) == 1 else f"The {len(chains)} costliest"
    return f"{RULE} {which}: {named}."

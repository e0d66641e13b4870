"""A deliberately tiny model runner: an explicit ordered list of SQL models, run in DuckDB.

Each model is one file under `pipeline/models/<layer>/<name>.sql` with a `-- grain:` comment on
top. Staging models are views (renames and casts only); the rest are tables, rebuilt for every
run in the database on each build.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb

from pipeline.registry import registry_macros
from pipeline.waterfall import render

MODELS_DIR = Path(__file__).parent / "models"
AUDITS_DIR = Path(__file__).parent / "audits"


@dataclass(frozen=True)
class Model:
    name: str
    layer: str  # staging | intermediate | marts

    @property
    def path(self) -> Path:
        return MODELS_DIR / self.layer / f"{self.name}.sql"

    @property
    def materialization(self) -> str:
        return "view" if self.layer == "staging" else "table"

    def sql(self) -> str:
        return render(self.path.read_text())

    def dependencies(self) -> set[str]:
        """The models and raw tables the SQL reads (`from x` / `join x`; CTE names left out)."""
        named = set(re.findall(r"\b(?:from|join)\s+([a-z_][a-z0-9_]*)", self.sql()))
        known = {model.name for model in MODELS}
        return {name for name in named if name in known or name.startswith("raw_")}

    def grain(self) -> str:
        """The text of the `-- grain:` comment at the top of the file."""
        for line in self.sql().splitlines():
            if line.startswith("-- grain:"):
                return line.removeprefix("-- grain:").strip()
        return ""


# Dependency order, written down rather than inferred: the list is short and reads like the DAG.
MODELS: tuple[Model, ...] = (
    Model("stg_runs", "staging"),
    Model("stg_events", "staging"),
    Model("stg_workloads", "staging"),
    Model("stg_nodes", "staging"),
    Model("stg_prices", "staging"),
    Model("stg_cluster_queues", "staging"),
    Model("stg_devices", "staging"),
    Model("stg_device_allocations", "staging"),
    Model("int_run_phases", "intermediate"),
    Model("int_pod_holdings", "intermediate"),
    Model("int_admissions", "intermediate"),
    Model("int_queue_usage", "intermediate"),
    Model("int_gang_progress", "intermediate"),
    Model("int_pod_intervals", "intermediate"),
    Model("int_hourly_usage", "intermediate"),
    Model("int_node_capacity_periods", "intermediate"),
    Model("int_workload_gpu_models", "intermediate"),
    Model("int_unservable_workloads", "intermediate"),
    Model("int_pending_demand", "intermediate"),
    Model("int_pending_demand_capped", "intermediate"),
    Model("int_gang_barrier_demand", "intermediate"),
    Model("int_shared_device_slack", "intermediate"),
    Model("int_shape_fit", "intermediate"),
    Model("int_idle_by_cause", "intermediate"),
    Model("int_node_prices", "intermediate"),
    Model("int_cost_lines", "intermediate"),
    Model("int_device_profiles", "intermediate"),
    Model("int_commitments", "intermediate"),
    Model("int_idle_shares", "intermediate"),
    Model("int_preemptions", "intermediate"),
    Model("int_preemption_chains", "intermediate"),
    Model("dim_runs", "marts"),
    Model("dim_nodes", "marts"),
    Model("fct_pod_intervals", "marts"),
    Model("fct_workload_timeline", "marts"),
    Model("focus_cost_records", "marts"),
    Model("fct_usage_hourly", "marts"),
    Model("fct_workloads", "marts"),
    Model("fct_unservable_demand", "marts"),
    Model("fct_pending_demand", "marts"),
    Model("fct_evictions", "marts"),
    Model("fct_preemption_cascades", "marts"),
    Model("fct_queue_usage", "marts"),
    Model("fct_chargeback", "marts"),
    Model("fct_showback", "marts"),
    Model("fct_label_allocation", "marts"),
    Model("fct_commitment_utilization", "marts"),
    Model("fct_unit_economics", "marts"),
    Model("fct_gpu_efficiency", "marts"),
    Model("fct_device_profile_cost", "marts"),
    Model("fct_rightsizing_hints", "marts"),
)


def create_macros(con: duckdb.DuckDBPyConnection, focus_split: bool = False) -> None:
    """Temporary macros the models use (never stored in the database file).

    `focus_split()` tells the FOCUS model which layout this build writes (1.2 rows, or 1.3
    split cost allocation).
    """
    con.execute((MODELS_DIR / "macros.sql").read_text())
    con.execute(registry_macros())
    con.execute(f"create or replace temp macro focus_split() as {'true' if focus_split else 'false'}")


def run_model(
    con: duckdb.DuckDBPyConnection,
    model: Model,
    columns: list[str] | None = None,
    virtual: dict[str, str] | None = None,
) -> None:
    """Materialize `model`; `columns` keeps only those output columns, in that order.

    `virtual` (column -> SQL over the table's stored columns: a literal, or an expression) are
    stored as virtual generated columns: the table reads them like any other, but no row
    carries them.
    """
    body = model.sql()
    if columns is not None:
        projection = ", ".join(f'"{name}"' for name in columns)
        body = f"select {projection} from (\n{body}\n)"
    _materialize(con, model, body, virtual, columns)


def _materialize(
    con: duckdb.DuckDBPyConnection,
    model: Model,
    body: str,
    virtual: dict[str, str] | None,
    columns: list[str] | None,
) -> None:
    kept = {name: sql for name, sql in (virtual or {}).items() if columns is None or name in columns}
    if not kept or model.materialization != "table":
        con.execute(f"create or replace {model.materialization} {model.name} as\n{body}")
        return
    # the column types of the query, from its plan (nothing runs)
    described = con.execute(f"describe {body}").fetchall()
    definitions = []
    for name, column_type, *_ in described:
        if name in kept:
            definitions.append(
                f'"{name}" {column_type} generated always as (cast(({kept[name]}) as {column_type})) virtual')
        else:
            definitions.append(f'"{name}" {column_type}')
    stored = ", ".join(f'"{name}"' for name, *_ in described if name not in kept)
    con.execute(f"create or replace table {model.name} ({', '.join(definitions)})")
    con.execute(f"insert into {model.name} by name select {stored} from (\n{body}\n)")


def audit_paths() -> list[Path]:
    return sorted(AUDITS_DIR.glob("*.sql"))

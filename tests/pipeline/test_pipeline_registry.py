"""One registry of usage classes and idle causes (pipeline/registry.py): the models write only
its names, the audit checks them through its macros, the FOCUS registry, the dashboards and the
docs read it."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb

from pipeline import registry
from pipeline.focus.columns import REGISTRY
from pipeline.runner import audit_paths

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_the_models_write_only_the_registrys_names(con):
    classes = {row[0] for row in con.execute("select distinct x_UsageClass from focus_cost_records").fetchall()}
    assert classes <= {*registry.USAGE_CLASS_NAMES, registry.PURCHASE_CLASS}
    reasons = {row[0] for row in con.execute(
        "select distinct x_IdleReason from focus_cost_records where x_IdleReason is not null").fetchall()}
    assert reasons == set(registry.IDLE_REASON_NAMES)  # the scenarios meet every cause


def test_the_audit_reads_the_registry(built):
    audit = next(p for p in audit_paths() if p.stem == "enum_values_valid").read_text()
    assert "shared_device_slack" not in audit  # no hand-typed list
    con = duckdb.connect()
    con.execute(f"attach '{built.db}' as built (read_only)")
    con.execute("create table focus_cost_records as select * from built.focus_cost_records where x_RunId = 'kueue'")
    con.execute(registry.registry_macros())
    assert con.execute(audit).fetchall() == []
    con.execute("""update focus_cost_records set x_IdleReason = 'no_such_cause'
                   where rowid = (select min(rowid) from focus_cost_records where x_IdleReason is not null)""")
    assert len(con.execute(audit).fetchall()) == 1


def test_the_focus_registry_the_dashboards_and_the_docs_read_it():
    from dashboards.charts import IDLE_CAUSE_COLORS, USAGE_CLASS_ORDER
    from dashboards.data import USAGE_CLASSES

    assert REGISTRY["x_IdleReason"].allowed == registry.IDLE_REASON_NAMES
    assert list(USAGE_CLASSES) == USAGE_CLASS_ORDER == list(registry.USAGE_CLASS_NAMES)
    assert list(IDLE_CAUSE_COLORS)[: len(registry.IDLE_CAUSE_NAMES)] == list(registry.IDLE_CAUSE_NAMES)
    assert registry.markdown_tables() in (DOCS / "tables.md").read_text()
    # docs/cost-model.md §3.1 states the rule of each cause, in the registry's order
    section = (DOCS / "cost-model.md").read_text().split("### 3.1")[1].split("### 3.2")[0]
    named = re.findall(r"^\| \d \| `([a-z_]+)`", section, re.MULTILINE)
    assert list(dict.fromkeys(named)) == list(registry.IDLE_CAUSE_NAMES)

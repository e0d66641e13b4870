"""The idle waterfall's shortcuts (pipeline/waterfall.py) give the rows of its plain twin.

The fast rendering skips the window for a level on one GPU model (one member a step), passes
the earlier steps' `used` rows through without the hash aggregate where no earlier step claims
for the same waits, and drops the members that could use nothing before the window; the plain
rendering (``waterfall_ctes(plain=True)``) runs every level through the window and every
`used` through the hash aggregate. The fast rendering runs the steps whose waits no earlier step
claims for by runs of unchanged state (a level on several models by segments where none of its
members' runs starts or ends); the plain one step by step. On the demo (waiting sets on one
model and on several, of every wait kind) both give int_idle_by_cause row for row, and a
broken shortcut is seen.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest

from pipeline import waterfall
from pipeline.connect import connect, plan_as_written
from pipeline.runner import MODELS, create_macros

MODEL = next(model for model in MODELS if model.name == "int_idle_by_cause")


@pytest.fixture(scope="module")
def demo_copy(demo_db: Path, tmp_path_factory: pytest.TempPathFactory):
    path = tmp_path_factory.mktemp("waterfall") / "demo.duckdb"
    shutil.copy(demo_db, path)
    con = connect(path)
    plan_as_written(con)
    create_macros(con)
    yield con
    con.close()


def _rows_only_in_one(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    """Rows of the built int_idle_by_cause missing from ``sql``'s, and the other way round."""
    con.execute(f"create or replace temp table rendered as\n{sql}")
    only = 0
    for a, b in (("int_idle_by_cause", "rendered"), ("rendered", "int_idle_by_cause")):
        row = con.execute(f"select count(*) from (select * from {a} except all select * from {b})").fetchone()
        assert row is not None
        only += row[0]
    return only


def test_the_demo_has_levels_on_one_model_and_on_several(demo_copy):
    head = waterfall.render(MODEL.path.read_text()).rpartition("\nselect * from final")[0]
    counts = dict(demo_copy.execute(head + """
        select one_model, count(*) from (
            select * from w1_sets union all select * from w3_sets union all select * from w4_sets
        ) group by all""").fetchall())
    assert counts.get(True, 0) > 0 and counts.get(False, 0) > 0, counts


@pytest.mark.parametrize("plain", [False, True])
def test_the_fast_and_plain_waterfalls_give_the_built_rows(demo_copy, plain):
    assert _rows_only_in_one(demo_copy, waterfall.render(MODEL.path.read_text(), plain=plain)) == 0


def test_a_broken_shortcut_is_seen(demo_copy, monkeypatch):
    # a level on one model summed as if its member could use half as much
    monkeypatch.setattr(waterfall, "_one", lambda value: f"(0.5 * {value})")
    assert _rows_only_in_one(demo_copy, waterfall.render(MODEL.path.read_text())) > 0


def test_earlier_claims_summed_only_where_asked_are_checked(demo_copy):
    # steps whose waits earlier steps claim for (2 and 5) sum the earlier claims only for the
    # (level, step)s with a member that could use something: leaving the levels on several
    # models out of those is seen
    sql = waterfall.render(MODEL.path.read_text())
    broken = sql
    for n in (2, 5):
        asked_on_several = f"select lkey, step from w{n}_tested_many\n        union all\n"
        assert asked_on_several in broken
        broken = broken.replace(asked_on_several, "")
    assert _rows_only_in_one(demo_copy, broken) > 0


def _without(sql: str, part: str) -> str:
    assert part in sql
    return sql.replace(part, "")


def test_runs_cut_where_the_fit_changes_are_checked(demo_copy):
    # steps by runs (1, 3 and 4) end a run where the fit in force changes: runs cut only where
    # the model's GPUs left change (the fit at a stretch's start held through it) are seen
    sql = waterfall.render(MODEL.path.read_text())
    fit_changes = ("            union all\n            select s.sk, f.first_step, null, null, f.fit_pods, "
                   "f.unfit_free_gpus, f.free_gpus, f.start_s\n            from fit_steps as f\n"
                   "            inner join w{n}_shapes as s using (fkey)\n")
    broken = sql
    for n in (1, 3, 4):
        broken = _without(broken, fit_changes.replace("{n}", str(n)))
    assert _rows_only_in_one(demo_copy, broken) > 0


def test_segments_cut_where_a_run_ends_are_checked(demo_copy):
    # a level on several models is cut into segments where any member's run starts or ends:
    # segments cut only where runs start (a member gone from its model still counted) are seen
    sql = waterfall.render(MODEL.path.read_text())
    ends = "            union all\n            select lkey, last_step + 1 from w{n}_runs where not one_model\n"
    broken = sql
    for n in (1, 3, 4):
        broken = _without(broken, ends.replace("{n}", str(n)))
    assert _rows_only_in_one(demo_copy, broken) > 0

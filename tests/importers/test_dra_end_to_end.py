"""End to end on a DRA cluster, through the command line: a kubectl dump with ResourceSlices and
claims → import → replay --dra → build → FOCUS records, each MIG slice priced as its share of
the whole GPU (1g.10gb: 0.142, 3g.40gb: 0.5) under a SkuPriceId of its own whose SkuPriceDetails
name the profile, the rest of split GPUs as partition fragmentation, both on the dashboard's Idle
page (AppTest, as tests/dashboards/test_dashboards_app.py), the FOCUS validator's exit 0."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from dashboards.data import DB_ENV_VAR
from gpu_finops.cli import main
from pipeline.validate import validate_db
from tests.importers.dra_dump import write_dra_dumps
from tests.machine_lock import machine_wide_lock

VALIDATOR = Path(__file__).resolve().parents[2].parent / "shared" / "tools" / "focus-validate"
APP = str(Path(__file__).resolve().parents[2] / "dashboards" / "streamlit_app.py")


@pytest.fixture(scope="module")
def dra_build(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("dra-e2e")
    dumps = write_dra_dumps(tmp_path / "dumps")
    imported = tmp_path / "imported"
    assert main(["import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                 "--out", str(imported)]) == 0
    start = json.loads((imported / "import.json").read_text())["start"]
    assert main(["replay", "-q", "--trace", str(imported / "trace.csv"), "--cluster", str(imported / "cluster.csv"),
                 "--dra", str(imported / "dra.yaml"), "--start", start, "--run-id", "dra",
                 "--out", str(tmp_path / "run")]) == 0
    db = tmp_path / "dra.duckdb"
    assert main(["build", "-q", str(tmp_path / "run"), "--prices", str(imported / "prices.csv"), "--db", str(db),
                 "--export", str(tmp_path / "export")]) == 0
    return imported, db, tmp_path / "export", tmp_path / "run"


def test_each_mig_profile_is_priced_as_its_share_of_the_gpu(dra_build):
    imported, db, _, _ = dra_build
    assert validate_db(db) == []
    with imported.joinpath("trace.csv").open() as handle:
        template_of = {r["workload_id"]: r["resource_claim_templates"] or "count" for r in csv.DictReader(handle)}
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("""select x_Workload, sum(ConsumedQuantity), sum(ListCost) from focus_cost_records
                              where x_RunId = 'dra' and x_Resource = 'gpu' and x_Workload is not null
                              group by 1""").fetchall()
        price = con.execute("""select max(ListUnitPrice) from focus_cost_records
                               where x_RunId = 'dra' and x_Resource = 'gpu'""").fetchone()[0]
    gpu_hours: dict[str, float] = {}
    cost: dict[str, float] = {}
    for workload, hours, list_cost in rows:
        profile = template_of[workload]
        gpu_hours[profile] = gpu_hours.get(profile, 0.0) + hours
        cost[profile] = cost.get(profile, 0.0) + list_cost
    # four 1g.10gb notebooks for 2 h at 0.142 GPU; a 3g.40gb fine-tune for 4 h at 0.5 GPU
    assert gpu_hours["team-a/mig-1g"] == pytest.approx(4 * 2 * 0.142)
    assert gpu_hours["team-a/mig-3g"] == pytest.approx(4 * 0.5)
    assert gpu_hours["team-b/whole"] == pytest.approx(2 * 2 * 1.0)  # the training gang's two whole GPUs
    assert cost["team-a/mig-1g"] == pytest.approx(4 * 2 * 0.142 * price)


def test_the_split_gpus_rest_is_partition_fragmentation(dra_build):
    """The replay spreads the slices (gang-v1.37 scores LeastAllocated): the 3g.40gb fine-tune
    splits a GPU of dra-0 for 4 h, the four 1g.10gb notebooks one of dra-1 for 2 h. The rest of
    each split GPU is partition fragmentation (0.5 and 1 − 4 × 0.142 GPU an hour), never
    shared-device slack."""
    _, db, _, _ = dra_build
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("""select x_Node, x_IdleReason, sum(PricingQuantity) from focus_cost_records
                              where x_RunId = 'dra' and x_UsageClass = 'idle' and x_Resource = 'gpu'
                              group by 1, 2""").fetchall()
    fragmented = {node: hours for node, reason, hours in rows if reason == "partition_fragmentation"}
    assert fragmented == {"dra-0": pytest.approx(4 * 0.5), "dra-1": pytest.approx(2 * (1 - 4 * 0.142))}
    assert not [r for r in rows if r[1] == "shared_device_slack"]


def test_the_export_passes_the_focus_validator(dra_build, tmp_path):
    _, _, export, _ = dra_build
    if not VALIDATOR.exists():
        pytest.skip(f"focus-validate not found at {VALIDATOR}")
    single = tmp_path / "focus_cost_records.parquet"
    with duckdb.connect() as con:
        con.execute(f"""copy (select * from read_parquet('{export}/focus_cost_records/**/*.parquet',
                                                      hive_partitioning = false)) to '{single}' (format parquet)""")
    with machine_wide_lock("focus-validator"):  # its first run installs it
        result = subprocess.run([str(VALIDATOR), str(single)], capture_output=True, text=True, timeout=600)
    if result.returncode == 2 and "no Python >= 3.12 found" in result.stderr:
        pytest.skip("focus-validate needs Python >= 3.12, none on this machine")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_run_says_which_devices_each_pod_took(dra_build):
    """device_allocations.parquet: each notebook a 1g.10gb slice, the fine-tune a 3g.40gb, the
    gang and the device-plugin pod whole GPUs, each row on its pod's started row."""
    _, _, _, run = dra_build
    allocations = pq.read_table(run / "device_allocations.parquet").to_pylist()
    events = {row["seq"]: row for row in pq.read_table(run / "events.parquet").to_pylist()}
    assert all(events[a["seq"]]["event"] == "started" and events[a["seq"]]["workload_id"] == a["workload_id"]
               for a in allocations)
    took = sorted((a["workload_id"], a["profile"] or "whole", a["share_milli"], a["claim_kind"]) for a in allocations)
    notebooks = [w for w, profile, _, _ in took if profile == "1g.10gb"]
    assert len(notebooks) == 4 and all(w.startswith("team-a/notebook") for w in notebooks)
    assert [(p, s) for w, p, s, _ in took if w == "team-a/finetune"] == [("3g.40gb", 500)]
    assert sorted(k for _, p, _, k in took if p == "whole") == ["ResourceClaimTemplate"] * 2 + ["count"]


def test_each_slices_focus_rows_name_its_profile(dra_build):
    _, db, _, _ = dra_build
    with duckdb.connect(str(db), read_only=True) as con:
        details = con.execute("""select distinct SkuPriceId, SkuPriceDetails from focus_cost_records
                                 where x_RunId = 'dra' and x_Resource = 'gpu' and x_Workload like 'team-a/%'
                                 order by 1""").fetchall()
        assert validate_db(db) == []  # the profile audit included
    assert [(json.loads(d)["x_MigProfile"], json.loads(d)["x_GpuShare"]) for _, d in details] == [
        ("1g.10gb", 0.142), ("3g.40gb", 0.5)]
    assert [price_id.rsplit("-", 3)[1:] for price_id, _ in details] == [["1g", "10gb", "142"], ["3g", "40gb", "500"]]


def test_the_idle_page_shows_cost_per_mig_profile_and_partition_fragmentation(dra_build, monkeypatch):
    _, db, _, _ = dra_build
    with duckdb.connect(str(db), read_only=True) as con:
        price = con.execute("""select max(ListUnitPrice) from focus_cost_records
                               where x_RunId = 'dra' and x_Resource = 'gpu'""").fetchone()[0]
    monkeypatch.setenv(DB_ENV_VAR, str(db))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at = at.switch_page("app_pages/idle.py").run()
    at = at.segmented_control(key="filters.phase.dra").set_value("all").run()  # the whole run, not its steady phase
    assert not at.exception and not at.error, [e.message for e in at.exception] + [e.value for e in at.error]
    assert "GPU partitions (DRA)" in [h.value for h in at.subheader]
    table = next(f.value for f in at.dataframe if {"device_profile", "usage"} <= set(f.value.columns))
    hours = dict(zip(table["device_profile"], table["gpu_hours"], strict=True))
    assert hours == {"1g.10gb": pytest.approx(4 * 2 * 0.142), "3g.40gb": pytest.approx(4 * 0.5),
                     "whole": pytest.approx(2 * 2 + 3), "partition fragmentation": pytest.approx(4 * 0.5 + 2 * (1 - 4 * 0.142))}
    cost = dict(zip(table["device_profile"], table["effective_cost"], strict=True))
    assert cost["1g.10gb"] == pytest.approx(4 * 2 * 0.142 * price)
    assert {m.label: m.value for m in at.metric}["Partition fragmentation"] == "2.9 GPU-h"
    assert len(at.get("vega_lite_chart")) >= 1

"""Allocation by label: pod labels reach the FOCUS Tags and fct_label_allocation, whose
groups (a label's values, the unlabelled workloads, the platform line) add up to the FOCUS total
under every idle policy. Expected GPU-hours and dollars are worked out by hand in each test."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pytest
import scenarios
from runs import RunBuilder, write_prices

from pipeline.build import build
from pipeline.validate import validate_db
from tests.machine_lock import machine_wide_lock

VALIDATOR = Path(__file__).resolve().parents[2].parent / "shared" / "tools" / "focus-validate"
A100 = 2.0  # $ per GPU-hour of a Standard (on-demand) A100: its list price (tests/pipeline/runs.py)
START = scenarios.START


def labelled_window() -> RunBuilder:
    # Two hours on one 8-GPU A100 node. w1 (team-a, cost-center cc-1) holds 4 GPUs and w2
    # (team-a, cc-2) 2 GPUs for hour 0; w3 (team-b, no labels) 2 GPUs for its first half.
    # Hour 0: 7 GPU-h held, 1 idle; hour 1: 8 idle, nobody there. Nothing waits: no_demand.
    return (
        RunBuilder(START, 7200, run_id="labelled")
        .node("n1", "A100", 8)
        .workload("w1", gpus_per_pod=4, tenant="team-a", labels={"cost-center": "cc-1", "team": "alpha"})
        .workload("w2", gpus_per_pod=2, tenant="team-a", labels={"cost-center": "cc-2", "kind": "batch-x"})
        .workload("w3", gpus_per_pod=2, tenant="team-b")
        .event(0, "submitted", "w1").event(0, "started", "w1", pod=0, node="n1", gpus=4)
        .event(0, "submitted", "w2").event(0, "started", "w2", pod=0, node="n1", gpus=2)
        .event(0, "submitted", "w3").event(0, "started", "w3", pod=0, node="n1", gpus=2)
        .event(1800, "finished", "w3", pod=0, node="n1", gpus=2)
        .event(3600, "finished", "w1", pod=0, node="n1", gpus=4)
        .event(3600, "finished", "w2", pod=0, node="n1", gpus=2)
    )


def labelled_causes() -> RunBuilder:
    # scenarios.cause_owners with labels: idle is 0.5 slack (team-c's w_f), 2 gang_barrier
    # (team-d's g), 2 quota (team-a as a whole: the owner of the unused quota) and 2 no_demand.
    run = scenarios.cause_owners()
    run.run_id = "labelled-causes"
    labels = {"w_a": "cc-1", "w_b": "cc-2", "w_f": "cc-1", "g": "cc-3"}  # w_q: none
    for workload_id, value in labels.items():
        run.workloads[workload_id]["labels"] = [("cost-center", value)]
    return run


@pytest.fixture(scope="module")
def label_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("label-runs")
    dirs = [labelled_window().write(root), labelled_causes().write(root), scenarios.finished_gang().write(root)]
    prices = write_prices(root / "prices.csv")
    db = root / "finops.duckdb"
    build(dirs, prices, db, export=root / "export", show_progress=False)
    return db


@pytest.fixture(scope="module")
def lcon(label_db):
    connection = duckdb.connect(str(label_db), read_only=True)
    yield connection
    connection.close()


def allocation(con, run_id: str, policy: str, key: str = "cost-center") -> dict[str, tuple[float, float]]:
    """{allocation: (GPU-hours held plus carried, charged $)} on GPU rows."""
    found = con.execute(
        """select allocation, sum(gpu_hours + idle_share_gpu_hours), sum(charged_cost)
           from fct_label_allocation
           where run_id = ? and idle_policy = ? and label_key = ? and resource = 'gpu'
           group by allocation having sum(abs(charged_cost)) > 0""",
        [run_id, policy, key],
    ).fetchall()
    return {name: (hours, cost) for name, hours, cost in found}


def approx(expected: dict[str, float]) -> dict[str, tuple]:
    return {name: pytest.approx((hours, hours * A100)) for name, hours in expected.items()}


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        # showback: idle stays on the platform line
        ("separate", {"cc-1": 4.0, "cc-2": 2.0, "__unallocated__": 1.0, "__idle__": 9.0}),
        # hour 0's 1 idle GPU-h by cost (4 : 2 : 1); hour 1 had no users: the platform's
        ("window", {"cc-1": 4 + 4 / 7, "cc-2": 2 + 2 / 7, "__unallocated__": 1 + 1 / 7, "__idle__": 8.0}),
        ("node", {"cc-1": 4 + 4 / 7, "cc-2": 2 + 2 / 7, "__unallocated__": 1 + 1 / 7, "__idle__": 8.0}),
        # no_demand idle is the platform's
        ("cause", {"cc-1": 4.0, "cc-2": 2.0, "__unallocated__": 1.0, "__idle__": 9.0}),
    ],
)
def test_a_label_groups_the_bill_with_unlabelled_and_idle_apart(lcon, policy, expected):
    assert allocation(lcon, "labelled", policy) == approx(expected)


def test_every_key_of_the_run_is_an_allocation_key(lcon):
    keys = lcon.execute("select distinct label_key from fct_label_allocation where run_id = 'labelled' "
                        "order by 1").fetchall()
    assert keys == [("cost-center",), ("kind",), ("team",)]
    # under `team`, only w1 carries the label: w2 and w3 are unlabelled
    assert allocation(lcon, "labelled", "separate", "team") == approx(
        {"alpha": 4.0, "__unallocated__": 3.0, "__idle__": 9.0})


@pytest.mark.parametrize(
    ("policy", "expected"),
    [
        ("separate", {"cc-1": 1.5, "cc-2": 2.0, "cc-3": 2.0, "__idle__": 6.5}),
        # slack to w_f (cc-1), the barrier to g (cc-3), quota to team-a as a whole: team-a's only
        # use of the cell is w_a (cc-1), so all 2 GPU-h go to cc-1; no_demand to the platform
        ("cause", {"cc-1": 1.5 + 0.5 + 2.0, "cc-2": 2.0, "cc-3": 2.0 + 2.0, "__idle__": 2.0}),
        # 6.5 idle GPU-h over 5.5 held, by cost
        ("window", {"cc-1": 1.5 * 12 / 5.5, "cc-2": 2.0 * 12 / 5.5, "cc-3": 2.0 * 12 / 5.5}),
    ],
)
def test_shares_billed_to_a_team_follow_its_own_use(lcon, policy, expected):
    assert allocation(lcon, "labelled-causes", policy) == approx(expected)


def quota_owner_away() -> RunBuilder:
    # Two hours on an 8-GPU A100 node; cq-a (team-a) owns 6 GPUs of quota, cq-b (team-b) 2.
    # w_a (team-a, cc-1, 1 GPU) runs in hour 0 only; w_b (team-b, cc-2, 2 GPUs) runs both hours,
    # so w_q (team-b, 2 GPUs, no labels) waits for quota throughout: 2 free GPUs are quota idle
    # each hour, billed under the cause policy to team-a, the owner of the unused quota. In hour
    # 0 team-a's use is w_a (cc-1); in hour 1 team-a used nothing: its share is unallocated.
    return (
        RunBuilder(START, 7200, run_id="quota-owner-away", profile="gang-v1.35")
        .node("n1", "A100", 8)
        .cluster_queue("cq-a", "a100", 6, borrowing_limit=0)
        .cluster_queue("cq-b", "a100", 2, borrowing_limit=0)
        .workload("w_a", gpus_per_pod=1, tenant="team-a", queue="lq-a", labels={"cost-center": "cc-1"})
        .workload("w_b", gpus_per_pod=2, tenant="team-b", queue="lq-b", labels={"cost-center": "cc-2"})
        .workload("w_q", gpus_per_pod=2, tenant="team-b", queue="lq-b")
        .event(0, "submitted", "w_a", cluster_queue="cq-a")
        .event(0, "admitted", "w_a", cluster_queue="cq-a", flavor="a100")
        .event(0, "started", "w_a", pod=0, node="n1", gpus=1)
        .event(0, "submitted", "w_b", cluster_queue="cq-b")
        .event(0, "admitted", "w_b", cluster_queue="cq-b", flavor="a100")
        .event(0, "started", "w_b", pod=0, node="n1", gpus=2)
        .event(0, "submitted", "w_q", cluster_queue="cq-b")
        .event(0, "pending", "w_q", reason="WaitingForQuota", cluster_queue="cq-b")
        .event(3600, "finished", "w_a", pod=0, node="n1", gpus=1)
    )


def test_a_team_share_where_the_team_used_nothing_is_unallocated(tmp_path):
    db = tmp_path / "db.duckdb"
    build([quota_owner_away().write(tmp_path)], write_prices(tmp_path / "prices.csv"), db, show_progress=False)
    with duckdb.connect(str(db), read_only=True) as con:
        # hour 0: cc-1 = 1 held + 2 quota; hour 1: team-a's 2 GPU-h of quota idle unallocated;
        # no_demand (3 + 4 GPU-h) the platform's
        assert allocation(con, "quota-owner-away", "cause") == approx(
            {"cc-1": 3.0, "cc-2": 4.0, "__unallocated__": 2.0, "__idle__": 7.0})
        teams = con.execute("""select tenant, sum(gpu_hours + idle_share_gpu_hours) from fct_label_allocation
                               where idle_policy = 'cause' and resource = 'gpu' and allocation = '__unallocated__'
                               group by 1""").fetchall()
        assert teams == [("team-a", pytest.approx(2.0))]
    assert validate_db(db) == []


def test_labels_reach_the_focus_tags_beside_our_own_keys(lcon):
    tags = {
        workload: json.loads(tag)
        for workload, tag in lcon.execute(
            "select distinct x_Workload, Tags from focus_cost_records where x_RunId = 'labelled' "
            "and x_UsageClass = 'productive' and x_Resource = 'gpu'").fetchall()
    }
    assert tags["w1"] == {"tenant": "team-a", "workload": "w1", "kind": "training", "usage_class": "productive",
                          "cost-center": "cc-1", "team": "alpha"}
    # a label named like one of our keys keeps its value under `label:<key>`
    assert tags["w2"]["kind"] == "training" and tags["w2"]["label:kind"] == "batch-x"
    assert "cost-center" not in tags["w3"]


def test_label_allocation_audit_holds_and_catches_a_moved_dollar(label_db, tmp_path):
    assert validate_db(label_db) == []
    broken = tmp_path / "broken.duckdb"
    broken.write_bytes(label_db.read_bytes())
    with duckdb.connect(str(broken)) as con:
        con.execute("update fct_label_allocation set charged_cost = charged_cost + 1 "
                    "where rowid = (select min(rowid) from fct_label_allocation)")
    assert "audit:label_allocation_balances" in {violation.check for violation in validate_db(broken)}


def test_a_run_without_labels_has_no_label_allocation(lcon):
    assert lcon.execute("select count(*) from fct_label_allocation where run_id = 'finished-gang'").fetchone() == (0,)


@pytest.mark.slow
@pytest.mark.parametrize("split", [False, True])
def test_a_labelled_export_passes_the_focus_validator(label_db, tmp_path, split):
    """Tags with labels (and AllocatedTags in the 1.3 split layout) are FOCUS JSON objects."""
    if not VALIDATOR.exists():
        pytest.skip(f"focus-validate not found at {VALIDATOR}")
    export = label_db.parent / "export"
    if split:
        runs = sorted(p for p in label_db.parent.iterdir() if (p / "run.json").is_file())
        export = tmp_path / "export-split"
        build(runs, label_db.parent / "prices.csv", tmp_path / "split.duckdb", export=export, focus_split=True,
              show_progress=False)
        assert validate_db(tmp_path / "split.duckdb") == []
    single = tmp_path / "focus_cost_records.parquet"
    with duckdb.connect() as con:
        tags = con.execute(f"""select count(*) from read_parquet('{export}/focus_cost_records/**/*.parquet',
                                   hive_partitioning = false)
                               where {'AllocatedTags' if split else 'Tags'} like '%cost-center%'""").fetchone()
        assert tags[0] > 0
        con.execute(f"""copy (select * from read_parquet('{export}/focus_cost_records/**/*.parquet',
                                                      hive_partitioning = false)) to '{single}' (format parquet)""")
    with machine_wide_lock("focus-validator"):  # its first run installs it
        result = subprocess.run([str(VALIDATOR), str(single)], capture_output=True, text=True, timeout=600)
    if result.returncode == 2 and "no Python >= 3.12 found" in result.stderr:
        pytest.skip("focus-validate needs Python >= 3.12, none on this machine")
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_rebuild_gives_the_same_label_allocation_and_tags(label_db, tmp_path):
    runs = [label_db.parent / name for name in ("labelled", "labelled-causes", "finished-gang")]  # the fixture's order
    again = tmp_path / "again.duckdb"
    build(runs, label_db.parent / "prices.csv", again, show_progress=False)
    build(runs, label_db.parent / "prices.csv", again, show_progress=False)  # over itself

    def contents(db):
        with duckdb.connect(str(db), read_only=True) as con:
            return (con.execute("select * from fct_label_allocation").fetchall(),  # in its ORDER BY
                    con.execute("select * from focus_cost_records order by all").fetchall())

    assert contents(again) == contents(label_db)

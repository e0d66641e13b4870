"""Preemption cascades as data (fct_preemption_cascades): one table per rule of the chain.

A preemption whose preemptor was preempted earlier and has not finished since joins the chain
of the preemptor's latest preempted pod event, one level deeper; otherwise it starts a chain at
depth 1. Each row carries the victim pod's work lost since its group's last checkpoint.
"""

from __future__ import annotations

import shutil

import duckdb
import pytest
from runs import RunBuilder
from tables import approx_rows, rows

from pipeline.build import build
from pipeline.runner import AUDITS_DIR

START = "2026-11-02T00:00:00Z"
AUDIT = AUDITS_DIR / "preempted_pod_event_in_one_chain.sql"
COLUMNS = """event_seq, chain_id, depth, parent_seq, victim_workload_id, victim_pod_index,
             victim_priority, preemptor_workload_id, preemptor_priority, root_workload_id, lost_gpu_hours"""


def _two_level_cascade() -> RunBuilder:
    # top (1000) displaces both pods of mid (100) on n2; mid, requeued, displaces low (0) on n1.
    # Checkpoints every 600 s: mid loses 400 s x 4 GPUs per pod, low 500 s x 8 GPUs.
    return (
        RunBuilder(START, 7200, run_id="two-level")
        .node("n1", "A100", 8).node("n2", "A100", 8)
        .workload("low", pods=1, gpus_per_pod=8, priority=0, checkpoint_interval_s=600, kind="batch")
        .workload("mid", pods=2, gpus_per_pod=4, priority=100, checkpoint_interval_s=600)
        .workload("top", pods=2, gpus_per_pod=4, priority=1000, submit_time_s=1000, kind="inference")
        .event(0, "submitted", "low").event(0, "started", "low", pod=0, node="n1", gpus=8)      # 0, 1
        .event(0, "submitted", "mid").event(0, "started", "mid", pod=0, node="n2", gpus=4)      # 2, 3
        .event(0, "started", "mid", pod=1, node="n2", gpus=4)                                   # 4
        .event(1000, "submitted", "top")                                                        # 5
        .event(1000, "preempted", "mid", pod=0, node="n2", gpus=4, preemptor="top")             # 6
        .event(1000, "preempted", "mid", pod=1, node="n2", gpus=4, preemptor="top")             # 7
        .event(1000, "requeued", "mid", preemptor="top")                                        # 8
        .event(1000, "started", "top", pod=0, node="n2", gpus=4)
        .event(1000, "started", "top", pod=1, node="n2", gpus=4)
        .event(1100, "preempted", "low", pod=0, node="n1", gpus=8, preemptor="mid")             # 11
        .event(1100, "requeued", "low", preemptor="mid")
        .event(1100, "started", "mid", pod=0, node="n1", gpus=4)
        .event(1100, "started", "mid", pod=1, node="n1", gpus=4)
        .event(4600, "finished", "top", pod=0, node="n2", gpus=4)
        .event(4600, "finished", "top", pod=1, node="n2", gpus=4)
        .event(4600, "started", "low", pod=0, node="n2", gpus=8)
        .event(4700, "finished", "mid", pod=0, node="n1", gpus=4)
        .event(4700, "finished", "mid", pod=1, node="n1", gpus=4)
    )


def _broken_by_a_finish() -> RunBuilder:
    # disruption mode Single, mid replaces its lost pod: top displaces mid's pod 1 at 1000; mid's
    # pod 0 finishes at 1800; mid's new pod 1 then displaces low at 1900 -- a new chain.
    return (
        RunBuilder(START, 7200, run_id="broken")
        .node("n1", "A100", 8).node("n2", "A100", 8)
        .workload("low", pods=1, gpus_per_pod=8, priority=0, kind="batch")
        .workload("mid", pods=2, gpus_per_pod=4, priority=100, duration_s=1800)
        .workload("top", pods=1, gpus_per_pod=4, priority=1000, submit_time_s=1000, duration_s=1000)
        .event(0, "submitted", "low").event(0, "started", "low", pod=0, node="n1", gpus=8)      # 0, 1
        .event(0, "submitted", "mid").event(0, "started", "mid", pod=0, node="n2", gpus=4)      # 2, 3
        .event(0, "started", "mid", pod=1, node="n2", gpus=4)                                   # 4
        .event(1000, "submitted", "top")                                                        # 5
        .event(1000, "preempted", "mid", pod=1, node="n2", gpus=4, preemptor="top")             # 6
        .event(1000, "started", "top", pod=0, node="n2", gpus=4)
        .event(1800, "finished", "mid", pod=0, node="n2", gpus=4)
        .event(1900, "preempted", "low", pod=0, node="n1", gpus=8, preemptor="mid")             # 9
        .event(1900, "requeued", "low", preemptor="mid")
        .event(1900, "started", "mid", pod=1, node="n1", gpus=4)
        .event(2000, "finished", "top", pod=0, node="n2", gpus=4)
        .event(3700, "finished", "mid", pod=1, node="n1", gpus=4)
        .event(3700, "started", "low", pod=0, node="n1", gpus=8)
    )


def _preemptor_preempted_later() -> RunBuilder:
    # top displaces low at 1000 (depth 1, top's chain); urgent displaces top at 2000; top, back,
    # displaces filler at 2100: that one follows top's own preemption, in urgent's chain.
    return (
        RunBuilder(START, 7200, run_id="later")
        .node("n1", "A100", 8).node("n2", "A100", 8)
        .workload("low", pods=1, gpus_per_pod=8, priority=0)
        .workload("filler", pods=1, gpus_per_pod=8, priority=0, duration_s=7200)
        .workload("top", pods=1, gpus_per_pod=8, priority=100, submit_time_s=1000)
        .workload("urgent", pods=1, gpus_per_pod=8, priority=1000, submit_time_s=2000, duration_s=1000)
        .event(0, "submitted", "low").event(0, "started", "low", pod=0, node="n1", gpus=8)      # 0, 1
        .event(0, "submitted", "filler").event(0, "started", "filler", pod=0, node="n2", gpus=8)  # 2, 3
        .event(1000, "submitted", "top")                                                        # 4
        .event(1000, "preempted", "low", pod=0, node="n1", gpus=8, preemptor="top")             # 5
        .event(1000, "requeued", "low", preemptor="top")
        .event(1000, "started", "top", pod=0, node="n1", gpus=8)
        .event(2000, "submitted", "urgent")                                                     # 8
        .event(2000, "preempted", "top", pod=0, node="n1", gpus=8, preemptor="urgent")          # 9
        .event(2000, "requeued", "top", preemptor="urgent")
        .event(2000, "started", "urgent", pod=0, node="n1", gpus=8)
        .event(2100, "preempted", "filler", pod=0, node="n2", gpus=8, preemptor="top")          # 12
        .event(2100, "requeued", "filler", preemptor="top")
        .event(2100, "started", "top", pod=0, node="n2", gpus=8)
        .event(3000, "finished", "urgent", pod=0, node="n1", gpus=8)
        .event(3000, "started", "low", pod=0, node="n1", gpus=8)
        .event(5700, "finished", "top", pod=0, node="n2", gpus=8)
    )


def _cpu_and_memory_priced() -> RunBuilder:
    # the price book prices the node's CPU and memory too: low loses 1000 s of 8 GPUs, 8 cores
    # and 64 GiB to top (no checkpoint)
    return (
        RunBuilder(START, 7200, run_id="cpu-priced")
        .node("n1", "A100", 8, cpu_milli=64000, memory_mib=512 * 1024)
        .workload("low", pods=1, gpus_per_pod=8, cpu_milli_per_pod=8000, memory_mib_per_pod=64 * 1024)
        .workload("top", pods=1, gpus_per_pod=8, priority=10, submit_time_s=1000)
        .event(0, "submitted", "low").event(0, "started", "low", pod=0, node="n1", gpus=8)
        .event(1000, "submitted", "top")
        .event(1000, "preempted", "low", pod=0, node="n1", gpus=8, preemptor="top")           # 3
        .event(1000, "requeued", "low", preemptor="top")
        .event(1000, "started", "top", pod=0, node="n1", gpus=8)
        .event(4600, "finished", "top", pod=0, node="n1", gpus=8)
    )


def _preemptor_unnamed() -> RunBuilder:
    # the two-level cascade as a schema 1.1 log, which has no preemptor column
    two_level = _two_level_cascade()
    two_level.run_id = "unnamed"
    return two_level


@pytest.fixture(scope="module")
def cascades_db(tmp_path_factory, prices_csv):
    root = tmp_path_factory.mktemp("cascades")
    runs = [make().write(root / "runs") for make in (_two_level_cascade, _broken_by_a_finish,
                                                     _preemptor_preempted_later, _cpu_and_memory_priced)]
    runs.append(_preemptor_unnamed().write(root / "runs", schema_version="1.1"))
    return build(runs, prices_csv, root / "finops.duckdb", show_progress=False).db


def _cascades(db, run_id: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return rows(con, f"select {COLUMNS} from fct_preemption_cascades where run_id = ? order by event_seq",
                    [run_id])


def test_a_victim_that_preempts_in_turn_is_one_level_deeper_in_the_same_chain(cascades_db):
    approx_rows(_cascades(cascades_db, "two-level"), [
        (6, 6, 1, None, "mid", 0, 100, "top", 1000, "top", 400 * 4 / 3600),
        (7, 6, 1, None, "mid", 1, 100, "top", 1000, "top", 400 * 4 / 3600),
        (11, 6, 2, 7, "low", 0, 0, "mid", 100, "top", 500 * 8 / 3600),
    ])


def test_the_intermediate_links_each_event_to_the_one_it_follows(cascades_db):
    with duckdb.connect(str(cascades_db), read_only=True) as con:
        linked = rows(con, """select seq, time_s, parent_seq, chain_id, depth, victim_workload_id, preemptor_workload_id,
                                     root_workload_id
                              from int_preemption_chains where run_id = 'later' order by seq""")
    assert linked == [
        (5, 1000.0, None, 5, 1, "low", "top", "top"),
        (9, 2000.0, None, 9, 1, "top", "urgent", "urgent"),
        (12, 2100.0, 9, 9, 2, "filler", "top", "urgent"),
    ]


def test_a_finish_of_the_preemptor_breaks_the_chain(cascades_db):
    approx_rows(_cascades(cascades_db, "broken"), [
        (6, 6, 1, None, "mid", 1, 100, "top", 1000, "top", 1000 * 4 / 3600),
        (9, 9, 1, None, "low", 0, 0, "mid", 100, "mid", 1900 * 8 / 3600),
    ])


def test_a_preemptor_preempted_later_keeps_its_earlier_preemption_and_carries_the_later_one(cascades_db):
    approx_rows(_cascades(cascades_db, "later"), [
        (5, 5, 1, None, "low", 0, 0, "top", 100, "top", 1000 * 8 / 3600),
        (9, 9, 1, None, "top", 0, 100, "urgent", 1000, "urgent", 1000 * 8 / 3600),
        (12, 9, 2, 9, "filler", 0, 0, "top", 100, "urgent", 2100 * 8 / 3600),
    ])


def test_a_preemption_whose_preemptor_the_log_does_not_name_is_a_chain_of_its_own(cascades_db):
    approx_rows(_cascades(cascades_db, "unnamed"), [
        (6, 6, 1, None, "mid", 0, 100, None, None, None, 400 * 4 / 3600),
        (7, 7, 1, None, "mid", 1, 100, None, None, None, 400 * 4 / 3600),
        (11, 11, 1, None, "low", 0, 0, None, None, None, 500 * 8 / 3600),
    ])


def test_each_evictions_pods_add_up_to_its_loss(cascades_db):
    with duckdb.connect(str(cascades_db), read_only=True) as con:
        by_pod = rows(con, """select run_id, victim_workload_id, victim_attempt, sum(lost_gpu_hours), sum(lost_cost)
                              from fct_preemption_cascades group by all order by all""")
        by_eviction = rows(con, """select run_id, workload_id, attempt, lost_gpu_hours, lost_cost
                                   from fct_evictions where end_event = 'preempted' order by all""")
    approx_rows(by_pod, by_eviction)


def test_lost_gpu_hours_count_the_gpu_rows_only_where_cpu_and_memory_are_priced(cascades_db):
    # 8 GPUs x 1000 s at $2 (list, a Standard node), 8 cores at $0.04 and 64 GiB at $0.005 an hour
    lost_gpu_hours, lost_cost = 8 * 1000 / 3600, (8 * 2.0 + 8 * 0.04 + 64 * 0.005) * 1000 / 3600
    with duckdb.connect(str(cascades_db), read_only=True) as con:
        evictions = rows(con, "select lost_gpu_hours, lost_cost from fct_evictions where run_id = 'cpu-priced'")
        cascades = rows(con, "select lost_gpu_hours, lost_cost from fct_preemption_cascades where run_id = 'cpu-priced'")
    approx_rows(evictions, [(lost_gpu_hours, lost_cost)])
    approx_rows(cascades, [(lost_gpu_hours, lost_cost)])


def test_the_audit_catches_a_pod_event_placed_in_two_chains(cascades_db, tmp_path):
    copy = tmp_path / "copy.duckdb"
    shutil.copy(cascades_db, copy)
    with duckdb.connect(str(copy)) as db:
        assert db.execute(AUDIT.read_text()).fetchall() == []
        # low's preemption by mid, placed a second time as the start of a chain of its own
        db.execute("""insert into fct_preemption_cascades
                      select * replace (11 as chain_id, 1 as depth, null as parent_seq)
                      from fct_preemption_cascades where run_id = 'two-level' and event_seq = 11""")
        assert sorted(db.execute(AUDIT.read_text()).fetchall()) == [
            ("two-level", 11, 2, "in 2 chain rows"),
        ]

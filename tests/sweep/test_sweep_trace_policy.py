"""Preemption policies as sweep axes: trace overrides per priority class and workload kind
(gpu_finops.trace_policy), each scenario measured by its own replay."""

from __future__ import annotations

import csv

import pyarrow.parquet as pq
import pytest

from gpu_finops.sweep.run import _plan
from gpu_finops.sweep.spec import read_sweep
from gpu_finops.trace_policy import TracePolicy, apply_trace_policy
from scheduler.commands import replay
from scheduler.errors import InputError

TRACE = """workload_id,submit_time,duration_s,pods,gpus_per_pod,priority,kind
gang,0,9000,4,8,1,training
urgent,100,500,1,8,9,inference
"""
CLUSTER = "node,gpu_model,gpus\n" + "".join(f"n{i},A100,8\n" for i in range(1, 5))
PROFILE = """name = "per-pod-claims"
unit = "pod_group"
[extension_points]
post_filter = ["WorkloadPreemption"]
[behaviour]
tie_break = "lowest_index"
"""


def _files(tmp_path):
    (tmp_path / "t.csv").write_text(TRACE)
    (tmp_path / "c.csv").write_text(CLUSTER)
    (tmp_path / "p.csv").write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,"
                                    "spot_usd_per_gpu_hour\nA100,4,3,1\n")
    (tmp_path / "profile.toml").write_text(PROFILE)


def test_the_axes_make_one_scenario_per_policy_with_readable_names(tmp_path):
    _files(tmp_path)
    path = tmp_path / "s.toml"
    path.write_text('[inputs]\ntrace = "t.csv"\ncluster = "c.csv"\nprices = "p.csv"\n[grid]\n'
                    'never_preempt = [[], [9]]\ndisruption_mode = ["trace", {training = "all"}]\n'
                    'checkpoint_interval_s = [{training = 1800}]\n')
    sweep = read_sweep(path)
    assert [s.name for s in sweep.scenarios] == [
        "never-preempt-as-traced_disruption-mode-as-traced", "never-preempt-as-traced_training-all",
        "never-9_disruption-mode-as-traced", "never-9_training-all"]
    last = sweep.scenarios[-1]
    assert last.trace_policy == TracePolicy((9,), (("training", "all"),), (), (("training", 1800.0),))
    assert last.axes()["trace_policy"] == "never-9_training-all_training-ckpt1800s"


@pytest.mark.parametrize(("grid", "says"), [
    ("never_preempt = [1000]", "a list of priority values"),
    ('disruption_mode = [{training = "some"}]', "one of single, all"),
    ('on_pod_loss = [{training = "retry"}]', "restart_group"),
    ("checkpoint_interval_s = [{training = -5}]", "seconds > 0"),
])
def test_a_bad_policy_value_is_one_line_naming_the_key(tmp_path, grid, says):
    _files(tmp_path)
    path = tmp_path / "s.toml"
    path.write_text(f'[inputs]\ntrace = "t.csv"\ncluster = "c.csv"\nprices = "p.csv"\n[grid]\n{grid}\n')
    with pytest.raises(InputError, match=says) as raised:
        read_sweep(path)
    assert raised.value.field is not None and raised.value.field.startswith("grid.")


def test_the_overridden_trace_is_written_and_replays_as_the_policy_says(tmp_path):
    _files(tmp_path)
    path = tmp_path / "s.toml"
    path.write_text('[inputs]\ntrace = "t.csv"\ncluster = "c.csv"\nprices = "p.csv"\n[grid]\n'
                    'profiles = ["profile.toml"]\nnever_preempt = [[], [9]]\n')
    sweep = read_sweep(path)
    preempted = {}
    for scenario in sweep.scenarios:
        task = _plan(sweep, scenario, sweep.inputs, tmp_path / "out").task
        replay(task.trace, task.cluster, tmp_path / "runs" / scenario.name, profile=task.profile)
        events = pq.read_table(tmp_path / "runs" / scenario.name / "events.parquet").to_pylist()
        preempted[scenario.name] = sum(e["event"] == "preempted" for e in events)
    assert preempted == {"never-preempt-as-traced": 4, "never-9": 0}  # a pod taken, its group restarted
    rows = list(csv.DictReader((tmp_path / "out" / "traces" / "never-9.csv").open()))
    assert [(r["workload_id"], r["preemption_policy"]) for r in rows] == [("gang", ""), ("urgent", "never")]


def test_apply_trace_policy_sets_kind_columns_and_keeps_every_other_cell(tmp_path):
    _files(tmp_path)
    policy = TracePolicy(disruption_mode=(("training", "all"),), on_pod_loss=(("batch", "keep_running"),),
                         checkpoint_interval_s=(("training", 600.0),))
    assert apply_trace_policy(tmp_path / "t.csv", tmp_path / "o.csv", policy) == 1
    rows = list(csv.DictReader((tmp_path / "o.csv").open()))
    assert rows[0] | {} == {"workload_id": "gang", "submit_time": "0", "duration_s": "9000", "pods": "4",
                            "gpus_per_pod": "8", "priority": "1", "kind": "training", "preemption_policy": "",
                            "disruption_mode": "all", "on_pod_loss": "", "checkpoint_interval_s": "600"}
    assert rows[1]["disruption_mode"] == "" and rows[1]["checkpoint_interval_s"] == ""


def test_the_priority_search_scenario_swaps_the_plugin_and_is_named_not_upstream(tmp_path):
    from gpu_finops.sweep.profiles import scenario_profile
    from gpu_finops.sweep.spec import Scenario
    from scheduler.framework.profile import load_profile

    path = scenario_profile(Scenario("search", preemption="priority_search"), tmp_path)
    profile = load_profile(path)
    assert profile.post_filter == ("PriorityLevelSearchPreemption",)
    assert profile.name == "gang-v1.37+priority-search-not-upstream"
    with pytest.raises(InputError, match="WorkloadPreemption"):
        scenario_profile(Scenario("per-pod", profile="kube-default", preemption="priority_search"), tmp_path)

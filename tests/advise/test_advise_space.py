"""The search space of `advise quotas`: quotas of a flavor never exceed its GPUs, any split is
reachable, today's manifests are a point of it, and a point's manifests are valid Kueue YAML."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_finops.advise.objectives import Bounds, Objectives
from gpu_finops.advise.space import SearchSpace, apportion, dump
from scheduler.admission.manifests import parse_queue_config
from scheduler.trace.cluster import read_cluster

DEMO = Path(__file__).resolve().parents[2] / "data" / "demo"


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)  # a loaded machine draws slowly
@given(st.integers(0, 500), st.lists(st.floats(0, 1), min_size=1, max_size=8))
def test_apportioned_quotas_are_whole_and_sum_to_the_total(total, shares):
    parts = apportion(total, shares)
    assert all(p >= 0 for p in parts)
    assert sum(parts) == (total if sum(shares) > 0 else 0)


def test_today_is_a_point_of_the_space_and_every_point_is_valid_kueue():
    objectives = Objectives(bounds=Bounds(borrowing_limit=(0, 256)))
    space = SearchSpace(DEMO / "queues.yaml", read_cluster(DEMO / "cluster.csv"), objectives)
    point = space.point(space.today_params())
    for (cq, flavor), gpus in point.nominal.items():
        quota = space.config.cluster_queues[cq].quota(flavor, "nvidia.com/gpu")
        assert quota is not None
        assert gpus == quota.nominal_milli // 1000
        assert point.borrowing[(cq, flavor)] == quota.borrowing_limit_milli // 1000
    gpus = {f.name: f.gpus for f in space.flavors}
    assert gpus == {"h100": 256, "a100": 224, "l40s": 128}
    one_queue = {name: (1.0 if name.endswith(":team-llm") else 0.0) if name.startswith("share:") else
                 (dist.high if name.startswith("total:") else dist.low) for name, dist in space.distributions().items()}
    point = space.point(one_queue)  # one ClusterQueue holds every GPU of each flavor
    assert {k: v for k, v in point.nominal.items() if v} == {("team-llm", f): g for f, g in gpus.items()}
    config = parse_queue_config(dump(space.manifests(point)))  # Kueue's webhook checks pass
    llm = config.cluster_queues["team-llm"].quota("h100", "cpu")
    assert llm is not None and llm.nominal_milli == 256 * 28_000  # CPU follows the GPUs (28 cores a GPU)


def test_written_manifests_keep_the_users_units_so_a_diff_shows_only_what_changed():
    space = SearchSpace(DEMO / "queues.yaml", read_cluster(DEMO / "cluster.csv"), Objectives())
    today = space.point(space.today_params())
    # today's point written back is today's file: no quantity rewritten into other units
    assert space.diff(today, "a", "b") == ""
    params = space.today_params()
    params["total:h100"] -= 16  # 16 fewer H100s to share: each h100 quota of four queues moves
    diff = space.diff(space.point(params), "a", "b")
    changed = [line for line in diff.splitlines() if line.startswith("+ ")]
    # GPUs, CPU and memory of the four queues' h100 flavor, nothing else; memory stays in Gi
    assert len(changed) == 12, diff
    assert "+        nominalQuota: 21504Gi" in changed and not any("Mi" in line for line in changed)


def test_a_quantity_is_written_in_the_form_it_was_given():
    from scheduler.admission.manifests.quantities import in_form_of
    assert in_form_of(32768 * 2**30 * 1000, "32768Gi") == "32768Gi"
    assert in_form_of(22938 * 2**30 * 1000, "32768Gi") == "22938Gi"
    assert in_form_of(1536 * 2**20 * 1000, "2Gi") is None  # 1.5Gi: the caller's own form
    assert in_form_of(64_000, 32) == 64
    assert in_form_of(64_000, "32000m") == "64000m"
    assert in_form_of(500, 1) is None


def test_advise_says_the_time_left_at_the_pace_so_far():
    from gpu_finops.advise.quotas import time_left
    assert time_left(600.0, 4, 46) == " · about 115 min left"  # 150 s a trial
    assert time_left(20.0, 4, 3) == " · about 15 s left"
    assert time_left(600.0, 4, 0) == "" and time_left(0.0, 0, 10) == ""

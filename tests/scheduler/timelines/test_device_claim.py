"""DRA in v1.37: a pod group's pods share one device claim, so they all get one GPU model
even when the group accepts several; without the shared claim they may mix models."""

from tests.scheduler.scenario import GANG_V137_PER_POD_CLAIMS as NO_SHARED_CLAIM
from tests.scheduler.scenario import job, lowest_index, node, replay_rows, story

CLUSTER = [node("a1", model="A100"), node("h1", model="H100"), node("h2", model="H100")]


def test_a_shared_claim_keeps_the_group_on_one_gpu_model(tmp_path):
    rows = replay_rows(tmp_path, CLUSTER, [job("busy", 0, 1000, model="H100"),
                                          job("gang", 10, 100, pods=2, model="A100|H100")], lowest_index("gang-v1.37"))
    gang = story([r for r in rows if r["workload_id"] == "gang"], events=("started",))
    assert gang == [(1000.0, "started", "gang", 0, "h1"), (1000.0, "started", "gang", 1, "h2")]


def test_per_pod_claims_may_mix_models(tmp_path):
    rows = replay_rows(tmp_path, CLUSTER, [job("busy", 0, 1000, model="H100"),
                                          job("gang", 10, 100, pods=2, model="A100|H100")], lowest_index(NO_SHARED_CLAIM))
    gang = story([r for r in rows if r["workload_id"] == "gang"], events=("started",))
    assert gang == [(10.0, "started", "gang", 0, "a1"), (10.0, "started", "gang", 1, "h2")]

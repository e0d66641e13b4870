"""`Workload.narrowed` (what Kueue's flavor does to a trace row at admission) equals
`dataclasses.replace` over every field, so building the row directly changes no replay."""

from __future__ import annotations

from dataclasses import fields, replace

import pytest

from scheduler.model.workload import DisruptionMode, OnPodLoss, PodPreemptionPolicy, Workload

# Every field away from its default, so a field the constructor call forgets shows.
EVERY_FIELD = dict(
    workload_id="w-7", submit_time_s=12.5, duration_s=3600.0, pods=8, min_count=4, gpus_per_pod=2.0,
    gpu_models=("A100", "H100"), cpu_milli_per_pod=4000, memory_mib_per_pod=16384, tenant="team-a",
    queue="lq-a", priority=100, checkpoint_interval_s=600.0, topology_required="rack",
    topology_preferred="block", parent_group="composite-1", parent_min_groups=2,
    parent_topology_required="zone", schedule_timeout_s=90.0, kind="training", gpu_utilization=0.5,
    labels=(("team", "a"),), source_row=42, disruption_mode=DisruptionMode.ALL,
    on_pod_loss=OnPodLoss.KEEP_RUNNING, preemption_policy=PodPreemptionPolicy.NEVER,
    claim_templates=("gpu-claim",), shared_claim="shared",
)


def test_the_sample_row_sets_every_field_away_from_its_default():
    assert set(EVERY_FIELD) == {f.name for f in fields(Workload)}
    defaults = Workload("w", 0.0, 1.0, 1, 1, 1.0)
    assert all(getattr(defaults, name) != value for name, value in EVERY_FIELD.items())


@pytest.mark.parametrize("drop_topology", [False, True])
@pytest.mark.parametrize("models, pods", [(("H100",), 8), (("A100",), 5), (("A100", "H100"), 3)])
def test_narrowed_equals_dataclasses_replace_over_every_field(models, pods, drop_topology):
    original = Workload(**EVERY_FIELD)
    expected = replace(original, gpu_models=models, pods=pods)
    if drop_topology:
        expected = replace(expected, topology_required=None, topology_preferred=None)
    narrowed = original.narrowed(models, pods, drop_topology=drop_topology)
    assert [(f.name, getattr(narrowed, f.name)) for f in fields(Workload)] == \
        [(f.name, getattr(expected, f.name)) for f in fields(Workload)]

"""The queue parks a whole shape only when an attempt failed for GPU reasons alone; that
verdict is read from the resource each filter's `Status` says the node was short of, not
from the reason text (which a plugin may word as it likes)."""

from __future__ import annotations

from scheduler.cycle.outcome import Outcome, failure_of
from scheduler.framework.runtime import Diagnosis
from scheduler.framework.status import Resource, Status
from scheduler.plugins import gpu_fit


def _diagnosis(*statuses: Status) -> Diagnosis:
    diagnosis = Diagnosis(total_nodes=len(statuses))
    for node, status in enumerate(statuses):
        diagnosis.failed(node, status)
    return diagnosis


def test_short_of_cpu_or_memory_fails_the_entity_alone_whatever_the_wording():
    worded = Status.unschedulable("SomeCpuPlugin", "node has too few cores", short_of=Resource.CPU)
    assert failure_of(_diagnosis(Status.unschedulable("GpuFit", "x", short_of=Resource.GPU), worded)) is Outcome.FAILED
    memory = Status.unschedulable("SomeMemoryPlugin", "tight", short_of=Resource.MEMORY)
    assert failure_of(_diagnosis(memory)) is Outcome.FAILED


def test_reason_text_alone_decides_nothing():
    # A plugin that says "Insufficient cpu" for a reason that is not a resource (say a policy)
    # does not make the failure the entity's own.
    text_only = Status.unschedulable("Policy", gpu_fit.INSUFFICIENT_CPU)
    assert failure_of(_diagnosis(text_only)) is Outcome.FAILED_GPU
    assert failure_of(_diagnosis(Status.unschedulable("Taints", "untolerated taint"))) is Outcome.FAILED_GPU


def test_the_shipped_filters_carry_their_resource():
    from scheduler.model import Cluster, Node
    from scheduler.state.cluster_state import ClusterState, PodRequest

    state = ClusterState(Cluster((Node("n0", "A100", 1, cpu_milli=1000, memory_mib=1024),)))
    assert gpu_fit.GpuFit().filter(state, PodRequest(2000), 0).short_of is Resource.GPU
    assert gpu_fit.NodeResourcesFit().filter(state, PodRequest(0, cpu_milli=2000), 0).short_of is Resource.CPU
    assert gpu_fit.NodeResourcesFit().filter(state, PodRequest(0, memory_mib=2048), 0).short_of is Resource.MEMORY
    assert failure_of(_diagnosis(gpu_fit.GpuFit().filter(state, PodRequest(2000), 0))) is Outcome.FAILED_GPU

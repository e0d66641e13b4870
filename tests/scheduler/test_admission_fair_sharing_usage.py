"""Admission fair sharing (kueue pkg/util/admissionfairsharing/admission_fair_sharing.go,
pkg/cache/queue/afs, pkg/controller/core/localqueue_controller.go `reconcileConsumedUsage`,
workload_controller.go `updateAfsConsumedUsage`, pkg/scheduler/scheduler.go
`updateEntryPenalty`, pkg/cache/queue/cluster_queue.go `queueOrderingFunc`): the arithmetic
with hand-computed figures, the manifests, and the order of admissions one table row each."""

from __future__ import annotations

import math
from decimal import Context, Decimal

import pytest

from scheduler.admission.admission_fair_sharing import (
    admission_fair_sharing,
    alpha_rate,
    mul_by_float,
)
from scheduler.admission.objects import AdmissionFairSharing
from scheduler.admission.policies import PreemptionPolicy
from scheduler.admission.workloads import admission_workload
from scheduler.errors import InputError
from tests.scheduler.admission_state import QuotaOnlyReplay, workload_run
from tests.scheduler.admission_story import A100
from tests.scheduler.builders import (
    make_cluster_queue,
    make_configuration,
    make_local_queue,
    make_workload,
    queue_config,
)

# Half-life 10 min, sampling every 5 min: α = 1 − 0.5^(300/600) = 1 − √½.
ALPHA = 0.29289321881345254
ALPHA_100 = 1 - 0.5 ** (100 / 600)  # 0.10910128185966073: the weight of 100 s of admitted usage
ALPHA_200 = 1 - 0.5 ** (200 / 600)  # 0.20629947401590026


@pytest.mark.parametrize(("elapsed", "half_life", "want"), [
    (300, 600, ALPHA),
    (600, 600, 0.5),  # one half-life: half the old usage is left
    (1200, 600, 0.75),
    (300, 0, 0.0),  # usageHalfLifeTime 0: calculateAlphaRate returns 0
])
def test_alpha_rate(elapsed, half_life, want):
    assert alpha_rate(elapsed, half_life) == pytest.approx(want, abs=1e-15)


@pytest.mark.parametrize(("value", "factor", "want"), [
    ("8", ALPHA, "2.343145750"),  # 2.34314575050762032 rounded down to nine decimals
    ("1", 1e-10, "0"),  # below 1e-9: rounded down to nothing (decays to zero, no fixed point)
    ("3.5", 0.5, "1.75"),
    ("1073741824", 0.1, "107374182.4"),  # 1Gi of memory, in bytes
])
def test_mul_by_float_rounds_down_to_nine_decimals(value, factor, want):
    got = mul_by_float({"r": Decimal(value)}, factor, Context(prec=80))["r"]
    assert got == Decimal(want)


def _ledger(*, half_life=600.0, interval=300.0, weights=(), lq_weight="1"):
    config = queue_config(
        A100.obj(), make_cluster_queue("team").quota("a100", gpus=8).admission_mode().obj(),
        make_local_queue("a").namespace("ns").cluster_queue("team").weight(lq_weight).obj(),
        make_configuration().admission_fair_sharing(half_life=f"{half_life:g}s", sampling_interval=f"{interval:g}s",
                                                    resource_weights=dict(weights) or None).obj(),
    )
    clock = [0.0]
    return admission_fair_sharing(config, lambda: clock[0]), clock


def _admitted(ledger, name, gpus):
    wl = admission_workload(workload_run(make_workload(name).gpus(gpus).queue("a").obj(), 1), "ns/a", "team")
    usage = {("a100", "nvidia.com/gpu"): gpus * 1000}
    ledger.admitted(wl, usage)
    wl.usage = usage
    return wl


def test_the_entry_penalty_is_settled_at_admission_and_samples_decay_towards_the_admitted_usage():
    """An 8-GPU workload admitted at 0 s: penalty 8·α = 2.343145750; released at 100 s; the
    samples at 300 s and 600 s decay what is left (nothing is admitted any more):
    2.343145750·√½ = 1.656854248… rounded down, then again."""
    ledger, clock = _ledger()
    wl = _admitted(ledger, "w", 8)
    assert ledger.usage("ns/a") == pytest.approx(2.343145750, abs=1e-12)
    clock[0] = 100.0
    ledger.released(wl)
    clock[0] = 299.0
    assert ledger.usage("ns/a") == pytest.approx(2.343145750, abs=1e-12)  # no sample before 300 s
    clock[0] = 300.0
    after_one = 2.343145750 * (1 - ALPHA)
    assert ledger.usage("ns/a") == pytest.approx(after_one, abs=1e-9)
    clock[0] = 650.0
    assert ledger.usage("ns/a") == pytest.approx(after_one * (1 - ALPHA), abs=1e-9)


def test_samples_while_a_workload_holds_quota_add_its_usage():
    """Admitted at 0 s and still running: at 300 s consumed = 2.343145750·(1−α) + 8·α."""
    ledger, clock = _ledger()
    _admitted(ledger, "w", 8)
    clock[0] = 300.0
    assert ledger.usage("ns/a") == pytest.approx(2.343145750 * (1 - ALPHA) + 8 * ALPHA, abs=1e-8)


def test_a_settlement_moves_the_next_sample():
    """A second admission at 200 s settles (decay over 200 s) and the next sample is then due
    at 500 s, not 300 s (the LocalQueue reconcile waits usageSamplingInterval after the last
    update)."""
    ledger, clock = _ledger()
    first = _admitted(ledger, "w1", 8)
    clock[0] = 100.0
    ledger.released(first)
    clock[0] = 200.0
    _admitted(ledger, "w2", 8)
    settled = 2.343145750 * (1 - ALPHA_200) + 8 * ALPHA_200 + 2.343145750
    assert ledger.usage("ns/a") == pytest.approx(settled, abs=1e-8)
    clock[0] = 499.0
    assert ledger.usage("ns/a") == pytest.approx(settled, abs=1e-8)
    clock[0] = 500.0
    assert ledger.usage("ns/a") == pytest.approx(settled * (1 - ALPHA) + 8 * ALPHA, abs=1e-8)


@pytest.mark.parametrize(("weights", "lq_weight", "want"), [
    ((), "1", 2.343145750),
    ((("nvidia.com/gpu", 3.0),), "1", 3 * 2.343145750),  # resourceWeights
    ((), "2", 2.343145750 / 2),  # LocalQueue fairSharing.weight divides
    ((), "0", math.inf),  # weight 0: last, never NaN
])
def test_usage_is_weighted_by_resource_and_divided_by_the_local_queue_weight(weights, lq_weight, want):
    ledger, _ = _ledger(weights=weights, lq_weight=lq_weight)
    _admitted(ledger, "w", 8)
    assert ledger.usage("ns/a") == pytest.approx(want, abs=1e-9)


def test_half_life_zero_means_no_usage_at_all():
    ledger, clock = _ledger(half_life=0.0)
    _admitted(ledger, "w", 8)
    assert ledger.usage("ns/a") == 0.0
    clock[0] = 900.0
    assert ledger.usage("ns/a") == 0.0


# -- manifests ---------------------------------------------------------------------------------


def test_the_configuration_block_and_the_queue_fields_are_read():
    config = queue_config(
        A100.obj(), make_cluster_queue("team").quota("a100", gpus=8).admission_mode().obj(),
        make_cluster_queue("other").quota("a100", gpus=8).admission_mode("NoAdmissionFairSharing").obj(),
        make_local_queue("a").namespace("ns").cluster_queue("team").weight("500m").obj(),
        make_configuration().admission_fair_sharing(half_life="1h", sampling_interval=None,
                                                    resource_weights={"memory": 0, "nvidia.com/gpu": 2}).obj(),
    )
    assert config.configuration.admission_fair_sharing == AdmissionFairSharing(
        3600.0, 300.0, (("memory", 0.0), ("nvidia.com/gpu", 2.0)))  # the interval defaults to 5m
    assert config.cluster_queues["team"].usage_based_admission_fair_sharing
    assert not config.cluster_queues["other"].usage_based_admission_fair_sharing
    assert config.local_queues["ns/a"].fair_sharing_weight == 0.5
    assert config.warnings == ()  # neither field is warned about any more


def test_the_feature_gate_off_turns_it_off():
    config = queue_config(make_configuration().admission_fair_sharing().feature_gate("AdmissionFairSharing", False).obj())
    assert config.configuration.admission_fair_sharing is None


@pytest.mark.parametrize(("change", "field"), [
    (lambda c: c["admissionFairSharing"]["resourceWeights"].update({"cpu": -1}), "admissionFairSharing.resourceWeights.cpu"),
    (lambda c: c["admissionFairSharing"].update({"usageHalfLifeTime": "-5m"}), "admissionFairSharing.usageHalfLifeTime"),
])
def test_invalid_configuration_values_name_the_field(change, field):
    configuration = make_configuration().admission_fair_sharing(resource_weights={"cpu": 1}).obj()
    change(configuration)
    with pytest.raises(InputError, match=field.replace(".", r"\.")):
        queue_config(configuration)


def test_an_unknown_admission_mode_names_the_field():
    with pytest.raises(InputError, match=r"spec\.admissionScope\.admissionMode"):
        queue_config(A100.obj(), make_cluster_queue("team").quota("a100", gpus=8).admission_mode("Usage").obj())


# -- the order of admissions -------------------------------------------------------------------


def _team(*, mode=True, weight_a=None):
    queue = make_cluster_queue("team").quota("a100", gpus=8)
    return [queue.admission_mode() if mode else queue,
            make_local_queue("a").namespace("ns").cluster_queue("team").weight(weight_a or "1"),
            make_local_queue("b").namespace("ns").cluster_queue("team")]


def _job(name, queue, at, priority=0):
    return make_workload(name).queue(queue).at(at).runs_for(100).gpus(8).priority(priority).obj()


# One 8-GPU ClusterQueue, every job 8 GPUs for 100 s: a1, a2, a3 of LocalQueue a arrive at
# 0-2 s, b1, b2 of b at 3-4 s. Kueue's usual order is arrival: a1 a2 a3 b1 b2.
# With admission fair sharing (half-life 10 min, sampling 5 min) after a1 (penalty 2.343):
# 100 s b (0) < a (2.343): b1; 200 s a (2.343) < b (8·α100 + 2.343 = 3.216): a2;
# 300 s a (2.343·(1−α200) + 8·α200 + 2.343 = 5.853) > b (3.216): b2; 400 s a3.
JOBS = [_job("a1", "a", 0), _job("a2", "a", 1), _job("a3", "a", 2), _job("b1", "b", 3), _job("b2", "b", 4)]
FIFO = ["a1", "a2", "a3", "b1", "b2"]
AFS = make_configuration().admission_fair_sharing(half_life="10m", sampling_interval="5m")


@pytest.mark.parametrize(("objects", "jobs", "want"), [
    pytest.param([*_team(mode=False), AFS], JOBS, FIFO, id="ClusterQueue without admissionScope: arrival order"),
    pytest.param(_team(), JOBS, FIFO, id="no admissionFairSharing in the Configuration: arrival order"),
    pytest.param([*_team(), make_configuration().admission_fair_sharing().feature_gate("AdmissionFairSharing", False)],
                 JOBS, FIFO, id="gate AdmissionFairSharing off: arrival order"),
    pytest.param([*_team(), AFS], JOBS, ["a1", "b1", "a2", "b2", "a3"], id="lower LocalQueue usage first"),
    pytest.param([*_team(weight_a="2"), AFS], JOBS, ["a1", "b1", "a2", "a3", "b2"],
                 id="LocalQueue a of weight 2: 300 s a (5.853 / 2 = 2.93) < b (3.216): a3 before b2"),
    pytest.param([*_team(), AFS], [*JOBS[:3], _job("b1", "b", 3, priority=-5)], ["a1", "b1", "a2", "a3"],
                 id="usage orders before priority: b1, of lower priority, still goes second"),
    pytest.param([*_team(mode=False), AFS], [*JOBS[:3], _job("b1", "b", 3, priority=-5)], ["a1", "a2", "a3", "b1"],
                 id="the same without admissionScope: b1 last"),
    pytest.param([*_team(), make_configuration().admission_fair_sharing(resource_weights={"nvidia.com/gpu": 0})],
                 JOBS, FIFO, id="GPUs weighted 0: every usage 0, arrival order"),
    pytest.param([*_team(), make_configuration().admission_fair_sharing(half_life="0s")], JOBS, FIFO,
                 id="usageHalfLifeTime 0: no usage, arrival order"),
])
def test_admission_order_inside_a_cluster_queue(objects, jobs, want):
    log = QuotaOnlyReplay(*(o.obj() for o in objects)).submit(*jobs).run(until=2000)
    assert [w for _, event, w, _ in log if event == "admitted"] == want


# -- preemption inside the ClusterQueue ----------------------------------------------------------


def _preempting_team(*, mode=True):
    queue = make_cluster_queue("team").quota("a100", gpus=8).preemption(within=PreemptionPolicy.LOWER_PRIORITY)
    return [queue.admission_mode() if mode else queue,
            *(make_local_queue(name).namespace("ns").cluster_queue("team") for name in ("a", "b", "c")), AFS]


# a0 (a, 8 GPUs, 0-10 s) leaves LocalQueue a a usage of 2.343; a-low (a, 4 GPUs) is admitted
# at 10 s (a: 2.343·(1−α10) + 4·α10 + 4·α ≈ 3.50), b-low (b, 4 GPUs) at 20 s (b: 4·α = 1.17).
# At 30 s "urgent" (c, priority 10, 4 GPUs) preempts one of them.
PREEMPTION_JOBS = [
    make_workload("a0").queue("a").at(0).runs_for(10).gpus(8).obj(),
    make_workload("a-low").queue("a").at(10).runs_for(1000).gpus(4).obj(),
    make_workload("b-low").queue("b").at(20).runs_for(1000).gpus(4).obj(),
    make_workload("urgent").queue("c").at(30).runs_for(100).gpus(4).priority(10).obj(),
]


@pytest.mark.parametrize(("mode", "victim"), [
    pytest.param(True, "a-low", id="admission fair sharing: the LocalQueue of higher usage loses first"),
    pytest.param(False, "b-low", id="usual order: the most recently admitted loses first"),
])
def test_the_candidate_of_the_busier_local_queue_is_preempted_first(mode, victim):
    """kueue pkg/scheduler/preemption/common/ordering.go CandidatesOrdering step 2 (within one
    ClusterQueue, different LocalQueues: the higher LocalQueue usage first), as
    classical/candidate_generator.go sorts the preemptor's own queue's candidates."""
    log = QuotaOnlyReplay(*(o.obj() for o in _preempting_team(mode=mode))).submit(*PREEMPTION_JOBS).run(until=60)
    assert [(t, w) for t, event, w, _ in log if event == "evicted"] == [(30.0, victim)]

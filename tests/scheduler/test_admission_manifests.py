"""Kueue manifests the admission layer depends on: invalid fields are rejected with their
path, Kueue's own Configuration (waitForPodsReady, fairSharing) is read with the defaults of
its API version, and the replay writes the ClusterQueues' quotas for the marts."""

from __future__ import annotations

import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from scheduler.admission import parse_queue_config
from scheduler.admission.objects import FairSharing, WaitForPodsReady
from scheduler.admission.policies import FairSharingStrategy, RequeueTimestamp
from scheduler.errors import InputError
from tests.scheduler.admission_story import A100, kueue_rows
from tests.scheduler.builders import make_cluster_queue, make_node, make_workload

FLAVOR = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: a100}\n---\n"
CQ = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n"
CONFIG = "apiVersion: config.kueue.x-k8s.io/v1beta1\nkind: Configuration\n"


@pytest.mark.parametrize(
    ("yaml_text", "want_field", "want_message"),
    [
        pytest.param(
            FLAVOR + CQ + "  cohortName: org\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
            "    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 4, lendingLimit: 8}]}]\n",
            "spec.resourceGroups[0].flavors[0].resources[0].lendingLimit", "must be less than or equal to nominalQuota (4)",
            id="lendingLimit above nominalQuota",
        ),
        pytest.param(
            FLAVOR + CQ + "  preemption: {borrowWithinCohort: {policy: LowerPriority}}\n",
            "spec.preemption.borrowWithinCohort.policy", "must be Never when reclaimWithinCohort is Never",
            id="borrowWithinCohort without reclaimWithinCohort",
        ),
        pytest.param(
            FLAVOR + CQ + "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu, cpu]\n"
            "    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n",
            "spec.resourceGroups[0].flavors[0].resources", "missing or repeated: cpu",
            id="a flavor not listing every covered resource",
        ),
        pytest.param(
            FLAVOR + CQ + "  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
            "    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 4}]}]\n"
            "  - coveredResources: [cpu]\n    flavors: [{name: a100, resources: [{name: cpu, nominalQuota: 4}]}]\n",
            "spec.resourceGroups[1].flavors[0].name", "a flavor belongs to one resource group",
            id="one flavor in two resource groups",
        ),
        pytest.param(FLAVOR + CQ + "  flavorFungibility: {preference: Cheapest}\n", "spec.flavorFungibility.preference",
                     "must be one of BorrowingOverPreemption, PreemptionOverBorrowing, got 'Cheapest'",
                     id="unknown fungibility preference"),
        pytest.param(FLAVOR + CQ + "  flavorFungibility: {whenCanBorrow: Always}\n", "spec.flavorFungibility.whenCanBorrow",
                     "must be one of MayStopSearch, TryNextFlavor, Borrow, got 'Always'",
                     id="unknown whenCanBorrow (the v1beta1 spelling Borrow is listed)"),
        pytest.param(FLAVOR + CQ + "  queueingStrategy: FIFO\n", "spec.queueingStrategy",
                     "must be one of BestEffortFIFO, StrictFIFO, got 'FIFO'", id="unknown queueing strategy"),
        pytest.param(FLAVOR + CQ + "  preemption: {withinClusterQueue: Any}\n", "spec.preemption.withinClusterQueue",
                     "must be one of Never, LowerPriority, LowerOrNewerEqualPriority, got 'Any'",
                     id="withinClusterQueue Any: a policy only reclaimWithinCohort has"),
        pytest.param(FLAVOR + CQ + "  preemption: {reclaimWithinCohort: LowerOrNewerEqualPriority}\n",
                     "spec.preemption.reclaimWithinCohort", "must be one of Never, LowerPriority, Any",
                     id="reclaimWithinCohort LowerOrNewerEqualPriority: a policy only withinClusterQueue has"),
        pytest.param(FLAVOR + CQ + "  stopPolicy: Pause\n", "spec.stopPolicy", "must be one of None, Hold, HoldAndDrain",
                     id="unknown stop policy"),
        pytest.param(CONFIG + "waitForPodsReady: {enable: true, requeuingStrategy: {timestamp: Admission}}\n",
                     "waitForPodsReady.requeuingStrategy.timestamp", "must be one of Eviction, Creation, got 'Admission'",
                     id="unknown requeuing timestamp"),
        pytest.param(CONFIG + "waitForPodsReady: {enable: true, timeout: five minutes}\n", "waitForPodsReady.timeout",
                     "must be a duration such as 5m or 300s", id="waitForPodsReady timeout not a duration"),
        pytest.param(CONFIG + "waitForPodsReady: {enable: true, requeuingStrategy: {backoffLimitCount: -1}}\n",
                     "waitForPodsReady.requeuingStrategy.backoffLimitCount", "whole number >= 0", id="negative backoffLimitCount"),
        pytest.param(CONFIG + "fairSharing: {enable: true, preemptionStrategies: [LessThanInitialShare, LessThanOrEqualToFinalShare]}\n",
                     "fairSharing.preemptionStrategies", "must be one of", id="fair-sharing strategies in a forbidden order"),
    ],
)
def test_an_invalid_field_is_rejected_with_its_path(yaml_text, want_field, want_message):
    with pytest.raises(InputError) as caught:
        parse_queue_config(yaml_text, source="queues.yaml")
    assert caught.value.field == want_field
    assert want_message in str(caught.value) and "\n" not in str(caught.value)


def test_the_command_line_names_file_document_and_field_and_writes_nothing(tmp_path):
    (tmp_path / "cluster.csv").write_text("node,gpu_model,gpus\nn1,A100,8\n")
    (tmp_path / "trace.csv").write_text("workload_id,submit_time,duration_s,pods,gpus_per_pod,queue\nw1,0,60,1,1,q\n")
    (tmp_path / "queues.yaml").write_text(
        FLAVOR + CQ + "  cohortName: org\n  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n"
        "    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 4, lendingLimit: 8}]}]\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "gpu_finops.cli", "replay", "--trace", "trace.csv", "--cluster", "cluster.csv",
         "--queues", "queues.yaml", "--out", "run", "-q"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "gpu-finops replay: queues.yaml: document 2: field 'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit': "
        "must be less than or equal to nominalQuota (4), got 8"
    )
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    ("document", "want_wait", "want_fair"),
    [
        pytest.param("", WaitForPodsReady(1800.0, False), None, id="no Configuration: current Kueue's defaults (v1beta2)"),
        pytest.param(CONFIG + "waitForPodsReady: {enable: true}\n", WaitForPodsReady(300.0, True), None,
                     id="v1beta1 enable: 5m, blockAdmission on"),
        pytest.param(CONFIG + "waitForPodsReady: {timeout: 10m}\n", None, None, id="v1beta1 without enable: off"),
        pytest.param(
            CONFIG + "waitForPodsReady:\n  enable: true\n  timeout: 1h30m\n  blockAdmission: false\n  recoveryTimeout: 2m\n"
            "  requeuingStrategy: {timestamp: Creation, backoffLimitCount: 3, backoffBaseSeconds: 10, backoffMaxSeconds: 100}\n",
            WaitForPodsReady(5400.0, False, RequeueTimestamp.CREATION, 10.0, 100.0, 3, 120.0), None, id="v1beta1 everything set",
        ),
        pytest.param("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n", WaitForPodsReady(1800.0, False), None,
                     id="v1beta2: always on, 30m, no blocking"),
        pytest.param(CONFIG + "fairSharing: {enable: true}\n", None, FairSharing(), id="v1beta1 fair sharing, default strategies"),
        pytest.param("apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\nfeatureGates: {DisableWaitForPodsReady: true}\n"
                     "fairSharing: {preemptionStrategies: [LessThanInitialShare]}\n",
                     None, FairSharing((FairSharingStrategy.LESS_THAN_INITIAL_SHARE,)), id="v1beta2 fair sharing on by presence"),
    ],
)
def test_kueue_configuration_defaults_follow_its_api_version(document, want_wait, want_fair):
    config = parse_queue_config(FLAVOR + document if document else FLAVOR)
    assert config.configuration.wait_for_pods_ready == want_wait
    assert config.configuration.fair_sharing == want_fair


def test_backoff_doubles_from_60s_and_stops_at_3600s():
    wait = WaitForPodsReady()
    assert [wait.backoff_s(n) for n in range(1, 9)] == [60, 120, 240, 480, 960, 1920, 3600, 3600]


def test_the_replay_writes_cluster_queues_parquet_in_base_units(tmp_path):
    manifests = [A100.obj(), make_cluster_queue("team-a").cohort("org").quota("a100", gpus=8, borrowing_limit=4).obj(),
                 make_cluster_queue("team-b").cohort("org").quota("a100", gpus=0.5).obj()]
    kueue_rows(tmp_path, [make_node("n1").obj()], [make_workload("w").queue("team-a").runs_for(60).obj()], manifests)
    table = pq.read_table(tmp_path / "run-gang-v1.37" / "cluster_queues.parquet")
    assert table.to_pylist() == [
        {"cluster_queue": "team-a", "cohort": "org", "flavor": "a100", "resource": "nvidia.com/gpu",
         "nominal_quota": 8.0, "borrowing_limit": 4.0, "lending_limit": None, "fair_sharing_weight": 1.0},
        {"cluster_queue": "team-b", "cohort": "org", "flavor": "a100", "resource": "nvidia.com/gpu",
         "nominal_quota": 0.5, "borrowing_limit": None, "lending_limit": None, "fair_sharing_weight": 1.0},
    ]


def test_feature_gates_the_replay_models_are_read_and_others_are_warned_about():
    """kueue pkg/features/kube_features.go: PrioritizePreemptorWorkloads (alpha, off) and
    PartialAdmission (beta, on) change what the replay decides; any other gate is said once."""
    v1beta2 = "apiVersion: config.kueue.x-k8s.io/v1beta2\nkind: Configuration\n"
    default = parse_queue_config(FLAVOR + v1beta2).configuration
    assert (default.prioritize_preemptor_workloads, default.partial_admission) == (False, True)
    config = parse_queue_config(FLAVOR + v1beta2 + "featureGates: {PrioritizePreemptorWorkloads: true, "
                                "PartialAdmission: false, TopologyAwareScheduling: true}\n")
    assert (config.configuration.prioritize_preemptor_workloads, config.configuration.partial_admission) == (True, False)
    assert default.preserve_scan_progress
    off = parse_queue_config(FLAVOR + v1beta2 + "featureGates: {FlavorFungibilityPreserveScanProgress: false}\n")
    assert not off.configuration.preserve_scan_progress and not [w for w in off.warnings if "feature gate" in w]
    assert [w for w in config.warnings if "feature gate" in w] == [
        "queues.yaml: document 2: feature gate 'TopologyAwareScheduling' is not modelled; "
        "the replay runs as with its default",
    ]
    with pytest.raises(InputError, match="featureGates.PartialAdmission"):
        parse_queue_config(FLAVOR + v1beta2 + "featureGates: {PartialAdmission: 'no'}\n")

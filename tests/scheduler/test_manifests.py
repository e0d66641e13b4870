"""Kueue manifests: real YAML in, frozen queue configuration out; bad fields named by path."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.admission import (
    flavor_matches,
    parse_quantity,
    parse_queue_config,
    quantity_to_milli,
    read_queue_config,
)
from scheduler.admission.policies import PreemptionPolicy, QueueingStrategy
from scheduler.errors import InputError
from scheduler.model.cluster import Node

DEMO_QUEUES = Path(__file__).resolve().parents[2] / "data" / "demo" / "queues.yaml"

CLUSTER_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: a100}
spec: {nodeLabels: {nvidia.com/gpu.product: A100}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: research}
spec:
  cohort: org
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: a100
      resources: [{name: nvidia.com/gpu, nominalQuota: 16, borrowingLimit: 8}]
    - name: h100
      resources: [{name: nvidia.com/gpu, nominalQuota: QUOTA}]
"""


def test_the_generated_demo_queues_parse_into_teams_in_one_cohort():
    config = read_queue_config(DEMO_QUEUES)
    assert config.warnings == ()
    assert set(config.flavors) == {"h100", "a100", "l40s"}
    assert len(config.cluster_queues) >= 4
    assert {cq.cohort for cq in config.cluster_queues.values()} == {"gpu-cluster"}
    queue = config.cluster_queues["team-vision"]
    assert queue.queueing_strategy is QueueingStrategy.BEST_EFFORT_FIFO
    assert (queue.preemption.reclaim_within_cohort, queue.preemption.within_cluster_queue) == (
        PreemptionPolicy.ANY, PreemptionPolicy.LOWER_PRIORITY)
    assert queue.flavor_names == ("h100", "a100", "l40s")
    gpu = queue.quota("h100", "nvidia.com/gpu")
    assert gpu.nominal_milli > 0 and gpu.borrowing_limit_milli > 0 and gpu.lending_limit_milli is None
    # nominal quotas of all teams add up to the cluster's GPUs of that model
    assert sum(cq.quota("h100", "nvidia.com/gpu").nominal_milli for cq in config.cluster_queues.values()) == 256 * 1000
    assert config.cluster_queue_for("vision") == "team-vision"
    assert config.cluster_queue_for("team-vision/vision") == "team-vision"
    assert config.cluster_queue_for("nope") is None
    assert config.priority_classes["inference-critical"].value == 1000
    assert config.flavors["h100"].labels == {"nvidia.com/gpu.product": "H100"}


def test_v1beta1_fields_and_a_flavor_without_labels():
    config = parse_queue_config(CLUSTER_QUEUE.replace("QUOTA", '"8"'))
    queue = config.cluster_queues["research"]
    assert queue.cohort == "org"
    assert queue.quota("a100", "nvidia.com/gpu").borrowing_limit_milli == 8000
    assert queue.quota("h100", "nvidia.com/gpu").nominal_milli == 8000
    assert config.flavors["h100"].node_labels == ()


def test_an_invalid_quantity_is_rejected_with_its_document_and_field_path():
    with pytest.raises(InputError) as caught:
        parse_queue_config(CLUSTER_QUEUE.replace("QUOTA", "lots"), source="/somewhere/queues.yaml")
    assert str(caught.value) == (
        "queues.yaml: document 3: field 'spec.resourceGroups[0].flavors[1].resources[0].nominalQuota': "
        "not a quantity: 'lots'"
    )


@pytest.mark.parametrize(
    ("yaml_text", "field", "message"),
    [
        ("- just\n- a list\n", None, "must be a mapping"),
        ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {}\n", "metadata.name", "non-empty name"),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec: {queueingStrategy: Random}\n",
            "spec.queueingStrategy", "BestEffortFIFO, StrictFIFO",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec: {preemption: {withinClusterQueue: Always}}\n",
            "spec.preemption.withinClusterQueue", "must be one of",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: ns}\nspec: {clusterQueue: missing}\n",
            "spec.clusterQueue", "not defined",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: p}\nvalue: high\n",
            "value", "whole number",
        ),
        (
            "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: q}\nspec:\n  resourceGroups:\n"
            "  - coveredResources: [cpu]\n    flavors: [{name: f, resources: [{name: cpu, nominalQuota: 1, borrowingLimit: 1}]}]\n",
            "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit", "only allowed when",
        ),
        ("a: [unclosed\n", None, "not valid YAML: line"),
    ],
)
def test_invalid_manifests_raise_one_line_errors(yaml_text, field, message):
    with pytest.raises(InputError) as caught:
        parse_queue_config(yaml_text)
    assert caught.value.field == field
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_unknown_fields_and_foreign_kinds_are_warnings_not_failures():
    config = parse_queue_config(
        "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n---\n"
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n"
        "spec: {nodeLabels: {cloud.example.com/pool: x}, colour: blue}\n"
    )
    assert "f" in config.flavors
    # A nodeLabel of any key selects nodes by the labels the cluster file gives them: whether
    # some node carries it is the replay's warning (`unmatched_flavor_warnings`), not the file's.
    assert len(config.warnings) == 2
    assert "document 1: Namespace (v1) is not a Kueue object" in config.warnings[0]
    assert any("field 'spec.colour' is not a known field" in w for w in config.warnings)


@pytest.mark.parametrize(
    ("text", "milli"),
    [("8", 8000), (8, 8000), ("500m", 500), ("1.5", 1500), ("64Gi", 64 * 2**30 * 1000), ("1Ti", 2**40 * 1000), ("1k", 10**6), ("1e3", 10**6), ("0.1m", 1)],
)
def test_kubernetes_quantities(text, milli):
    assert quantity_to_milli(text) == milli


@pytest.mark.parametrize("text", ["lots", "", "8 Gi", "1.2.3", True, None, "Gi"])
def test_not_quantities(text):
    with pytest.raises(ValueError):
        parse_quantity(text)


def test_flavor_node_labels_select_by_gpu_model_and_topology():
    config = parse_queue_config(
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: rack-1-h100}\n"
        "spec: {nodeLabels: {nvidia.com/gpu.product: H100, gpu-finops/rack: r1, topology.kubernetes.io/zone: z1}}\n"
    )
    flavor = config.flavors["rack-1-h100"]
    assert flavor_matches(flavor, Node("n1", "H100", 8, zone="z1", rack="r1"))
    assert not flavor_matches(flavor, Node("n2", "H100", 8, zone="z1", rack="r2"))
    assert not flavor_matches(flavor, Node("n3", "A100", 8, zone="z1", rack="r1"))

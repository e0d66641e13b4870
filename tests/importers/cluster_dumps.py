"""A small GPU cluster's history as the Kubernetes API prints it, for the importer tests.

The shapes follow real `kubectl get -o json` output: a ``kind: List`` of objects with
``metadata.managedFields``, ``resourceVersion``, owner references, ``status.conditions`` and
container statuses; the second pods document is a raw-API ``PodList`` whose items carry no
``kind``. Fields are missing where the API leaves them out (a pod that was never scheduled has
no ``startTime``, no ``containerStatuses``, no ``nodeName``).

The story (times on Monday 2026-03-02, UTC; the dump is taken at 14:00):

- team-llm: JobSet ``llm-pretrain`` (4 workers x 8 H100, Kueue queue ``main``, rack topology preferred,
  priority class ``high``), 08:00 → 09:00 → 12:00; one worker restarted twice in place.
- team-llm: scheduler-plugins PodGroup ``bert`` (3 x 4 GPUs, minMember 2), one pod still running.
- team-llm: older scheduler-plugins label ``pod-group.scheduling.sigs.k8s.io``: ``old-pg`` (2 x 2).
- team-vision: LeaderWorkerSet ``vllm`` replica group 0 (leader 2 GPUs + worker 4 GPUs: two shapes).
- team-vision: native Workload API v1alpha1 ``sim`` (pod group ``workers``, gang minCount 2).
- team-vision: native v1beta1 PodGroups ``moe-experts`` (2 pods) and ``moe-router`` (1 pod)
  under CompositePodGroup ``moe`` (minGroupCount 2).
- team-vision: Indexed Job ``finetune`` (parallelism 2): index 1 failed and was recreated.
- team-vision: Kueue plain pod group ``eval`` (2 pods, total count 2).
- team-web: a Deployment's inference pod, running at the dump; a notebook with a DRA claim
  template (1 gpu.nvidia.com device).
- rejected: a pod Pending since 10:00 (Unschedulable), a pod just created (no status), a CPU-only
  coredns pod, a pod asking for "eight" GPUs, a Service, and an earlier copy of a pod found again
  in the second document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DAY = "2026-03-02"
H100 = "NVIDIA-H100-80GB-HBM3"
A100 = "NVIDIA-A100-SXM4-80GB"


def t(clock: str) -> str:
    return f"{DAY}T{clock}Z"


def _managed(clock: str) -> list[dict[str, Any]]:
    return [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
             "time": t(clock), "fieldsType": "FieldsV1", "fieldsV1": {"f:metadata": {}}}]


def container(gpus: Any = None, cpu: str = "8", memory: str = "64Gi", name: str = "main", in_limits: bool = True
              ) -> dict[str, Any]:
    limits: dict[str, Any] = {"memory": memory}
    requests: dict[str, Any] = {"cpu": cpu, "memory": memory}
    if gpus is not None:
        (limits if in_limits else requests)["nvidia.com/gpu"] = gpus
    return {"name": name, "image": "nvcr.io/nvidia/pytorch:25.01-py3",
            "resources": {"limits": limits, "requests": requests},
            "terminationMessagePath": "/dev/termination-log", "imagePullPolicy": "IfNotPresent"}


def pod(name: str, namespace: str, *, created: str, gpus: Any = 8, started: str | None = None,
        finished: str | None = None, phase: str | None = None, node: str | None = None,
        labels: dict[str, str] | None = None, annotations: dict[str, str] | None = None,
        owner: tuple[str, str, str] | None = None, restarts: int = 0, spec_extra: dict[str, Any] | None = None,
        status: dict[str, Any] | None = None, containers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """A Pod as `kubectl get -o json` prints it, status derived from the times given."""
    metadata: dict[str, Any] = {
        "name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}", "resourceVersion": "48211",
        "creationTimestamp": t(created), "labels": labels or {}, "managedFields": _managed(created),
    }
    if annotations:
        metadata["annotations"] = annotations
    if owner:
        kind, owner_name, api = owner
        metadata["ownerReferences"] = [{"apiVersion": api, "kind": kind, "name": owner_name,
                                        "uid": f"uid-{kind}-{owner_name}", "controller": True,
                                        "blockOwnerDeletion": True}]
    spec: dict[str, Any] = {
        "containers": containers or [container(gpus)], "restartPolicy": "Never", "schedulerName": "default-scheduler",
        "priority": 0, "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        **(spec_extra or {}),
    }
    if node:
        spec["nodeName"] = node
    result: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}
    if status is not None:
        result["status"] = status
    elif started is not None:
        state: dict[str, Any]
        if finished:
            state = {"terminated": {"exitCode": 0 if phase != "Failed" else 1,
                                    "reason": "Completed" if phase != "Failed" else "Error",
                                    "startedAt": t(started), "finishedAt": t(finished)}}
        else:
            state = {"running": {"startedAt": t(started)}}
        result["status"] = {
            "phase": phase or ("Succeeded" if finished else "Running"), "startTime": t(started),
            "hostIP": "10.0.0.7", "podIP": "10.8.3.4", "qosClass": "Burstable",
            "conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": t(started)}],
            "containerStatuses": [{"name": "main", "ready": not finished, "restartCount": restarts,
                                   "image": "nvcr.io/nvidia/pytorch:25.01-py3", "started": not finished,
                                   "state": state, "lastState": {}}],
        }
    return result


def jobset_worker(index: int, *, restarts: int = 0) -> dict[str, Any]:
    name = f"llm-pretrain-workers-0-{index}-x7k2p"
    return pod(name, "team-llm", created="08:00:00", started="09:00:00" if index < 3 else "09:00:05",
               finished="12:00:00", node=f"h100-{index}", restarts=restarts,
               labels={"jobset.sigs.k8s.io/jobset-name": "llm-pretrain",
                       "jobset.sigs.k8s.io/replicatedjob-name": "workers", "jobset.sigs.k8s.io/job-index": "0",
                       "batch.kubernetes.io/job-completion-index": str(index),
                       "kueue.x-k8s.io/queue-name": "main", "kueue.x-k8s.io/priority-class": "high"},
               annotations={"batch.kubernetes.io/job-completion-index": str(index),
                            "kueue.x-k8s.io/podset-preferred-topology": "cloud.google.com/gce-topology-subblock"},
               owner=("Job", "llm-pretrain-workers-0", "batch/v1"))


def pods_list() -> dict[str, Any]:
    """The first document: `kubectl get pods,podgroups,workloads,jobs,... -A -o json`."""
    items: list[dict[str, Any]] = [jobset_worker(i, restarts=2 if i == 1 else 0) for i in range(4)]
    bert = {"scheduling.x-k8s.io/pod-group": "bert"}
    items += [
        pod("bert-0", "team-llm", created="09:30:00", gpus=4, started="09:31:00", finished="11:31:00",
            node="h100-0", labels=bert),
        pod("bert-1", "team-llm", created="09:30:00", gpus=4, started="09:31:10", finished="11:31:00",
            node="h100-1", labels=bert),
        pod("bert-2", "team-llm", created="09:30:00", gpus=4, started="09:31:20", node="h100-1", labels=bert),
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "bert", "namespace": "team-llm", "creationTimestamp": t("09:29:59")},
         "spec": {"minMember": 2, "scheduleTimeoutSeconds": 60}, "status": {"phase": "Running", "running": 1}},
        pod("old-pg-0", "team-llm", created="10:00:00", gpus=2, started="10:00:30", finished="10:30:00",
            node="a100-0", labels={"pod-group.scheduling.sigs.k8s.io": "old-pg"}),
        pod("old-pg-1", "team-llm", created="10:00:00", gpus=2, started="10:00:40", finished="10:30:00",
            node="a100-0", labels={"pod-group.scheduling.sigs.k8s.io": "old-pg"}),
    ]
    lws = {"leaderworkerset.sigs.k8s.io/name": "vllm", "leaderworkerset.sigs.k8s.io/group-index": "0"}
    items += [
        pod("vllm-0", "team-vision", created="08:30:00", gpus=2, started="08:31:00", finished="13:00:00",
            node="a100-1", labels={**lws, "leaderworkerset.sigs.k8s.io/worker-index": "0"},
            annotations={"leaderworkerset.sigs.k8s.io/size": "2"}, owner=("StatefulSet", "vllm", "apps/v1")),
        pod("vllm-0-1", "team-vision", created="08:30:01", gpus=4, started="08:31:30", finished="13:00:00",
            node="a100-1", labels={**lws, "leaderworkerset.sigs.k8s.io/worker-index": "1"},
            annotations={"leaderworkerset.sigs.k8s.io/size": "2"}, owner=("StatefulSet", "vllm-0", "apps/v1")),
        {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
         "metadata": {"name": "vllm", "namespace": "team-vision"},
         "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 2, "restartPolicy": "None"}}},
        {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload",
         "metadata": {"name": "sim", "namespace": "team-vision", "creationTimestamp": t("10:59:00")},
         "spec": {"podGroups": [{"name": "workers", "policy": {"gang": {"minCount": 2}}}]}},
    ]
    items += [pod(f"sim-{i}", "team-vision", created="11:00:00", gpus=8, started="11:01:00", finished="11:41:00",
                  node=f"h100-{i + 1}", spec_extra={"workloadRef": {"name": "sim", "podGroup": "workers"}})
              for i in range(3)]
    items += [
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "CompositePodGroup",
         "metadata": {"name": "moe", "namespace": "team-vision"},
         "spec": {"schedulingPolicy": {"gang": {"minGroupCount": 2}}, "disruptionMode": {"all": {}}}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
         "metadata": {"name": "moe-experts", "namespace": "team-vision"},
         "spec": {"parentCompositePodGroupName": "moe", "schedulingPolicy": {"gang": {"minCount": 2}},
                  "schedulingConstraints": {"topology": [{"key": "topology.kubernetes.io/zone"}]}}},
        {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
         "metadata": {"name": "moe-router", "namespace": "team-vision"},
         "spec": {"parentCompositePodGroupName": "moe", "schedulingPolicy": {"gang": {"minCount": 1}}}},
    ]
    items += [pod(f"moe-experts-{i}", "team-vision", created="12:00:00", gpus=8, started="12:02:00",
                  finished="13:02:00", node=f"h100-{i}",
                  spec_extra={"schedulingGroup": {"podGroupName": "moe-experts"}}) for i in range(2)]
    items.append(pod("moe-router-0", "team-vision", created="12:00:00", gpus=1, started="12:02:00",
                     finished="13:02:00", node="h100-2", spec_extra={"schedulingGroup": {"podGroupName": "moe-router"}}))
    job = ("Job", "finetune", "batch/v1")
    items += [
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "finetune", "namespace": "team-vision"},
         "spec": {"parallelism": 2, "completions": 2, "completionMode": "Indexed", "backoffLimit": 3}},
        pod("finetune-0-a1b2c", "team-vision", created="09:00:00", gpus=1, started="09:00:20", finished="10:00:20",
            node="a100-0", owner=job, annotations={"batch.kubernetes.io/job-completion-index": "0"}),
        pod("finetune-1-d3e4f", "team-vision", created="09:00:00", gpus=1, started="09:00:20", finished="09:10:00",
            phase="Failed", node="a100-0", owner=job, annotations={"batch.kubernetes.io/job-completion-index": "1"}),
        pod("finetune-1-g5h6i", "team-vision", created="09:10:05", gpus=1, started="09:10:30", finished="10:05:00",
            node="a100-0", owner=job, annotations={"batch.kubernetes.io/job-completion-index": "1"}),
    ]
    kueue_group = {"kueue.x-k8s.io/pod-group-name": "eval", "kueue.x-k8s.io/queue-name": "main"}
    items += [pod(f"eval-{i}", "team-vision", created="13:00:00", gpus=2, started="13:00:10", finished="13:20:00",
                  node="a100-1", labels={**kueue_group, "kueue.x-k8s.io/pod-group-pod-index": str(i)},
                  annotations={"kueue.x-k8s.io/pod-group-total-count": "2"}) for i in range(2)]
    items += [
        pod("chat-7d9f8b6c4-qwz2x", "team-web", created="07:00:00", gpus=1, started="07:01:00", node="a100-1",
            owner=("ReplicaSet", "chat-7d9f8b6c4", "apps/v1"),
            spec_extra={"nodeSelector": {"nvidia.com/gpu.product": A100}}),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one-gpu", "namespace": "team-web"},
         "spec": {"spec": {"devices": {"requests": [
             {"name": "gpu", "exactly": {"deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount",
                                         "count": 1}}]}}}},
        pod("notebook-ana", "team-web", created="08:00:00", gpus=None, started="08:00:40", finished="10:00:00",
            node="a100-1", containers=[{"name": "main", "image": "jupyter/base",
                                        "resources": {"claims": [{"name": "gpu"}],
                                                      "requests": {"cpu": "2", "memory": "8Gi"}}}],
            spec_extra={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]}),
        pod("stuck-train", "team-llm", created="10:00:00", gpus=8, status={
            "phase": "Pending", "qosClass": "Burstable",
            "conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                            "lastTransitionTime": t("10:00:01"),
                            "message": "0/6 nodes are available: 6 Insufficient nvidia.com/gpu. "
                                       "preemption: 0/6 nodes are available: 6 No preemption victims found."}]}),
        pod("just-created", "team-llm", created="13:59:58", gpus=8, status={}),
        pod("coredns-5d78c9869d-abcde", "kube-system", created="06:00:00", gpus=None, started="06:00:05",
            node="cpu-0", owner=("ReplicaSet", "coredns-5d78c9869d", "apps/v1"),
            containers=[container(None, cpu="100m", memory="70Mi")]),
        pod("bad-gpus", "team-llm", created="09:00:00", gpus="eight", started="09:00:01", finished="09:30:00",
            node="h100-3"),
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "vllm", "namespace": "team-vision"},
         "spec": {"clusterIP": "None"}},
    ]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items}


def later_pod_list() -> dict[str, Any]:
    """The second document, from the raw API: a PodList whose items carry no kind/apiVersion.
    It holds bert-2 again, later: now finished (this copy wins over the first)."""
    again = pod("bert-2", "team-llm", created="09:30:00", gpus=4, started="09:31:20", finished="13:31:00",
                node="h100-1", labels={"scheduling.x-k8s.io/pod-group": "bert"})
    del again["kind"], again["apiVersion"]
    return {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": "50000"}, "items": [again]}


def node(name: str, product: str | None, gpus: int, labels: dict[str, str] | None = None) -> dict[str, Any]:
    all_labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
                  "topology.kubernetes.io/zone": "us-central1-a", **(labels or {})}
    if product:
        all_labels["nvidia.com/gpu.product"] = product
    resources = {"cpu": "208", "memory": "1843782340Ki", "pods": "110", "ephemeral-storage": "1Ti"}
    if gpus:
        resources["nvidia.com/gpu"] = str(gpus)
    allocatable = {**resources, "cpu": "207500m", "memory": "1830000000Ki"}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": f"uid-node-{name}", "labels": all_labels,
                     "creationTimestamp": "2026-01-10T00:00:00Z", "managedFields": _managed("00:00:00")},
        "spec": {"providerID": f"gce://proj/us-central1-a/{name}"},
        "status": {"capacity": resources, "allocatable": allocatable,
                   "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": t("14:00:00"),
                                   "lastTransitionTime": "2026-01-10T00:05:00Z", "reason": "KubeletReady"}]},
    }


def nodes_list() -> dict[str, Any]:
    gke = {"cloud.google.com/gce-topology-block": "block-1"}
    return {"apiVersion": "v1", "kind": "List", "items": [
        node("h100-0", H100, 8, {**gke, "cloud.google.com/gce-topology-subblock": "sb-1",
                                 "karpenter.sh/capacity-type": "reserved"}),
        node("h100-1", H100, 8, {**gke, "cloud.google.com/gce-topology-subblock": "sb-1"}),
        node("h100-2", H100, 8, {**gke, "cloud.google.com/gce-topology-subblock": "sb-2"}),
        node("h100-3", H100, 8, {**gke, "cloud.google.com/gce-topology-subblock": "sb-2",
                                 "karpenter.sh/capacity-type": "spot"}),
        node("a100-0", A100, 8),
        node("a100-1", A100, 8),
        node("cpu-0", None, 0),
        node("mystery-gpu", None, 4),
    ]}


KUEUE_YAML = f"""\
apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata:
    name: h100
    resourceVersion: "1201"
    uid: 6f1c
    creationTimestamp: "2026-01-10T00:00:00Z"
    managedFields:
    - manager: kubectl-client-side-apply
      operation: Update
  spec:
    nodeLabels:
      nvidia.com/gpu.product: {H100}
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata:
    name: h100-spot
  spec:
    nodeLabels:
      nvidia.com/gpu.product: {H100}
      karpenter.sh/capacity-type: spot
    nodeTaints:
    - key: karpenter.sh/capacity-type
      value: spot
      effect: NoSchedule
    tolerations:
    - key: karpenter.sh/capacity-type
      operator: Equal
      value: spot
      effect: NoSchedule
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata:
    name: a100
  spec:
    nodeLabels:
      nvidia.com/gpu.product: {A100}
- apiVersion: kueue.x-k8s.io/v1alpha1
  kind: Cohort
  metadata:
    name: research
  spec: {{}}
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ClusterQueue
  metadata:
    name: llm
  spec:
    cohort: research
    namespaceSelector: {{}}
    queueingStrategy: BestEffortFIFO
    preemption:
      withinClusterQueue: LowerPriority
      reclaimWithinCohort: Any
    resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu]
      flavors:
      - name: h100
        resources:
        - {{name: cpu, nominalQuota: "600"}}
        - {{name: memory, nominalQuota: 6Ti}}
        - {{name: nvidia.com/gpu, nominalQuota: 32}}
      - name: h100-spot
        resources:
        - {{name: cpu, nominalQuota: "100"}}
        - {{name: memory, nominalQuota: 1Ti}}
        - {{name: nvidia.com/gpu, nominalQuota: 8}}
  status:
    admittedWorkloads: 1
    pendingWorkloads: 0
    conditions:
    - type: Active
      status: "True"
      lastTransitionTime: "2026-01-10T00:00:00Z"
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ClusterQueue
  metadata:
    name: vision
  spec:
    cohort: research
    resourceGroups:
    - coveredResources: [cpu, memory, nvidia.com/gpu]
      flavors:
      - name: a100
        resources:
        - {{name: cpu, nominalQuota: "400"}}
        - {{name: memory, nominalQuota: 3Ti}}
        - {{name: nvidia.com/gpu, nominalQuota: 16}}
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: LocalQueue
  metadata:
    name: main
    namespace: team-llm
  spec:
    clusterQueue: llm
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: LocalQueue
  metadata:
    name: main
    namespace: team-vision
  spec:
    clusterQueue: vision
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: WorkloadPriorityClass
  metadata:
    name: high
  value: 1000
  description: production training
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: Workload
  metadata:
    name: jobset-llm-pretrain-5b2c1
    namespace: team-llm
  spec:
    queueName: main
"""


def write_dumps(folder: Path) -> dict[str, Path]:
    """pods.json (two JSON documents), nodes.json, kueue.yaml in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    pods_path, nodes_path, kueue_path = folder / "pods.json", folder / "nodes.json", folder / "kueue.yaml"
    pods_path.write_text(json.dumps(pods_list(), indent=2) + "\n" + json.dumps(later_pod_list(), indent=2) + "\n")
    nodes_path.write_text(json.dumps(nodes_list(), indent=2))
    kueue_path.write_text(KUEUE_YAML)
    return {"pods": pods_path, "nodes": nodes_path, "kueue": kueue_path}


def input_pods() -> list[tuple[str, str]]:
    """(namespace, name) of every Pod object in the pod dumps, duplicates included."""
    objects = pods_list()["items"] + later_pod_list()["items"]
    return [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects if o.get("kind", "Pod") == "Pod"]

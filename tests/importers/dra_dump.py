"""A small DRA cluster's history as `kubectl get -o json` prints it: two nodes whose H100s the
NVIDIA DRA driver publishes as partitionable devices (each GPU whole, or as MIG 1g.10gb and
3g.40gb slices on one counter set), DeviceClasses `gpu.nvidia.com` and `mig.nvidia.com`, claim
templates per team and pods that used them on Monday 2026-03-02 (the dump at 14:00).

- team-a: four 1g.10gb notebooks (08:00 → 10:00), one 3g.40gb fine-tune (08:00 → 12:00);
- team-b: a 2-pod training gang on whole GPUs through a template (09:00 → 11:00);
- team-b: an inference pod asking `nvidia.com/gpu: 1` the device-plugin way (10:00 → 13:00).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.importers.cluster_dumps import container, node, pod
from tests.scheduler.dra_fixtures import GPU_CLASS, MIG_CLASS, exactly, mig_slice, template

PROFILE = 'device.attributes["gpu.nvidia.com"].profile == "{}"'


def _namespaced(obj: dict[str, Any], namespace: str) -> dict[str, Any]:
    obj["metadata"]["namespace"] = namespace
    return obj


def _claiming(name: str, namespace: str, claim_template: str, **kwargs: Any) -> dict[str, Any]:
    made = f"{name}-gpu-x7k2p"
    result = pod(name, namespace, containers=[container(None)],
                 spec_extra={"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": claim_template}]},
                 **kwargs)
    result["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": made}]
    return result


def dra_pods() -> dict[str, Any]:
    items: list[dict[str, Any]] = [
        GPU_CLASS, MIG_CLASS,
        _namespaced(template("mig-1g", {"name": "mig", "exactly": exactly(
            "mig.nvidia.com", selectors=[PROFILE.format("1g.10gb")])}), "team-a"),
        _namespaced(template("mig-3g", {"name": "mig", "exactly": exactly(
            "mig.nvidia.com", selectors=[PROFILE.format("3g.40gb")])}), "team-a"),
        _namespaced(template("whole", {"name": "gpu", "exactly": exactly("gpu.nvidia.com")}), "team-b"),
    ]
    for number in range(4):
        items.append(_claiming(f"notebook-{number}", "team-a", "mig-1g", created="07:59:00", started="08:00:00",
                               finished="10:00:00", node="dra-0"))
    items.append(_claiming("finetune", "team-a", "mig-3g", created="07:59:00", started="08:00:00",
                           finished="12:00:00", node="dra-0"))
    for index in range(2):
        items.append(_claiming(f"train-{index}", "team-b", "whole", created="08:59:00", started="09:00:00",
                               finished="11:00:00", node="dra-1",
                               labels={"pod-group.scheduling.sigs.k8s.io": "train"}))
    items.append(pod("serve", "team-b", created="09:59:00", started="10:00:00", finished="13:00:00", gpus=1,
                     node="dra-1"))
    for slice_node in ("dra-0", "dra-1"):
        items.append(mig_slice(slice_node, gpus=2, profiles={"1g.10gb": 7, "3g.40gb": 2}))
    return {"apiVersion": "v1", "kind": "List", "items": items}


def dra_nodes() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "items": [node("dra-0", None, 0), node("dra-1", None, 0)]}


def write_dra_dumps(folder: Path) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"pods": folder / "pods.json", "nodes": folder / "nodes.json"}
    paths["pods"].write_text(json.dumps(dra_pods(), indent=2))
    paths["nodes"].write_text(json.dumps(dra_nodes(), indent=2))
    return paths

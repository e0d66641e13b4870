"""The DRA side of a generated cluster (a preset's `[dra]` table): the `dra.yaml` the replay
reads with `--dra` (docs/dra.md).

Every node of a partitionable model publishes, per GPU, one counter set (`memorySlices` 8,
`computeSlices` 7, as an 80 GB H100's MIG geometry), its whole device (consuming all of it)
and the MIG devices of each profile the preset lists, with the NVIDIA DRA driver's attribute
names (`type`, `productName`, `profile`, `index`, `parentIndex`). Two DeviceClasses
(`gpu.nvidia.com`, `mig.nvidia.com`) and one ResourceClaimTemplate per profile
(`mig-<profile>`) go with them; a mix with `claim = "mig-1g.10gb"` names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from scheduler.errors import InputError
from scheduler.model.cluster import Node

DRIVER = "gpu.nvidia.com"
MEMORY_SLICES, COMPUTE_SLICES = 8, 7


def _class(name: str, kind: str) -> dict[str, Any]:
    expression = f'device.driver == "{DRIVER}" && device.attributes["{DRIVER}"].type == "{kind}"'
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": expression}}]}}


def _template(profile: str) -> dict[str, Any]:
    selector = f'device.attributes["{DRIVER}"].profile == "{profile}"'
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": f"mig-{profile}"},
            "spec": {"spec": {"devices": {"requests": [{"name": "mig", "exactly": {
                "deviceClassName": "mig.nvidia.com", "allocationMode": "ExactCount", "count": 1,
                "selectors": [{"cel": {"expression": selector}}]}}]}}}}


def _counters(memory: int, compute: int) -> dict[str, Any]:
    return {"memorySlices": {"value": str(memory)}, "computeSlices": {"value": str(compute)}}


def _node_slice(node: Node, profiles: Mapping[str, Sequence[int]], product: str) -> dict[str, Any]:
    devices: list[dict[str, Any]] = []
    counter_sets = []
    for index in range(node.gpus):
        counter_set = f"gpu-{index}-counter-set"
        counter_sets.append({"name": counter_set, "counters": _counters(MEMORY_SLICES, COMPUTE_SLICES)})
        devices.append({"name": f"gpu-{index}", "attributes": {
            "type": {"string": "gpu"}, "productName": {"string": product}, "index": {"int": index}},
            "capacity": {"memory": {"value": "80Gi"}},
            "consumesCounters": [{"counterSet": counter_set, "counters": _counters(MEMORY_SLICES, COMPUTE_SLICES)}]})
        for profile, (memory, compute, gib, count) in profiles.items():
            for number in range(count):
                devices.append({"name": f"gpu-{index}-mig-{profile}-{number}", "attributes": {
                    "type": {"string": "mig"}, "productName": {"string": product}, "profile": {"string": profile},
                    "parentIndex": {"int": index}}, "capacity": {"memory": {"value": f"{gib}Gi"}},
                    "consumesCounters": [{"counterSet": counter_set, "counters": _counters(memory, compute)}]})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node.name}-{DRIVER}"},
            "spec": {"driver": DRIVER, "pool": {"name": node.name, "generation": 1, "resourceSliceCount": 1},
                     "nodeName": node.name, "sharedCounters": counter_sets, "devices": devices}}


def kueue_device_class_mappings() -> list[dict[str, Any]]:
    """The Kueue Configuration's `resources.deviceClassMappings` for these classes (Kueue's
    `KueueDRAIntegration` gate is on by default and refuses a claim of an unmapped class): whole
    GPUs count as `nvidia.com/gpu`; MIG devices as `nvidia.com/mig`, which no ClusterQueue
    covers, so slices count against no quota (Kueue's counter sources, which would count them
    by the slices they take, are not modelled: docs/dra.md)."""
    return [{"name": "nvidia.com/gpu", "deviceClassNames": ["gpu.nvidia.com"]},
            {"name": "nvidia.com/mig", "deviceClassNames": ["mig.nvidia.com"]}]


def dra_objects(config: Mapping[str, Any], nodes: list[Node], source: Path) -> list[dict[str, Any]] | None:
    """The preset's DRA objects, or None without a `[dra]` table."""
    dra = config.get("dra")
    if dra is None:
        return None
    models = dra.get("partitionable_models")
    profiles = dra.get("profiles")
    if not isinstance(models, list) or not isinstance(profiles, Mapping) or not profiles:
        raise InputError(source, "dra needs partitionable_models = [...] and a profiles table "
                                 "(profile = [memory slices of 8, compute slices of 7, GiB, devices per GPU])")
    for profile, shape in profiles.items():
        if not (isinstance(shape, list) and len(shape) == 4 and all(isinstance(v, int) and v > 0 for v in shape)
                and shape[0] <= MEMORY_SLICES and shape[1] <= COMPUTE_SLICES):
            raise InputError(source, f"dra.profiles.{profile}: must be [memory slices <= 8, compute slices <= 7, "
                                     f"GiB, devices per GPU], all whole and > 0; got {shape!r}")
    products = {m["name"]: m.get("product", m["name"]) for m in config.get("models", [])}
    objects = [_class("gpu.nvidia.com", "gpu"), _class("mig.nvidia.com", "mig")]
    objects += [_template(profile) for profile in profiles]
    objects += [_node_slice(n, profiles, products.get(n.gpu_model, n.gpu_model)) for n in nodes
                if n.gpu_model in models and n.gpus]
    return objects

"""DRA objects for tests, in Kubernetes' own shape (`resource.k8s.io/v1`), with the NVIDIA DRA
driver's names: driver `gpu.nvidia.com`, attributes `type` (gpu, mig), `productName`,
`profile`, capacity `memory`; a partitionable GPU publishes its whole device and its MIG
devices drawing on one counter set (KEP-4815)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

DRIVER = "gpu.nvidia.com"
GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.nvidia.com"},
             "spec": {"selectors": [{"cel": {"expression":
                      'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"'}}]}}
MIG_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "mig.nvidia.com"},
             "spec": {"selectors": [{"cel": {"expression":
                      'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "mig"'}}]}}
# H100 80GB MIG profiles: (profile, memory slices of 8, compute slices of 7, GiB)
MIG_PROFILES = {"1g.10gb": (1, 1, 10), "2g.20gb": (2, 2, 20), "3g.40gb": (4, 3, 40), "7g.80gb": (8, 7, 80)}


def gpu(name: str, product: str = "NVIDIA H100 80GB HBM3", memory: str = "80Gi", *, index: int = 0,
        taints: list[dict[str, str]] | None = None, consumes: str | None = None, **extra: Any) -> dict[str, Any]:
    device: dict[str, Any] = {
        "name": name,
        "attributes": {"type": {"string": "gpu"}, "productName": {"string": product}, "index": {"int": index},
                       "cudaComputeCapability": {"version": "9.0.0"}},
        "capacity": {"memory": {"value": memory}},
    }
    if consumes:
        device["consumesCounters"] = [{"counterSet": consumes, "counters": {
            "memorySlices": {"value": "8"}, "computeSlices": {"value": "7"}}}]
    if taints:
        device["taints"] = taints
    return device | extra


def mig(gpu_index: int, profile: str, number: int, product: str = "NVIDIA H100 80GB HBM3") -> dict[str, Any]:
    memory_slices, compute_slices, gib = MIG_PROFILES[profile]
    return {
        "name": f"gpu-{gpu_index}-mig-{profile}-{number}",
        "attributes": {"type": {"string": "mig"}, "productName": {"string": product},
                       "profile": {"string": profile}, "parentIndex": {"int": gpu_index}},
        "capacity": {"memory": {"value": f"{gib}Gi"}},
        "consumesCounters": [{"counterSet": f"gpu-{gpu_index}-counter-set", "counters": {
            "memorySlices": {"value": str(memory_slices)}, "computeSlices": {"value": str(compute_slices)}}}],
    }


def mig_slice(node: str, gpus: int = 1, profiles: dict[str, int] | None = None) -> dict[str, Any]:
    """A node whose `gpus` H100s are partitionable: each publishes its whole device and
    `profiles` MIG devices (profile -> how many), on one counter set per GPU."""
    profiles = {"1g.10gb": 7, "3g.40gb": 2} if profiles is None else profiles
    devices, counter_sets = [], []
    for index in range(gpus):
        counter_set = f"gpu-{index}-counter-set"
        counter_sets.append({"name": counter_set, "counters": {"memorySlices": {"value": "8"},
                                                              "computeSlices": {"value": "7"}}})
        devices.append(gpu(f"gpu-{index}", index=index, consumes=counter_set))
        for profile, count in profiles.items():
            devices.extend(mig(index, profile, number) for number in range(count))
    return resource_slice(node, devices, shared_counters=counter_sets)


def resource_slice(node: str, devices: list[dict[str, Any]], *, shared_counters: list[dict[str, Any]] | None = None,
                   pool: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": DRIVER, "pool": {"name": pool or node, "generation": 1, "resourceSliceCount": 1},
                            "nodeName": node, "devices": devices}
    if shared_counters:
        spec["sharedCounters"] = shared_counters
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-{DRIVER}"},
            "spec": spec}


def exactly(device_class: str, count: int = 1, *, selectors: list[str] | None = None, mode: str = "ExactCount",
            tolerations: list[dict[str, str]] | None = None, capacity: dict[str, str] | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"deviceClassName": device_class, "allocationMode": mode}
    if mode == "ExactCount":
        request["count"] = count
    if selectors:
        request["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    if tolerations:
        request["tolerations"] = tolerations
    if capacity:
        request["capacity"] = {"requests": capacity}
    return request


def template(name: str, *requests: dict[str, Any]) -> dict[str, Any]:
    """A ResourceClaimTemplate; each request: {"name": ..., "exactly": {...}} or firstAvailable."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": {"devices": {"requests": list(requests)}}}}


def claim(name: str, *requests: dict[str, Any]) -> dict[str, Any]:
    """A ResourceClaim (a PodGroup's shared claim)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": list(requests)}}}


def write_dra(path: Path, objects: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False))
    return path

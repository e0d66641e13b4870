"""DRA objects of a kubectl dump → the replay's `--dra` file (`dra.yaml`, docs/dra.md).

A dump with ResourceSlices (``kubectl get resourceslices,deviceclasses -o json`` beside the
pods, with ``resourceclaims,resourceclaimtemplates``) is a DRA cluster: the import writes its
ResourceSlices, DeviceClasses, ResourceClaimTemplates and ResourceClaims into ``dra.yaml`` as
``resource.k8s.io/v1`` objects (a v1beta1 request's inline fields move under ``exactly``, as
the v1 API holds them), names each pod's claims in the trace (`resource_claim_templates`,
`resource_claim`, as ``namespace/name``), and counts each node's GPUs from its slices (its
counter sets plus its devices without counters), since a node whose GPUs a DRA driver
publishes has no ``nvidia.com/gpu`` to allocate. The replay then reads the claims whole:
MIG profiles, selectors, firstAvailable, taints, constraints, config, adminAccess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from gpu_finops.importers.documents import SourceObject

DRA_KINDS = frozenset({"ResourceSlice", "DeviceClass", "ResourceClaimTemplate", "ResourceClaim"})
DRA_FILE = "dra.yaml"
_REQUEST_FIELDS = ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations",
                   "capacity")


@dataclass
class DraDump:
    """The DRA objects of a dump, in dump order, as v1 objects."""

    objects: list[dict[str, Any]] = field(default_factory=list)
    used: list[SourceObject] = field(default_factory=list)

    @property
    def has_devices(self) -> bool:
        return any(o["kind"] == "ResourceSlice" for o in self.objects)

    def render(self) -> str:
        return yaml.safe_dump_all(self.objects, sort_keys=False)

    def node_gpus(self) -> dict[str, tuple[int, str]]:
        """Per node with slices: its GPUs (counter sets + devices without counters) and the
        product name of its first device that has one."""
        counter_sets: dict[tuple[str, str], int] = {}
        for obj in self.objects:
            if obj["kind"] == "ResourceSlice":
                spec = obj.get("spec") or {}
                pool = (str(spec.get("driver")), str((spec.get("pool") or {}).get("name")))
                counter_sets[pool] = counter_sets.get(pool, 0) + len(spec.get("sharedCounters") or [])
        found: dict[str, tuple[int, str]] = {}
        pools_of: dict[str, set[tuple[str, str]]] = {}
        for obj in self.objects:
            spec = obj.get("spec") or {}
            node = spec.get("nodeName")
            if obj["kind"] != "ResourceSlice" or not node:
                continue
            pools_of.setdefault(str(node), set()).add((str(spec.get("driver")), str((spec.get("pool") or {}).get("name"))))
            units, product = found.get(str(node), (0, ""))
            for device in spec.get("devices") or []:
                if not isinstance(device, Mapping):
                    continue
                if not device.get("consumesCounters"):
                    units += 1
                attribute = (device.get("attributes") or {}).get("productName")
                if not product and isinstance(attribute, Mapping) and attribute.get("string"):
                    product = str(attribute["string"])
            found[str(node)] = (units, product)
        return {node: (units + sum(counter_sets.get(pool, 0) for pool in pools_of.get(node, ())), product)
                for node, (units, product) in found.items()}


def collect_dra(objects: Iterable[SourceObject]) -> DraDump:
    """Every resource.k8s.io object of the dump (any version), as a v1 object."""
    dump = DraDump()
    for obj in objects:
        value = obj.value
        if not isinstance(value, Mapping) or obj.kind not in DRA_KINDS or not obj.name:
            continue
        if not str(value.get("apiVersion") or "").startswith("resource.k8s.io/"):
            continue
        dump.objects.append(as_v1(value))
        dump.used.append(obj)
    return dump


def as_v1(value: Mapping[str, Any]) -> dict[str, Any]:
    """The object with apiVersion resource.k8s.io/v1, its status and server fields dropped,
    and v1beta1's inline request fields under `exactly`."""
    meta = value.get("metadata") or {}
    kept_meta = {k: meta[k] for k in ("name", "namespace") if meta.get(k)}
    spec = _plain(value.get("spec") or {})
    kind = value.get("kind")
    if kind == "ResourceClaimTemplate":
        inner = spec.get("spec") or {}
        inner["devices"] = _v1_devices(inner.get("devices") or {})
        spec["spec"] = inner
    elif kind == "ResourceClaim":
        spec["devices"] = _v1_devices(spec.get("devices") or {})
    return {"apiVersion": "resource.k8s.io/v1", "kind": kind, "metadata": kept_meta, "spec": spec}


def _v1_devices(devices: dict[str, Any]) -> dict[str, Any]:
    requests = []
    for request in devices.get("requests") or []:
        if isinstance(request, dict) and "exactly" not in request and "firstAvailable" not in request:
            moved = {k: request.pop(k) for k in _REQUEST_FIELDS if k in request}
            request["exactly"] = moved
        requests.append(request)
    devices["requests"] = requests
    return devices


def _plain(value: Any) -> Any:
    """A deep copy as plain dicts and lists (YAML-safe)."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def pod_claims(spec: Mapping[str, Any], namespace: str) -> tuple[tuple[str, ...], str | None]:
    """A pod's claims as the trace names them: its templates (``namespace/name``) and its
    shared claim (the first named ResourceClaim)."""
    templates: list[str] = []
    shared: str | None = None
    claims = spec.get("resourceClaims")
    for claim in claims if isinstance(claims, list) else []:
        if not isinstance(claim, Mapping):
            continue
        nested = claim.get("source")  # pre-1.31 nesting
        source: Mapping[str, Any] = nested if isinstance(nested, Mapping) else claim
        if source.get("resourceClaimTemplateName"):
            templates.append(f"{namespace}/{source['resourceClaimTemplateName']}")
        elif source.get("resourceClaimName") and shared is None:
            shared = f"{namespace}/{source['resourceClaimName']}"
    return tuple(templates), shared

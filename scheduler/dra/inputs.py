"""Read DRA objects from Kubernetes YAML (`resource.k8s.io/v1`): ResourceSlices,
DeviceClasses, ResourceClaimTemplates and ResourceClaims, one or more per file, as a user
pastes them (`kubectl get ... -o yaml`, a `List` too).

Bad input is one `InputError` naming the file, the document and the field path. What the
replay does not model is refused the same way, never dropped: a slice whose devices are not
local to one node (`allNodes`, `nodeSelector`). A claim's opaque `config` is checked as the
API server does and then not read: upstream's allocator only copies it into the allocation
result for the driver.
"""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path
from typing import Any

from scheduler.dra.objects import (
    ALLOCATION_MODES,
    DEVICE_TAINT_EFFECTS,
    EXACT_COUNT,
    CapacityRequestPolicy,
    ClaimSpec,
    CounterSet,
    Device,
    DeviceClass,
    DeviceConstraint,
    DeviceRequest,
    DeviceTaint,
    DeviceToleration,
    DraInputs,
    Request,
    Version,
    parse_quantity,
)
from scheduler.errors import InputError
from scheduler.trace.yaml_input import load_yaml_documents

API_GROUP = "resource.k8s.io/"
# validateFullyQualifiedName: a DNS subdomain of at most 63 characters, "/", a C identifier of at most 32
_DOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DEVICE_CONSTRAINTS_MAX = 32  # resource.DeviceConstraintsMaxSize
DEVICE_CONFIG_MAX = 32  # resource.DeviceConfigMaxSize
KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaimTemplate", "ResourceClaim")


class _Bad(Exception):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def read_dra_files(paths: list[Path]) -> DraInputs:
    """Every DRA object of `paths`, in file and document order."""
    inputs = DraInputs()
    for path in paths:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            raise InputError(path, f"cannot be read: {error}") from None
        for number, document in enumerate(load_yaml_documents(text, path), start=1):
            for index, obj in enumerate(_objects(document)):
                where = f"items[{index}]." if isinstance(document, dict) and document.get("kind") == "List" else ""
                try:
                    _add(inputs, obj)
                except _Bad as bad:
                    raise InputError(path, f"{_name_of(obj)}: {bad.message}", document=number,
                                     field=where + bad.field) from None
    return inputs


def _objects(document: Any) -> list[Any]:
    if document is None:
        return []
    if isinstance(document, dict) and document.get("kind") == "List":
        return list(document.get("items") or [])
    return [document]


def _name_of(obj: Any) -> str:
    if not isinstance(obj, dict):
        return "(not an object)"
    meta = obj.get("metadata")
    name = meta.get("name", "?") if isinstance(meta, dict) else "?"
    return f"{obj.get('kind', '?')} {name!s}"


def _add(inputs: DraInputs, obj: Any) -> None:
    if not isinstance(obj, dict):
        raise _Bad("(document)", "must be a Kubernetes object (a mapping)")
    kind = obj.get("kind")
    if kind not in KINDS:
        raise _Bad("kind", f"must be one of {', '.join(KINDS)}, got {kind!r}")
    if not str(obj.get("apiVersion", "")).startswith(API_GROUP):
        raise _Bad("apiVersion", f"must be in the {API_GROUP[:-1]} group, got {obj.get('apiVersion')!r}")
    metadata = _map(obj, "metadata")
    name = _str(metadata.get("name"), "metadata.name", required=True)
    if kind in ("ResourceClaimTemplate", "ResourceClaim") and metadata.get("namespace"):
        name = f"{_str(metadata['namespace'], 'metadata.namespace')}/{name}"  # the trace names it so
    spec = _map(obj, "spec")
    if kind == "ResourceSlice":
        _add_slice(inputs, spec)
    elif kind == "DeviceClass":
        selectors = _selectors(spec.get("selectors"), "spec.selectors")
        inputs.classes[name] = DeviceClass(name, selectors)
    elif kind == "ResourceClaimTemplate":
        inputs.templates[name] = _claim(name, _map(spec, "spec", "spec"), "spec.spec", kind)
    else:
        inputs.claims[name] = _claim(name, spec, "spec", kind)


def _add_slice(inputs: DraInputs, spec: dict[str, Any]) -> None:
    driver = _str(spec.get("driver"), "spec.driver", required=True)
    pool = _str(_map(spec, "pool", "spec.pool").get("name"), "spec.pool.name", required=True)
    for shape in ("allNodes", "nodeSelector", "perDeviceNodeSelection"):
        if spec.get(shape):
            raise _Bad(f"spec.{shape}", "devices shared across nodes are not modelled: give each slice a nodeName")
    for index, entry in enumerate(_list(spec.get("sharedCounters"), "spec.sharedCounters")):
        path = f"spec.sharedCounters[{index}]"
        entry = _as_map(entry, path)
        set_name = _str(entry.get("name"), f"{path}.name", required=True)
        counters = _counters(entry.get("counters"), f"{path}.counters")
        inputs.counter_sets[(driver, pool, set_name)] = CounterSet(driver, pool, set_name, counters)
    devices = _list(spec.get("devices"), "spec.devices")
    if not devices:
        return  # a slice of counters only (upstream publishes shared counters in their own slice)
    node = _str(spec.get("nodeName"), "spec.nodeName", required=True)
    found = list(inputs.devices.get(node, ()))
    for index, entry in enumerate(devices):
        found.append(_device(_as_map(entry, f"spec.devices[{index}]"), driver, pool, node, f"spec.devices[{index}]"))
    inputs.devices[node] = tuple(found)


def _device(entry: dict[str, Any], driver: str, pool: str, node: str, path: str) -> Device:
    name = _str(entry.get("name"), f"{path}.name", required=True)
    attributes: list[tuple[str, object]] = []
    for key, value in _as_map(entry.get("attributes") or {}, f"{path}.attributes").items():
        value = _as_map(value, f"{path}.attributes.{key}")
        kinds = [k for k in ("int", "bool", "string", "version") if k in value]
        if len(kinds) != 1:
            raise _Bad(f"{path}.attributes.{key}", "needs exactly one of int, bool, string, version")
        raw = value[kinds[0]]
        attributes.append((_qualified(str(key), driver), Version(str(raw)) if kinds[0] == "version" else raw))
    capacity: list[tuple[str, Fraction]] = []
    defaults: list[tuple[str, Fraction]] = []
    policies: list[tuple[str, CapacityRequestPolicy]] = []
    for key, value in _as_map(entry.get("capacity") or {}, f"{path}.capacity").items():
        value = _as_map(value, f"{path}.capacity.{key}")
        capacity.append((_qualified(str(key), driver), _quantity(value.get("value"), f"{path}.capacity.{key}.value")))
        if value.get("requestPolicy") is not None:
            policy = _request_policy(_as_map(value["requestPolicy"], f"{path}.capacity.{key}.requestPolicy"),
                                     f"{path}.capacity.{key}.requestPolicy")
            policies.append((_qualified(str(key), driver), policy))
            if policy.default is not None:
                defaults.append((_qualified(str(key), driver), policy.default))
    consumes = []
    for index, use in enumerate(_list(entry.get("consumesCounters"), f"{path}.consumesCounters")):
        use_path = f"{path}.consumesCounters[{index}]"
        use = _as_map(use, use_path)
        consumes.append((_str(use.get("counterSet"), f"{use_path}.counterSet", required=True),
                         _counters(use.get("counters"), f"{use_path}.counters")))
    taints = []
    for index, taint in enumerate(_list(entry.get("taints"), f"{path}.taints")):
        taint_path = f"{path}.taints[{index}]"
        taint = _as_map(taint, taint_path)
        effect = _str(taint.get("effect"), f"{taint_path}.effect", required=True)
        if effect not in DEVICE_TAINT_EFFECTS:
            raise _Bad(f"{taint_path}.effect", f"must be one of {', '.join(DEVICE_TAINT_EFFECTS)}, got {effect!r}")
        taints.append(DeviceTaint(_str(taint.get("key"), f"{taint_path}.key", required=True),
                                  _str(taint.get("value"), f"{taint_path}.value"), effect))
    multiple = entry.get("allowMultipleAllocations", False)
    if not isinstance(multiple, bool):
        raise _Bad(f"{path}.allowMultipleAllocations", f"must be true or false, got {multiple!r}")
    return Device(name, driver, pool, node, tuple(attributes), tuple(capacity), tuple(consumes), tuple(taints),
                  multiple, tuple(defaults), tuple(policies))


def _request_policy(policy: dict[str, Any], path: str) -> CapacityRequestPolicy:
    """A capacity's requestPolicy: `default`, and one of `validValues` (ascending, distinct)
    and `validRange` (`min` required, `max`, `step` > 0)."""
    default = None if policy.get("default") is None else _quantity(policy["default"], f"{path}.default")
    values, bounds = policy.get("validValues"), policy.get("validRange")
    if values is not None and bounds is not None:
        raise _Bad(path, "at most one of validValues and validRange")
    valid_values = tuple(_quantity(v, f"{path}.validValues[{i}]") for i, v in enumerate(_list(values, f"{path}.validValues")))
    if any(a >= b for a, b in zip(valid_values, valid_values[1:], strict=False)):
        raise _Bad(f"{path}.validValues", "must be distinct and in ascending order")
    if bounds is None:
        return CapacityRequestPolicy(default, valid_values)
    bounds = _as_map(bounds, f"{path}.validRange")
    if bounds.get("min") is None:
        raise _Bad(f"{path}.validRange.min", "missing")
    minimum = _quantity(bounds["min"], f"{path}.validRange.min")
    maximum = None if bounds.get("max") is None else _quantity(bounds["max"], f"{path}.validRange.max")
    step = None if bounds.get("step") is None else _quantity(bounds["step"], f"{path}.validRange.step")
    if step is not None and step <= 0:
        raise _Bad(f"{path}.validRange.step", "must be greater than zero")
    return CapacityRequestPolicy(default, (), minimum, maximum, step)


def _claim(name: str, spec: dict[str, Any], path: str, kind: str) -> ClaimSpec:
    devices = _map(spec, "devices", f"{path}.devices")
    requests = []
    for index, entry in enumerate(_list(devices.get("requests"), f"{path}.devices.requests")):
        request_path = f"{path}.devices.requests[{index}]"
        entry = _as_map(entry, request_path)
        request_name = _str(entry.get("name"), f"{request_path}.name", required=True)
        exactly, first = entry.get("exactly"), entry.get("firstAvailable")
        if (exactly is None) == (first is None):
            raise _Bad(request_path, "needs exactly one of 'exactly' and 'firstAvailable'")
        alternatives: tuple[Request, ...]
        if exactly is not None:
            alternatives = (_request(request_name, _as_map(exactly, f"{request_path}.exactly"), f"{request_path}.exactly"),)
        else:
            items = _list(first, f"{request_path}.firstAvailable")
            if not items:
                raise _Bad(f"{request_path}.firstAvailable", "needs at least one alternative")
            alternatives = tuple(
                _request(_str(_as_map(sub, f"{request_path}.firstAvailable[{i}]").get("name"),
                              f"{request_path}.firstAvailable[{i}].name", required=True),
                         sub, f"{request_path}.firstAvailable[{i}]", subrequest=True)
                for i, sub in enumerate(items))
        requests.append(DeviceRequest(request_name, alternatives, prioritized=first is not None))
    if not requests:
        raise _Bad(f"{path}.devices.requests", "needs at least one request")
    names = {r.name: {a.name for a in r.alternatives} if r.prioritized else set() for r in requests}
    constraints = _constraints(devices.get("constraints"), f"{path}.devices.constraints", names)
    _check_config(devices.get("config"), f"{path}.devices.config", names)
    return ClaimSpec(name, tuple(requests), kind, constraints, bool(devices.get("config")))


def _constraints(value: Any, path: str, names: dict[str, set[str]]) -> tuple[DeviceConstraint, ...]:
    """`constraints[]` as upstream's validation accepts them (`validateDeviceConstraint`):
    exactly one of `matchAttribute` and `distinctAttribute`, a fully qualified name, and
    `requests` naming requests (or `request/subrequest`) of the claim, each once."""
    entries = _list(value, path)
    if len(entries) > DEVICE_CONSTRAINTS_MAX:
        raise _Bad(path, f"must have at most {DEVICE_CONSTRAINTS_MAX} items, has {len(entries)}")
    found = []
    for index, entry in enumerate(entries):
        entry_path = f"{path}[{index}]"
        entry = _as_map(entry, entry_path)
        kinds = [key for key in ("matchAttribute", "distinctAttribute") if entry.get(key) is not None]
        if len(kinds) != 1:
            raise _Bad(entry_path, 'exactly one of "matchAttribute" or "distinctAttribute" is required')
        attribute = _fully_qualified(entry[kinds[0]], f"{entry_path}.{kinds[0]}")
        found.append(DeviceConstraint(attribute, _request_refs(entry.get("requests"), f"{entry_path}.requests", names),
                                      distinct=kinds[0] == "distinctAttribute"))
    return tuple(found)


def _check_config(value: Any, path: str, names: dict[str, set[str]]) -> None:
    """`config[]` (`validateDeviceClaimConfiguration`): `requests` naming requests of the
    claim, and an `opaque` configuration with its `driver`; its parameters are the driver's."""
    entries = _list(value, path)
    if len(entries) > DEVICE_CONFIG_MAX:
        raise _Bad(path, f"must have at most {DEVICE_CONFIG_MAX} items, has {len(entries)}")
    for index, entry in enumerate(entries):
        entry = _as_map(entry, f"{path}[{index}]")
        _request_refs(entry.get("requests"), f"{path}[{index}].requests", names)
        opaque = _map(entry, "opaque", f"{path}[{index}].opaque")
        _str(opaque.get("driver"), f"{path}[{index}].opaque.driver", required=True)


def _request_refs(value: Any, path: str, names: dict[str, set[str]]) -> tuple[str, ...]:
    """Request references (`validateRequestNameRef`): `request`, or `request/subrequest` of
    a firstAvailable request, each once."""
    refs: list[str] = []
    for index, ref in enumerate(_list(value, path)):
        ref = _str(ref, f"{path}[{index}]", required=True)
        parts = ref.split("/")
        known = (len(parts) == 1 and parts[0] in names) or (
            len(parts) == 2 and parts[1] in names.get(parts[0], set()))
        if not known:
            raise _Bad(f"{path}[{index}]", f"{ref!r} must be the name of a request in the claim or the name of "
                                           "a request and a subrequest separated by '/'")
        if ref in refs:
            raise _Bad(f"{path}[{index}]", f"duplicate value {ref!r}")
        refs.append(ref)
    return tuple(refs)


def _fully_qualified(value: Any, path: str) -> str:
    name = _str(value, path, required=True)
    domain, slash, identifier = name.partition("/")
    if not slash:
        raise _Bad(path, f"{name!r} must be a fully qualified name, a domain and an identifier separated by '/'")
    if len(domain) > 63 or not _DOMAIN.match(domain):
        raise _Bad(path, f"{name!r}: the domain must be a DNS subdomain of at most 63 characters")
    if len(identifier) > 32 or not _IDENTIFIER.match(identifier):
        raise _Bad(path, f"{name!r}: the identifier must be a C identifier of at most 32 characters")
    return name


def _request(name: str, entry: dict[str, Any], path: str, *, subrequest: bool = False) -> Request:
    device_class = _str(entry.get("deviceClassName"), f"{path}.deviceClassName", required=True)
    mode = _str(entry.get("allocationMode"), f"{path}.allocationMode") or EXACT_COUNT
    if mode not in ALLOCATION_MODES:
        raise _Bad(f"{path}.allocationMode", f"must be ExactCount or All, got {mode!r}")
    count = entry.get("count", 1)
    if mode == EXACT_COUNT and (isinstance(count, bool) or not isinstance(count, int) or count < 1):
        raise _Bad(f"{path}.count", f"must be a whole number >= 1, got {count!r}")
    admin_access = entry.get("adminAccess")
    if admin_access is not None and subrequest:
        raise _Bad(f"{path}.adminAccess", "is not a field of a firstAvailable subrequest")
    if admin_access is not None and not isinstance(admin_access, bool):
        raise _Bad(f"{path}.adminAccess", f"must be true or false, got {admin_access!r}")
    tolerations = []
    for index, toleration in enumerate(_list(entry.get("tolerations"), f"{path}.tolerations")):
        t_path = f"{path}.tolerations[{index}]"
        toleration = _as_map(toleration, t_path)
        operator = _str(toleration.get("operator"), f"{t_path}.operator") or "Equal"
        if operator not in ("Equal", "Exists"):
            raise _Bad(f"{t_path}.operator", f"must be Equal or Exists, got {operator!r}")
        tolerations.append(DeviceToleration(_str(toleration.get("key"), f"{t_path}.key"), operator,
                                            _str(toleration.get("value"), f"{t_path}.value"),
                                            _str(toleration.get("effect"), f"{t_path}.effect")))
    capacity = []
    wanted = _as_map((entry.get("capacity") or {}), f"{path}.capacity").get("requests") or {}
    for key, value in _as_map(wanted, f"{path}.capacity.requests").items():
        capacity.append((str(key), _quantity(value, f"{path}.capacity.requests.{key}")))
    return Request(name, device_class, _selectors(entry.get("selectors"), f"{path}.selectors"), mode,
                   int(count) if mode == EXACT_COUNT else 0, tuple(tolerations), tuple(capacity), bool(admin_access))


def _selectors(value: Any, path: str) -> tuple[str, ...]:
    found = []
    for index, selector in enumerate(_list(value, path)):
        cel = _as_map(_as_map(selector, f"{path}[{index}]").get("cel"), f"{path}[{index}].cel")
        found.append(_str(cel.get("expression"), f"{path}[{index}].cel.expression", required=True))
    return tuple(found)


def _counters(value: Any, path: str) -> tuple[tuple[str, Fraction], ...]:
    counters = _as_map(value, path)
    return tuple((str(name), _quantity(_as_map(counter, f"{path}.{name}").get("value"), f"{path}.{name}.value"))
                 for name, counter in counters.items())


def _qualified(name: str, driver: str) -> str:
    """An unqualified attribute or capacity name belongs to the driver's domain."""
    return name if "/" in name else f"{driver}/{name}"


def _quantity(value: Any, path: str) -> Fraction:
    quantity = parse_quantity(value)
    if quantity is None or quantity < 0:
        raise _Bad(path, f"must be a quantity such as 80Gi or 7, got {value!r}")
    return quantity


def _str(value: Any, path: str, *, required: bool = False) -> str:
    if value is None or value == "":
        if required:
            raise _Bad(path, "missing")
        return ""
    if not isinstance(value, str | int) or isinstance(value, bool):
        raise _Bad(path, f"must be text, got {value!r}")
    return str(value)


def _map(obj: dict[str, Any], key: str, path: str | None = None) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        raise _Bad(path or key, "missing")
    return _as_map(value, path or key)


def _as_map(value: Any, path: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _Bad(path, f"must be a mapping, got {value!r}")
    return value


def _list(value: Any, path: str) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise _Bad(path, f"must be a list, got {value!r}")
    return value

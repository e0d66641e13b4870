"""Kueue's own Configuration (``config.kueue.x-k8s.io``): the settings that change admission.

Kueue reads waitForPodsReady and fairSharing from its controller Configuration, not from
ClusterQueues. A queues file may carry one such document in the same YAML stream:

    apiVersion: config.kueue.x-k8s.io/v1beta1
    kind: Configuration
    waitForPodsReady: {enable: true, timeout: 5m, blockAdmission: false,
                       requeuingStrategy: {timestamp: Eviction, backoffLimitCount: 3,
                                           backoffBaseSeconds: 60, backoffMaxSeconds: 3600}}
    fairSharing: {enable: true, preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]}

Defaults follow the API version, as Kueue's defaulting does
(apis/config/v1beta1/defaults.go, apis/config/v1beta2/defaults.go):

- v1beta1: waitForPodsReady is off unless ``enable: true``; then timeout 5m and
  blockAdmission true. fairSharing is off unless ``enable: true``.
- v1beta2: waitForPodsReady is always on (timeout 30m, blockAdmission false) unless the
  ``DisableWaitForPodsReady`` feature gate is set; fairSharing is on when the
  ``fairSharing`` key is present.
- Both: requeuingStrategy timestamp Eviction, backoffBaseSeconds 60, backoffMaxSeconds 3600,
  backoffLimitCount unset (requeue forever); preemption strategies
  [LessThanOrEqualToFinalShare, LessThanInitialShare].

``admissionFairSharing`` ({usageHalfLifeTime, usageSamplingInterval (default 5m),
resourceWeights}) turns on admission fair sharing for the ClusterQueues whose
``admissionScope.admissionMode`` is UsageBasedAdmissionFairSharing (`admission_fair_sharing`).

``featureGates`` (a map of gate name to true/false, as the manager's ``--feature-gates``):
``PrioritizePreemptorWorkloads`` (alpha in 0.20, default false), ``PartialAdmission``
(beta, default true), ``FlavorFungibilityPreserveScanProgress`` (beta in 0.20, default
true) and ``AdmissionFairSharing`` (beta since 0.15, default true) change what the replay
decides and are honoured;
``DisableWaitForPodsReady`` is read with waitForPodsReady. Any other gate gets one warning
line: the replay runs as with that gate at its default.

No Configuration document at all means what current Kueue runs with (its shipped
``kueue-manager-config`` is v1beta2 and sets neither): classical preemption, and
waitForPodsReady on with timeout 30m, recoveryTimeout 30m, blockAdmission false,
requeuing by eviction time with backoff 60 s doubling to 3600 s, no backoffLimitCount
(`NO_CONFIGURATION`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from scheduler.admission.manifests.fields import FieldReader
from scheduler.admission.objects import (
    AdmissionFairSharing,
    FairSharing,
    KueueConfiguration,
    WaitForPodsReady,
)
from scheduler.admission.policies import FairSharingStrategy, RequeueTimestamp

CONFIG_API_GROUP = "config.kueue.x-k8s.io"
CONFIG_API_VERSIONS = (f"{CONFIG_API_GROUP}/v1beta1", f"{CONFIG_API_GROUP}/v1beta2")
# The combinations Kueue's validation accepts (apis/config/.../validation.go).
VALID_STRATEGIES = (
    (FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
    (FairSharingStrategy.LESS_THAN_INITIAL_SHARE,),
    (FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, FairSharingStrategy.LESS_THAN_INITIAL_SHARE),
)
# Configuration fields that are real but change nothing the replay models: no warning.
_QUIET_FIELDS = {
    "namespace", "manageJobsWithoutQueueName", "managedJobsNamespaceSelector",
    "internalCertManagement", "clientConnection", "controller", "health", "metrics",
    "webhook", "leaderElection", "pprofBindAddress", "integrations", "queueVisibility",
    "multiKueue", "resources", "featureGates", "objectRetentionPolicies",
    "admissionFairSharing", "dra", "waitForPodsReady", "fairSharing", "apiVersion", "kind",
    "metadata",
}
# Feature gates the replay honours (pkg/features/kube_features.go), with Kueue 0.20's defaults.
MODELLED_GATES: Mapping[str, bool] = MappingProxyType(
    {"PrioritizePreemptorWorkloads": False, "PartialAdmission": True, "DisableWaitForPodsReady": False,
     "FlavorFungibilityPreserveScanProgress": True, "AdmissionFairSharing": True,
     "KueueDRAIntegration": True, "KueueDRARejectWorkloadsWhenDRADisabled": True})
# Gates Kueue no longer has: its feature gate registry refuses them, so Kueue does not start.
_REMOVED_GATES: Mapping[str, str] = MappingProxyType(
    {"DynamicResourceAllocation": "removed in Kueue v0.19; KueueDRAIntegration (beta, on by default) replaces it"})
# Kueue's defaults when the queues file carries no Configuration (apis/config/v1beta2/defaults.go).
NO_CONFIGURATION = KueueConfiguration(wait_for_pods_ready=WaitForPodsReady(timeout_s=1800.0, block_admission=False))
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


_MAX_SECONDS = 10 * 366 * 86_400  # a timeout longer than ten years is no timeout
_MAX_INT32 = 2**31 - 1  # Kueue's counts and seconds are 32-bit integers


def parse_duration(value: Any) -> float:
    """A Go duration ("5m", "1h30m", "300s", "1.5h", "0s") in seconds; ValueError otherwise."""
    if not isinstance(value, str):
        raise ValueError(f"not a duration: {value!r}")
    text = value.strip()
    if text == "0":
        return 0.0
    position, total = 0, 0.0
    for match in _DURATION_PART.finditer(text):
        if match.start() != position:
            break
        total += float(match.group(1)) * _UNIT_S[match.group(2)]
        position = match.end()
    if position != len(text) or not text:
        raise ValueError(f"not a duration: {value!r}")
    return total


def read_configuration(reader: FieldReader, api_version: str, document: Mapping) -> KueueConfiguration:
    v1beta1 = api_version.endswith("/v1beta1")
    for key in document:
        if key not in _QUIET_FIELDS:
            reader.warn(f"field '{key}' is not a known Configuration field; ignored")
    gates = _feature_gates(reader, document)
    return KueueConfiguration(
        wait_for_pods_ready=_wait_for_pods_ready(reader, document, v1beta1, gates),
        fair_sharing=_fair_sharing(reader, document, v1beta1),
        admission_fair_sharing=_admission_fair_sharing(reader, document) if gates["AdmissionFairSharing"] else None,
        prioritize_preemptor_workloads=gates["PrioritizePreemptorWorkloads"],
        partial_admission=gates["PartialAdmission"],
        preserve_scan_progress=gates["FlavorFungibilityPreserveScanProgress"],
        dra_integration=gates["KueueDRAIntegration"],
        reject_dra_when_disabled=gates["KueueDRARejectWorkloadsWhenDRADisabled"],
        device_class_mappings=_device_class_mappings(reader, document),
    )


def _device_class_mappings(reader: FieldReader, document: Mapping) -> tuple[tuple[str, str], ...]:
    """resources.deviceClassMappings: each {name: logical resource, deviceClassNames: [...]}
    as (DeviceClass, resource) pairs (Kueue's DRA Mapper); a class mapped twice is an error, and
    so is a mapping's `sources` (counter or capacity sources: Kueue then counts a class's counters
    or capacity instead of its devices, which the replay does not model)."""
    path = "resources.deviceClassMappings"
    resources = reader.mapping(document.get("resources"), "resources")
    pairs: dict[str, str] = {}
    for index, entry in enumerate(reader.sequence(resources.get("deviceClassMappings"), path)):
        entry = reader.mapping(entry, f"{path}[{index}]")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise reader.error(f"{path}[{index}].name", f"must be a resource name, got {name!r}")
        if entry.get("sources"):
            raise reader.error(f"{path}[{index}].sources", "counter and capacity sources are not modelled: "
                               "the replay counts a mapped DeviceClass's devices only")
        for number, device_class in enumerate(reader.sequence(entry.get("deviceClassNames"),
                                                              f"{path}[{index}].deviceClassNames")):
            if not isinstance(device_class, str) or not device_class or device_class in pairs:
                raise reader.error(f"{path}[{index}].deviceClassNames[{number}]",
                                   f"must be a DeviceClass name mapped once, got {device_class!r}")
            pairs[device_class] = name
    return tuple(pairs.items())


def _feature_gates(reader: FieldReader, document: Mapping) -> dict[str, bool]:
    """The modelled gates, each at its value or Kueue's default; one warning per other gate."""
    spec = reader.mapping(document.get("featureGates"), "featureGates")
    gates = dict(MODELLED_GATES)
    for name, value in spec.items():
        if not isinstance(value, bool):
            raise reader.error(f"featureGates.{name}", f"must be true or false, got {value!r}")
        if name in _REMOVED_GATES:
            raise reader.error(f"featureGates.{name}", f"unrecognized feature gate: {name} ({_REMOVED_GATES[name]})")
        if name in gates:
            gates[name] = value
        else:
            reader.warn(f"feature gate '{name}' is not modelled; the replay runs as with its default")
    return gates


def _wait_for_pods_ready(reader: FieldReader, document: Mapping, v1beta1: bool, gates: Mapping) -> WaitForPodsReady | None:
    path = "waitForPodsReady"
    spec = reader.mapping(document.get(path), path)
    known = {"enable", "timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout"}
    for key in spec:
        if key not in known:
            reader.warn(f"field '{path}.{key}' is not a known field; ignored")
    enable = spec.get("enable", not v1beta1)
    if not isinstance(enable, bool):
        raise reader.error(f"{path}.enable", f"must be true or false, got {enable!r}")
    if not enable or gates.get("DisableWaitForPodsReady") is True:
        return None
    timeout = _duration(reader, spec, "timeout", path, 300.0 if v1beta1 else 1800.0)
    recovery = _duration(reader, spec, "recoveryTimeout", path, timeout) if spec.get("recoveryTimeout") is not None else None
    block = spec.get("blockAdmission", v1beta1)
    if block in ("Enabled", "Disabled"):  # v1beta2 spells it as an enum
        block = block == "Enabled"
    if not isinstance(block, bool):
        raise reader.error(f"{path}.blockAdmission", f"must be true or false, got {block!r}")
    strategy = reader.mapping(spec.get("requeuingStrategy"), f"{path}.requeuingStrategy")
    spath = f"{path}.requeuingStrategy"
    for key in strategy:
        if key not in {"timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"}:
            reader.warn(f"field '{spath}.{key}' is not a known field; ignored")
    timestamp = reader.choice(strategy.get("timestamp", "Eviction"), f"{spath}.timestamp", tuple(RequeueTimestamp),
                              RequeueTimestamp.EVICTION)
    limit = _whole(reader, strategy, "backoffLimitCount", spath, None, minimum=0)
    base = _whole(reader, strategy, "backoffBaseSeconds", spath, 60, minimum=0) or 0
    most = _whole(reader, strategy, "backoffMaxSeconds", spath, 3600, minimum=0) or 0
    return WaitForPodsReady(timeout, block, timestamp, float(base), float(most), limit, recovery)


def _fair_sharing(reader: FieldReader, document: Mapping, v1beta1: bool) -> FairSharing | None:
    path = "fairSharing"
    if path not in document:
        return None
    spec = reader.mapping(document.get(path), path)
    for key in spec:
        if key not in {"enable", "preemptionStrategies"}:
            reader.warn(f"field '{path}.{key}' is not a known field; ignored")
    enable = spec.get("enable", not v1beta1)
    if not isinstance(enable, bool):
        raise reader.error(f"{path}.enable", f"must be true or false, got {enable!r}")
    if not enable:
        return None
    strategies = spec.get("preemptionStrategies")
    if strategies is None:
        return FairSharing()
    if not isinstance(strategies, list) or tuple(strategies) not in VALID_STRATEGIES:
        allowed = "; ".join(", ".join(s) for s in VALID_STRATEGIES)
        raise reader.error(f"{path}.preemptionStrategies", f"must be one of [{allowed}], got {strategies!r}")
    return FairSharing(tuple(FairSharingStrategy(strategy) for strategy in strategies))


def _admission_fair_sharing(reader: FieldReader, document: Mapping) -> AdmissionFairSharing | None:
    """admissionFairSharing: present means on (with the gate); usageSamplingInterval defaults
    to 5m and must be > 0, usageHalfLifeTime to 0 (config/v1beta2/defaults.go; pkg/config/
    validation.go validateAdmissionFairSharing), resourceWeights >= 0."""
    path = "admissionFairSharing"
    if document.get(path) is None:
        return None
    spec = reader.mapping(document.get(path), path)
    for key in spec:
        if key not in {"usageHalfLifeTime", "usageSamplingInterval", "resourceWeights"}:
            reader.warn(f"field '{path}.{key}' is not a known field; ignored")
    half_life = _duration(reader, spec, "usageHalfLifeTime", path, 0.0)
    interval = _duration(reader, spec, "usageSamplingInterval", path, 300.0) or 300.0  # cmp.Or: 0 is unset
    weights = reader.mapping(spec.get("resourceWeights"), f"{path}.resourceWeights")
    for name, weight in weights.items():
        if not isinstance(weight, int | float) or isinstance(weight, bool) or not 0 <= weight < float("inf"):
            raise reader.error(f"{path}.resourceWeights.{name}", f"must be a number >= 0, got {weight!r}")
    return AdmissionFairSharing(half_life, interval, tuple(sorted((str(k), float(v)) for k, v in weights.items())))


def _duration(reader: FieldReader, spec: Mapping, key: str, path: str, default: float) -> float:
    if spec.get(key) is None:
        return default
    try:
        seconds = parse_duration(spec[key])
    except ValueError:
        raise reader.error(f"{path}.{key}", f"must be a duration such as 5m or 300s, got {spec[key]!r}") from None
    if not seconds <= _MAX_SECONDS:  # also NaN and infinity: bounded before any arithmetic
        raise reader.error(f"{path}.{key}", f"must be at most ten years, got {spec[key]!r}")
    return seconds


def _whole(reader: FieldReader, spec: Mapping, key: str, path: str, default: int | None, *, minimum: int) -> int | None:
    value = spec.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= _MAX_INT32:
        raise reader.error(f"{path}.{key}", f"must be a whole number >= {minimum} (at most {_MAX_INT32:,}), got {value!r}")
    return value

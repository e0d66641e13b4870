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

No Configuration document at all means Kueue's shipped defaults for a v1beta1 install:
classical preemption and no waitForPodsReady.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

CONFIG_API_GROUP = "config.kueue.x-k8s.io"
CONFIG_API_VERSIONS = (f"{CONFIG_API_GROUP}/v1beta1", f"{CONFIG_API_GROUP}/v1beta2")
LESS_THAN_OR_EQUAL_TO_FINAL_SHARE = "LessThanOrEqualToFinalShare"
LESS_THAN_INITIAL_SHARE = "LessThanInitialShare"
# The combinations Kueue's validation accepts (apis/config/.../validation.go).
VALID_STRATEGIES = (
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE,),
    (LESS_THAN_INITIAL_SHARE,),
    (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE),
)
REQUEUE_TIMESTAMPS = ("Eviction", "Creation")
# Configuration fields that are real but change nothing the replay models: no warning.
_QUIET_FIELDS = {
    "namespace", "manageJobsWithoutQueueName", "managedJobsNamespaceSelector",
    "internalCertManagement", "clientConnection", "controller", "health", "metrics",
    "webhook", "leaderElection", "pprofBindAddress", "integrations", "queueVisibility",
    "multiKueue", "resources", "featureGates", "objectRetentionPolicies",
    "admissionFairSharing", "dra", "waitForPodsReady", "fairSharing", "apiVersion", "kind",
    "metadata",
}
_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_S = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True)
class WaitForPodsReady:
    """An admitted workload must reach PodsReady within `timeout_s`, or it is evicted
    and requeued after min(base·2^(n−1), max) seconds; past `backoff_limit_count`
    requeues it is deactivated."""

    timeout_s: float = 300.0
    block_admission: bool = True
    requeue_timestamp: str = "Eviction"
    backoff_base_s: float = 60.0
    backoff_max_s: float = 3600.0
    backoff_limit_count: int | None = None

    def backoff_s(self, count: int) -> float:
        """The wait before the `count`-th requeue (count >= 1)."""
        return min(self.backoff_base_s * 2 ** (count - 1), self.backoff_max_s)


@dataclass(frozen=True, slots=True)
class FairSharing:
    preemption_strategies: tuple[str, ...] = (LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, LESS_THAN_INITIAL_SHARE)


@dataclass(frozen=True, slots=True)
class KueueConfiguration:
    wait_for_pods_ready: WaitForPodsReady | None = None
    fair_sharing: FairSharing | None = None


class _Reporter(Protocol):
    """What the manifest parser offers this module: errors with a field path, warnings."""

    def error(self, field_path: str | None, message: str, document: int | None = None) -> Exception: ...

    def warn(self, message: str) -> None: ...

    def mapping(self, value: Any, path: str, *, optional: bool = True) -> Mapping: ...


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


def parse_configuration(parser: _Reporter, api_version: str, document: Mapping) -> KueueConfiguration:
    v1beta1 = api_version.endswith("/v1beta1")
    for key in document:
        if key not in _QUIET_FIELDS:
            parser.warn(f"field '{key}' is not a known Configuration field; ignored")
    gates = parser.mapping(document.get("featureGates"), "featureGates")
    return KueueConfiguration(
        wait_for_pods_ready=_wait_for_pods_ready(parser, document, v1beta1, gates),
        fair_sharing=_fair_sharing(parser, document, v1beta1),
    )


def _wait_for_pods_ready(parser: _Reporter, document: Mapping, v1beta1: bool, gates: Mapping) -> WaitForPodsReady | None:
    path = "waitForPodsReady"
    spec = parser.mapping(document.get(path), path)
    known = {"enable", "timeout", "blockAdmission", "requeuingStrategy", "recoveryTimeout"}
    for key in spec:
        if key not in known:
            parser.warn(f"field '{path}.{key}' is not a known field; ignored")
    enable = spec.get("enable", not v1beta1)
    if not isinstance(enable, bool):
        raise parser.error(f"{path}.enable", f"must be true or false, got {enable!r}")
    if not enable or gates.get("DisableWaitForPodsReady") is True:
        return None
    timeout = _duration(parser, spec, "timeout", path, 300.0 if v1beta1 else 1800.0)
    block = spec.get("blockAdmission", v1beta1)
    if block in ("Enabled", "Disabled"):  # v1beta2 spells it as an enum
        block = block == "Enabled"
    if not isinstance(block, bool):
        raise parser.error(f"{path}.blockAdmission", f"must be true or false, got {block!r}")
    strategy = parser.mapping(spec.get("requeuingStrategy"), f"{path}.requeuingStrategy")
    spath = f"{path}.requeuingStrategy"
    for key in strategy:
        if key not in {"timestamp", "backoffLimitCount", "backoffBaseSeconds", "backoffMaxSeconds"}:
            parser.warn(f"field '{spath}.{key}' is not a known field; ignored")
    timestamp = strategy.get("timestamp", "Eviction")
    if timestamp not in REQUEUE_TIMESTAMPS:
        raise parser.error(f"{spath}.timestamp", f"must be one of {', '.join(REQUEUE_TIMESTAMPS)}, got {timestamp!r}")
    limit = _whole(parser, strategy, "backoffLimitCount", spath, None, minimum=0)
    base = _whole(parser, strategy, "backoffBaseSeconds", spath, 60, minimum=0) or 0
    most = _whole(parser, strategy, "backoffMaxSeconds", spath, 3600, minimum=0) or 0
    return WaitForPodsReady(timeout, block, timestamp, float(base), float(most), limit)


def _fair_sharing(parser: _Reporter, document: Mapping, v1beta1: bool) -> FairSharing | None:
    path = "fairSharing"
    if path not in document:
        return None
    spec = parser.mapping(document.get(path), path)
    for key in spec:
        if key not in {"enable", "preemptionStrategies"}:
            parser.warn(f"field '{path}.{key}' is not a known field; ignored")
    enable = spec.get("enable", not v1beta1)
    if not isinstance(enable, bool):
        raise parser.error(f"{path}.enable", f"must be true or false, got {enable!r}")
    if not enable:
        return None
    strategies = spec.get("preemptionStrategies")
    if strategies is None:
        return FairSharing()
    if not isinstance(strategies, list) or tuple(strategies) not in VALID_STRATEGIES:
        allowed = "; ".join(", ".join(s) for s in VALID_STRATEGIES)
        raise parser.error(f"{path}.preemptionStrategies", f"must be one of [{allowed}], got {strategies!r}")
    return FairSharing(tuple(strategies))


def _duration(parser: _Reporter, spec: Mapping, key: str, path: str, default: float) -> float:
    if spec.get(key) is None:
        return default
    try:
        seconds = parse_duration(spec[key])
    except ValueError:
        raise parser.error(f"{path}.{key}", f"must be a duration such as 5m or 300s, got {spec[key]!r}") from None
    if not seconds <= _MAX_SECONDS:  # also NaN and infinity: bounded before any arithmetic
        raise parser.error(f"{path}.{key}", f"must be at most ten years, got {spec[key]!r}")
    return seconds


def _whole(parser: _Reporter, spec: Mapping, key: str, path: str, default: int | None, *, minimum: int) -> int | None:
    value = spec.get(key)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or not minimum <= value <= _MAX_INT32:
        raise parser.error(f"{path}.{key}", f"must be a whole number >= {minimum} (at most {_MAX_INT32:,}), got {value!r}")
    return value

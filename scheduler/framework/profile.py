"""Profiles as data: a TOML file names the plugins per extension point and their args.

Shipped profiles live in `scheduler/profiles/*.toml`; `replay --profile` takes a shipped
name or a path to a user's own file. Unknown plugin names and unknown keys are errors that
name the file and the key, so a typo never silently changes a replay.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from enum import StrEnum
from importlib import resources
from pathlib import Path
from typing import Any

from scheduler.errors import InputError
from scheduler.eventlog.text import parse_toml
from scheduler.framework.interface import Unit
from scheduler.framework.registry import known_plugins
from scheduler.plugins import names

DEFAULT_PROFILE = "gang-v1.37"
_TOP_KEYS = {"name", "description", "unit", "extension_points", "plugin_args", "behaviour"}
_POINTS = {"queue_sort", "filter", "score", "permit", "post_filter"}
_MAX_SECONDS = 10 * 366 * 86_400  # the documented bound on times (docs/contracts.md)
_BEHAVIOUR = {
    "rendezvous_timeout_s",
    "backoff_initial_s",
    "backoff_max_s",
    "max_simulated_s",
    "unschedulable_flush_s",
    "group_device_claim",
    "tie_break",
    "percentage_of_nodes_to_score",
    "termination_grace_s",
    "dra_preemption",
    "opportunistic_batching",
    "default_topology_spread",
}
_FLAGS = {"group_device_claim", "dra_preemption", "opportunistic_batching", "default_topology_spread"}


class TieBreak(StrEnum):
    """Which of the best-scoring nodes a pod gets."""

    HEAP_ORDER = "heap_order"  # kube-scheduler since v1.35: the root of the heap of scores (node_heap.py)
    LOWEST_INDEX = "lowest_index"  # the first in the cluster file: reproducible by eye
    RANDOM = "random"  # selectHost before v1.35: uniform among them (seeded per-node keys, tie_keys.py)


@dataclass(frozen=True)
class Profile:
    name: str
    unit: Unit  # POD: pods are queued and placed one by one; POD_GROUP: a group in one cycle
    description: str = ""
    queue_sort: str = "PrioritySort"
    filters: tuple[str, ...] = ("GpuFit", "NodeResourcesFit")
    scores: tuple[tuple[str, float], ...] = (("LeastAllocated", 1.0),)
    permit: tuple[str, ...] = ()
    post_filter: tuple[str, ...] = ()
    plugin_args: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Pod-by-pod without a gang permit: the training framework's own rendezvous gives up
    # after this long and the started pods crash (torchrun's c10d join timeout is 600 s).
    rendezvous_timeout_s: float = 600.0
    backoff_initial_s: float = 1.0
    backoff_max_s: float = 10.0
    # kube-scheduler moves pods that sat unschedulable this long back to the active queue
    # even without an event (DefaultPodMaxInUnschedulablePodsDuration).
    unschedulable_flush_s: float = 300.0
    # DRA: the pods of a group share one ResourceClaim, so all get devices of one class
    # (one GPU model) even when the group accepts several.
    group_device_claim: bool = False
    # Scheduler preemption frees GPUs claimed through DRA (KEP-5690, alpha in v1.38). False,
    # as v1.35-v1.37 do: the claim stays allocated in preemption's simulation, so under
    # `group_device_claim` no victim can make room for GPUs (Kueue's eviction still can).
    dra_preemption: bool = False
    # Safety stop for traces that can never drain (e.g. a gang that never fits).
    max_simulated_s: float = 90 * 86_400.0
    tie_break: TieBreak = TieBreak.HEAP_ORDER  # kube-scheduler's newSortedNodeScores(...).Pop()
    # kube-scheduler stops filtering once it found this share of the nodes feasible
    # (percentageOfNodesToScore; 0: upstream's adaptive default, 50 % − nodes/125, at least
    # 5 % and 100 nodes; 100: every node), starting where the last pod's search stopped.
    percentage_of_nodes_to_score: float = 0.0
    # A preempted pod terminates for this long (terminationGracePeriodSeconds, 30 s by
    # default) holding its GPUs; the preemptor waits for it and binds afterwards.
    termination_grace_s: float = 30.0
    # kube-scheduler's OpportunisticBatching feature gate (beta, on since v1.35): a pod of
    # the same signature as the previous one takes the next node of that pod's sorted
    # search (`framework/batch.py`).
    opportunistic_batching: bool = True
    # PodTopologySpread's system defaulting (`defaultingType: System`, upstream's default
    # configuration). The replay has no Services or ReplicaSets for the default constraints
    # to select, so they never score; but while they are configured PodTopologySpread
    # signs no pod, so OpportunisticBatching never reuses a search. False: `defaultingType:
    # List` with no constraints, as the batching docs ask of a profile.
    default_topology_spread: bool = True
    source: str = ""

    @property
    def preemption_frees_gpus(self) -> bool:
        """Can kube-scheduler's preemption (PostFilter) give a preemptor GPUs? Not when
        the GPUs are claimed through DRA, before KEP-5690 (`dra_preemption`)."""
        return not self.group_device_claim or self.dra_preemption

    @property
    def reads_seed(self) -> bool:
        """Can the replay's seed change an event under this profile? Only through a seeded
        plugin (`names.SEEDED`) or the keyed tie draw (`tie_break = "random"`): under heap
        order or lowest index, with neither plugin, every seed gives the same event log."""
        if self.tie_break == TieBreak.RANDOM:
            return True
        plugins = {name for name, _ in self.scores} | set(self.post_filter)
        return not plugins.isdisjoint(names.SEEDED)

    def preemption_frees_gpus_for(self, claims: object) -> bool:
        """`preemption_frees_gpus` for a preemptor with DRA `claims` (None: a plain count):
        a victim's claims stay allocated in preemption's simulation (DynamicResources has no
        PreFilterExtensions), so a preemptor that asks for devices frees none before KEP-5690."""
        return self.preemption_frees_gpus and (claims is None or self.dra_preemption)

    @property
    def signs_pods(self) -> bool:
        """Does the profile give pods a signature (`SignPod`), so that OpportunisticBatching
        can hand out hints? Not with the gate off; not for pod groups (the replay places a
        group's pods in its own planning loop, see docs/fidelity.md); not with the heap's
        order replaced by another tie rule (the hints are the heap's pops); and not when a
        plugin refuses to sign: PodTopologySpread with default constraints, DynamicResources
        for pods with resource claims (`group_device_claim`), and scheduler-plugins'
        Coscheduling (a PreFilter plugin without SignPod disables signatures for the profile)."""
        return (self.opportunistic_batching and self.unit is Unit.POD and self.tie_break is TieBreak.HEAP_ORDER
                and not self.default_topology_spread and not self.group_device_claim
                and self.queue_sort != "Coscheduling")

    def args(self, plugin: str) -> dict[str, Any]:
        return self.plugin_args.get(plugin, {})


def shipped_profiles() -> list[str]:
    folder = resources.files("scheduler") / "profiles"
    return sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))


def load_profile(name_or_path: str | None) -> Profile:
    """A shipped profile by name, or a user's TOML by path; None means the default."""
    name_or_path = name_or_path or DEFAULT_PROFILE
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise InputError(path.name, "profile file not found")
        text, label = path.read_text(encoding="utf-8"), path.name
    else:
        resource = resources.files("scheduler") / "profiles" / f"{name_or_path}.toml"
        if not resource.is_file():
            known = ", ".join(shipped_profiles())
            raise InputError("--profile", f"unknown profile {name_or_path!r}; shipped: {known}")
        text, label = resource.read_text(encoding="utf-8"), f"{name_or_path}.toml"
    try:
        data = parse_toml(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(label, f"not valid TOML: {exc}") from None
    return _from_dict(data, label)


def _from_dict(data: dict[str, Any], label: str) -> Profile:
    def fail(key: str, message: str) -> InputError:
        return InputError(label, message, field=key)

    for key in data:
        if key not in _TOP_KEYS:
            raise fail(key, "unknown key")
    unit = data.get("unit", "pod_group")
    if unit not in set(Unit):
        raise fail("unit", f"must be one of {', '.join(Unit)}, got {unit!r}")
    points = data.get("extension_points", {})
    for key in points:
        if key not in _POINTS:
            raise fail(f"extension_points.{key}", "unknown extension point")
    plugins = known_plugins()

    def names(point: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = points.get(point, list(default))
        value = [value] if isinstance(value, str) else value
        for item in value:
            if item not in plugins.get(point, set()):
                allowed = ", ".join(sorted(plugins.get(point, set())))
                raise fail(f"extension_points.{point}", f"unknown plugin {item!r}; known: {allowed}")
        return tuple(value)

    scores_raw = points.get("score", [["LeastAllocated", 1]])
    scores: list[tuple[str, float]] = []
    for item in scores_raw:
        name, weight = (item, 1.0) if isinstance(item, str) else (item[0], float(item[1]))
        if name not in plugins["score"]:
            allowed = ", ".join(sorted(plugins["score"]))
            raise fail("extension_points.score", f"unknown plugin {name!r}; known: {allowed}")
        scores.append((name, weight))
    behaviour = data.get("behaviour", {})
    settings: dict[str, Any] = {}
    for key, value in behaviour.items():
        if key not in _BEHAVIOUR:
            raise fail(f"behaviour.{key}", "unknown key")
        if key == "tie_break":
            if value not in set(TieBreak):
                raise fail(f"behaviour.{key}", f"must be one of {', '.join(TieBreak)}, got {value!r}")
            settings[key] = TieBreak(value)
        elif key == "percentage_of_nodes_to_score":
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
                raise fail(f"behaviour.{key}", f"must be a percentage 0..100 (0: adaptive), got {value!r}")
            settings[key] = float(value)
        elif key in _FLAGS:
            if not isinstance(value, bool):
                raise fail(f"behaviour.{key}", f"must be true or false, got {value!r}")
            settings[key] = value
        elif isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= _MAX_SECONDS:
            # also NaN, infinity and integers past a float: bounded before any arithmetic
            raise fail(f"behaviour.{key}", f"must be a number of seconds from 0 to ten years, got {value!r}"[:300])
        else:
            settings[key] = float(value)
    queue_sort = names("queue_sort", ("PrioritySort",))
    return Profile(
        name=str(data.get("name", label.removesuffix(".toml"))),
        unit=Unit(unit),
        description=str(data.get("description", "")),
        queue_sort=queue_sort[0],
        filters=names("filter", ("GpuFit", "NodeResourcesFit")),
        scores=tuple(scores),
        permit=names("permit", ()),
        post_filter=names("post_filter", ()),
        plugin_args={k: dict(v) for k, v in data.get("plugin_args", {}).items()},
        source=label,
        **settings,
    )

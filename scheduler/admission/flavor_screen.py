"""The part of flavor assignment that reads no quota: which resource groups a workload asks
for, and which flavors of each group it could ever be given.

Before any quota is read, `assign_flavors` (Kueue's findFlavorForPodSets and
checkFlavorForPodSets) refuses a workload whose resources the ClusterQueue does not cover,
and skips, with a NoMatchingFlavor reason, a flavor whose Topology does not match the pod
set's topology request, whose nodeTaints the pods do not tolerate, or whose nodeLabels
contradict the pod's GPU-model affinity. Every one of those reads only the ClusterQueue's
spec, the ResourceFlavors, the Topologies and the workload's requested resources, GPU models
and topology request: none of them changes during a replay. So the answer is computed once
per (ClusterQueue, workload shape) and kept (`FlavorScreen`); the shape (`AdmissionWorkload.shape`)
holds the requests, the models and, whenever a flavor has a Topology, the topology request.

`screen_flavors` is the plain computation; `replay --verify` compares each kept screen with
it ("flavor screen per ClusterQueue and workload shape").
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import IntEnum

from scheduler.admission.objects import ClusterQueue, ResourceFlavor, Topology
from scheduler.admission.workloads import AdmissionWorkload
from scheduler.model.cluster import LEVEL_LABELS, untolerated
from scheduler.model.workload import Workload
from scheduler.verify import ClockedVerifier

SCREEN_CHECK = "flavor screen per ClusterQueue and workload shape"
_MOST_ENTRIES = 100_000  # one per (ClusterQueue, shape) seen; dropping them only costs time

# Per flavor of a group, in the ClusterQueue's order: its name and why it is skipped
# (a NoMatchingFlavor reason) or None when its quota is to be checked.
ScreenedFlavor = tuple[str, "str | None"]
# Per resource group the workload asks for: its index, the requested resources it covers
# (in the group's order), and its flavors.
ScreenedGroup = tuple[int, tuple[str, ...], tuple[ScreenedFlavor, ...]]
# The first requested resource no group covers (its reason), or None; and the groups.
Screen = tuple["str | None", tuple[ScreenedGroup, ...]]


def flavor_accepts(flavor: ResourceFlavor, models: tuple[str, ...]) -> bool:
    """The pod's GPU-model affinity, restricted to the flavor's own label keys, matches."""
    if not models:
        return True
    product = flavor.gpu_product
    return product is None or product in models


class TasFlavors(IntEnum):
    """How many of a ClusterQueue's flavors have a Topology."""

    NONE = 0
    SOME = 1
    ALL = 2  # Kueue's ClusterQueue IsTASOnly: TAS is implied for every pod set


def tas_flavors(spec: ClusterQueue, flavors: Mapping[str, ResourceFlavor]) -> TasFlavors:
    """How the trace's topology columns read for a workload of this ClusterQueue. They are
    Kueue's podset topology annotations whenever the queues file uses Topology-Aware
    Scheduling at all (some ResourceFlavor has a Topology): then, as upstream checks every
    flavor regardless of the ClusterQueue, a topology pod set in a ClusterQueue without a TAS
    flavor matches no flavor (SOME). A queues file without any Topology (the demo's) leaves
    them the placement plugin's own constraint (a kube-level gang topology): NONE, no flavor
    is refused for them. ALL: every flavor of the ClusterQueue has one (TAS implied)."""
    if not any(flavor.topology_name is not None for flavor in flavors.values()):
        return TasFlavors.NONE
    with_topology = [flavors[fq.flavor].topology_name is not None for group in spec.resource_groups
                     for fq in group.flavors]
    return TasFlavors.ALL if with_topology and all(with_topology) else TasFlavors.SOME


def topology_mismatch(workload: Workload, flavor: ResourceFlavor, topologies: Mapping[str, Topology], *,
                      implied: bool) -> str | None:
    """Kueue's checkPodSetAndFlavorMatchForTAS (tas_flavorassigner.go): why the pod set and
    the flavor do not match under Topology-Aware Scheduling, or None. `implied`: the
    ClusterQueue is TAS-only, so a pod set asking for no level is a TAS pod set anyway. The
    replay's pod set asks for all the resources of the group being assigned, so a flavor
    without a Topology never serves a TAS pod set quota-only."""
    level = workload.topology_required or workload.topology_preferred
    if level is None:
        if implied:
            return None
        return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling' if flavor.topology_name else None
    if flavor.topology_name is None:
        return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
    topology = topologies.get(flavor.topology_name)
    if topology is None:
        return f'Flavor "{flavor.name}" information missing in TAS cache'
    if LEVEL_LABELS.get(level, level) not in topology.levels:
        return f'Flavor "{flavor.name}" does not contain the requested level'
    return None


def screen_flavors(wl: AdmissionWorkload, spec: ClusterQueue, flavors: Mapping[str, ResourceFlavor],
                   topologies: Mapping[str, Topology]) -> Screen:
    """The screen of `wl` in the ClusterQueue `spec`, computed afresh. The trace's topology
    columns are Kueue's pod set annotations only when some ResourceFlavor has a Topology
    (upstream checks every flavor regardless of the ClusterQueue, so a topology pod set in a
    ClusterQueue without a TAS flavor matches none); a queues file without any Topology leaves
    them the placement plugin's own constraint, and no flavor is refused for them."""
    covered = {r for group in spec.resource_groups for r in group.covered_resources}
    for resource in wl.requests:
        if resource not in covered:
            return f"resource {resource} unavailable in ClusterQueue", ()
    tas = tas_flavors(spec, flavors)
    groups: list[ScreenedGroup] = []
    for group_index, group in enumerate(spec.resource_groups):
        requested = tuple(r for r in group.covered_resources if r in wl.requests)
        if not requested:
            continue
        screened: list[ScreenedFlavor] = []
        for flavor_quotas in group.flavors:
            name = flavor_quotas.flavor
            flavor = flavors[name]
            reason = None if tas is TasFlavors.NONE else topology_mismatch(
                wl.run.original_spec, flavor, topologies, implied=tas is TasFlavors.ALL)
            if reason is None:
                taint = untolerated(flavor.node_taints, flavor.tolerations)
                if taint is not None:  # the trace's pods tolerate nothing themselves
                    reason = f"untolerated taint {taint} in flavor {name}"
                elif not flavor_accepts(flavor, wl.models):
                    reason = f"flavor {name} doesn't match node affinity"
            screened.append((name, reason))
        groups.append((group_index, requested, tuple(screened)))
    return None, tuple(groups)


class FlavorScreen:
    """Screens kept per (ClusterQueue, workload shape): what they read never changes during a
    replay (see the module's docstring)."""

    def __init__(self, flavors: Mapping[str, ResourceFlavor], topologies: Mapping[str, Topology]) -> None:
        self.flavors = flavors
        self.topologies = topologies
        self._screens: dict[tuple[object, ...], Screen] = {}
        self.check: ClockedVerifier | None = None  # `replay --verify`: every kept screen computed afresh

    def key(self, wl: AdmissionWorkload, spec: ClusterQueue) -> tuple[object, ...]:
        return (spec.name, wl.shape)

    def of(self, wl: AdmissionWorkload, spec: ClusterQueue) -> Screen:
        key = self.key(wl, spec)
        found = self._screens.get(key)
        if found is None:
            if len(self._screens) >= _MOST_ENTRIES:
                self._screens.clear()
            found = self._screens[key] = screen_flavors(wl, spec, self.flavors, self.topologies)
        elif self.check is not None:
            self.check.same(SCREEN_CHECK, found, screen_flavors(wl, spec, self.flavors, self.topologies), wl.name)
        return found

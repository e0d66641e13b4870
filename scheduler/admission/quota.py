"""Quota arithmetic over the cohort tree, exactly as Kueue's resource nodes do it.

Every ClusterQueue and Cohort is a `QuotaNode`; quantities are integers in milli-units per
FlavorResource ``(flavor, resource)``. Source: kueue pkg/cache/scheduler/resource_node.go
(semantics reference §4.2):

    CQ.subtree[fr]      = nominalQuota
    Cohort.subtree[fr]  = own nominalQuota + Σ_children (child.subtree − child.guaranteed)
    guaranteed(n)       = max(0, subtree − lendingLimit) if lendingLimit is set, else 0
    Cohort.usage[fr]    = Σ_children max(0, child.usage − child.guaranteed)
    available(n)        = root: subtree − usage
                          else: max(0, guaranteed − usage) + min(available(parent),
                                [borrowingLimit set: (subtree − guaranteed)
                                 − max(0, usage − guaranteed) + borrowingLimit])
    potential(n)        = root: subtree
                          else: min(guaranteed + potential(parent), subtree + borrowingLimit)

`add_usage` / `remove_usage` move usage up the tree the way Kueue's addUsage/removeUsage do,
so the cohort totals above hold by construction. The tree is mutable on purpose: an
admission cycle simulates "what if these workloads were gone" by removing their usage and
adding it back (Kueue's SimulateWorkloadRemoval + restore), never by copying.

Cohort names that ClusterQueues (or Cohort parents) mention without a Cohort object become
implicit cohorts with no quota of their own, as in Kueue. A cycle of Cohort parents makes
every ClusterQueue of that tree inactive (Kueue disables the whole tree).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from scheduler.admission.objects import QueueConfig, ResourceGroup
from scheduler.admission.policies import StopPolicy

# (flavor, resource). Typed as a variable-length tuple on purpose: mypyc keeps a fixed-length
# tuple[str, str] unboxed, as a C struct, and builds a fresh tuple object for every dict lookup
# it is passed to; typed so, the compiled build passes the key object itself. The keys a replay
# uses are one object per pair (`FlavorResourceKeys`), so the dicts find them by identity
# instead of comparing equal tuples item by item.
FlavorResource = tuple[str, ...]
Usage = Mapping[FlavorResource, int]


class FlavorResourceKeys:
    """One `FlavorResource` object per (flavor, resource) pair of a quota tree (interning, no
    module-level state): the tree's quotas and every flavor assignment take their keys here."""

    __slots__ = ("_by_flavor",)

    def __init__(self) -> None:
        self._by_flavor: dict[str, dict[str, FlavorResource]] = {}

    def of(self, flavor: str, resource: str) -> FlavorResource:
        by_resource = self._by_flavor.get(flavor)
        if by_resource is None:
            by_resource = self._by_flavor[flavor] = {}
        fr = by_resource.get(resource)
        if fr is None:
            fr = by_resource[resource] = (flavor, resource)
        return fr


class QuotaNode:
    """One ClusterQueue or Cohort of the tree."""

    __slots__ = (
        "name", "is_cluster_queue", "parent", "child_cohorts", "child_queues", "nominal",
        "borrowing_limit", "lending_limit", "subtree", "guaranteed", "usage", "weight", "depth", "_potential", "keys",
    )

    def __init__(self, name: str, is_cluster_queue: bool, weight: float = 1.0,
                 keys: FlavorResourceKeys | None = None) -> None:
        self.name = name
        self.is_cluster_queue = is_cluster_queue
        self.parent: QuotaNode | None = None
        self.child_cohorts: list[QuotaNode] = []
        self.child_queues: list[QuotaNode] = []
        self.nominal: dict[FlavorResource, int] = {}
        self.borrowing_limit: dict[FlavorResource, int] = {}  # absent: unlimited
        self.lending_limit: dict[FlavorResource, int] = {}  # absent: lends everything
        self.subtree: dict[FlavorResource, int] = {}
        self.guaranteed: dict[FlavorResource, int] = {}
        self.usage: dict[FlavorResource, int] = {}
        self.weight = weight
        self.depth = 0  # 0 for a root
        self._potential: dict[FlavorResource, int] = {}  # `potential_available`, once asked
        self.keys = FlavorResourceKeys() if keys is None else keys  # the tree's, shared by its nodes

    def __repr__(self) -> str:
        kind = "ClusterQueue" if self.is_cluster_queue else "Cohort"
        return f"<{kind} {self.name}>"

    # -- reading -------------------------------------------------------------------------

    def root(self) -> QuotaNode:
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def ancestors(self) -> Iterator[QuotaNode]:
        """Parent, grandparent, …, root."""
        node = self.parent
        while node is not None:
            yield node
            node = node.parent

    def path(self) -> str:
        """Kueue's preemption-message path: ``/root/…/name``."""
        names = [self.name, *(a.name for a in self.ancestors())]
        return "/" + "/".join(reversed(names))

    def local_available(self, fr: FlavorResource, after: UsageAfter | None = None) -> int:
        guaranteed = self.guaranteed.get(fr, 0) if self.guaranteed else 0  # see `available`
        return max(0, guaranteed - (self.usage.get(fr, 0) if after is None else self.usage_after(fr, after)))

    def available(self, fr: FlavorResource, after: UsageAfter | None = None) -> int:
        """What can still be admitted for `fr` without preemption (may be negative at a root);
        with `after` (`usage_after_removing`), as it would be once those removals were made."""
        overlaid = None if after is None else after.get(self)
        usage = self.usage.get(fr, 0) if overlaid is None else overlaid
        parent = self.parent
        if parent is None:
            return self.subtree.get(fr, 0) - usage
        # Most trees set no lending or borrowing limits: an empty dict is not asked, which
        # would hash the key only to find nothing (a tuple does not keep its hash).
        guaranteed = self.guaranteed.get(fr, 0) if self.guaranteed else 0
        from_parent = parent.available(fr, after)
        limit = self.borrowing_limit.get(fr) if self.borrowing_limit else None
        if limit is not None:
            stored_in_parent = self.subtree.get(fr, 0) - guaranteed
            used_in_parent = max(0, usage - guaranteed)
            from_parent = min(stored_in_parent - used_in_parent + limit, from_parent)
        return max(0, guaranteed - usage) + from_parent

    def usage_after(self, fr: FlavorResource, after: UsageAfter) -> int:
        overlaid = after.get(self)
        return self.usage.get(fr, 0) if overlaid is None else overlaid

    def potential_available(self, fr: FlavorResource) -> int:
        """The most this node could ever hold of `fr` (an empty cluster). It reads only
        quotas and limits, which a replay never changes once the tree is built (`QuotaTree`),
        so it is computed once per flavor-resource."""
        found = self._potential.get(fr)
        if found is None:
            found = self._potential[fr] = self._potential_available(fr)
        return found

    def _potential_available(self, fr: FlavorResource) -> int:
        if self.parent is None:
            return self.subtree.get(fr, 0)
        most = self.guaranteed.get(fr, 0) + self.parent.potential_available(fr)
        limit = self.borrowing_limit.get(fr)
        if limit is not None:
            most = min(self.subtree.get(fr, 0) + limit, most)
        return most

    def borrowing_with(self, fr: FlavorResource, extra: int = 0, after: UsageAfter | None = None) -> bool:
        usage = self.usage.get(fr, 0) if after is None else self.usage_after(fr, after)
        return usage + extra > self.subtree.get(fr, 0)

    def within_nominal(self, frs: Iterable[FlavorResource]) -> bool:
        """Kueue's IsWithinNominalInResources."""
        return all(self.usage.get(fr, 0) <= self.subtree.get(fr, 0) for fr in frs)

    def fits_in_quota(self, requests: Usage) -> tuple[bool, dict[FlavorResource, int]]:
        """Kueue's QuantitiesFitInQuota: does `requests` fit in this subtree's quota, and
        what is left over beyond what this node guarantees (asked of the parent next)."""
        fits = True
        remaining = {}
        for fr, value in requests.items():
            if self.usage.get(fr, 0) + value > self.subtree.get(fr, 0):
                fits = False
            remaining[fr] = max(0, value - self.local_available(fr))
        return fits, remaining

    def height(self) -> int:
        """Distance to the furthest leaf (a ClusterQueue is 0; a cohort of queues 1)."""
        if self.is_cluster_queue:
            return 0
        height = min(len(self.child_queues) + len(self.child_cohorts), 1)
        for child in self.child_cohorts:
            height = max(height, child.height() + 1)
        return height

    def borrowing_level(self, fr: FlavorResource, value: int, after: UsageAfter | None = None) -> tuple[int, bool]:
        """Kueue's FindHeightOfLowestSubtreeThatFits: 0 when `value` fits in this queue's
        own quota, else the height of the lowest cohort subtree that holds it; and whether
        that subtree is smaller than the whole tree (reclaim lower down may help). With
        `after` (`usage_after_removing`), as it would be once those removals were made."""
        # A loop up the parents rather than `ancestors()`: asked at every quota check, where
        # making the generator cost more than the steps it yields.
        parent = self.parent
        if parent is None or not self.borrowing_with(fr, value, after):
            return 0, parent is not None
        remaining = value - self.local_available(fr, after)
        node = parent
        while True:
            if not node.borrowing_with(fr, remaining, after):
                return node.height(), node.parent is not None
            up = node.parent
            if up is None:
                return node.height(), False
            remaining -= node.local_available(fr, after)
            node = up

    # -- changing ------------------------------------------------------------------------

    def add_usage(self, fr: FlavorResource, value: int) -> None:
        usage = self.usage.get(fr, 0)
        local = max(0, (self.guaranteed.get(fr, 0) if self.guaranteed else 0) - usage)
        self.usage[fr] = usage + value
        if self.parent is not None and value > local:
            self.parent.add_usage(fr, value - local)

    def remove_usage(self, fr: FlavorResource, value: int) -> None:
        usage = self.usage.get(fr, 0)
        stored_in_parent = usage - self.guaranteed.get(fr, 0) if self.guaranteed else usage
        self.usage[fr] = usage - value
        if stored_in_parent <= 0 or self.parent is None:
            return
        self.parent.remove_usage(fr, min(value, stored_in_parent))


UsageAfter = dict[QuotaNode, int]  # one flavor-resource's usage per node, where removals changed it


def usage_after_removing(fr: FlavorResource, leaving: Iterable[tuple[QuotaNode, int]]) -> UsageAfter:
    """The usage of `fr` that `remove_usage` would leave on each node it reaches, removing each
    (queue, amount) of `leaving` in turn, without writing the tree: a what-if that needs no
    restore. Nodes it does not reach keep their usage (read `available(fr, after)` or
    `usage_after`)."""
    after: UsageAfter = {}
    for queue, amount in leaving:
        remove_on_overlay(after, queue, fr, amount)
    return after


def remove_on_overlay(after: UsageAfter, queue: QuotaNode, fr: FlavorResource, value: int) -> None:
    """`QuotaNode.remove_usage` written to `after` instead of the nodes (the same arithmetic)."""
    node: QuotaNode | None = queue
    while node is not None:
        overlaid = after.get(node)  # the tree's usage read only where the overlay has none
        usage = node.usage.get(fr, 0) if overlaid is None else overlaid
        stored_in_parent = usage - node.guaranteed.get(fr, 0) if node.guaranteed else usage
        after[node] = usage - value
        if stored_in_parent <= 0:
            return
        value = min(value, stored_in_parent)
        node = node.parent


def add_on_overlay(after: UsageAfter, queue: QuotaNode, fr: FlavorResource, value: int) -> None:
    """`QuotaNode.add_usage` written to `after` instead of the nodes (the same arithmetic)."""
    node: QuotaNode | None = queue
    while node is not None:
        overlaid = after.get(node)  # the tree's usage read only where the overlay has none
        usage = node.usage.get(fr, 0) if overlaid is None else overlaid
        local = max(0, (node.guaranteed.get(fr, 0) if node.guaranteed else 0) - usage)
        after[node] = usage + value
        if value <= local:
            return
        value -= local
        node = node.parent


class QuotaOverlay:
    """A what-if's usage changes kept beside the tree, per flavor-resource and node, instead of
    written to it: removals and additions with the tree's own arithmetic, and the readings a
    victim search makes (available quota, borrowing, within nominal) through them. Dropping
    it is the restore."""

    __slots__ = ("_by_fr",)

    def __init__(self) -> None:
        self._by_fr: dict[FlavorResource, UsageAfter] = {}

    def remove(self, queue: QuotaNode, usage: Usage) -> None:
        for fr, value in usage.items():
            remove_on_overlay(self._by_fr.setdefault(fr, {}), queue, fr, value)

    def add(self, queue: QuotaNode, usage: Usage) -> None:
        for fr, value in usage.items():
            add_on_overlay(self._by_fr.setdefault(fr, {}), queue, fr, value)

    def usage(self, node: QuotaNode, fr: FlavorResource) -> int:
        after = self._by_fr.get(fr)
        return node.usage.get(fr, 0) if after is None else node.usage_after(fr, after)

    def available(self, node: QuotaNode, fr: FlavorResource) -> int:
        return node.available(fr, self._by_fr.get(fr))

    def borrowing_with(self, node: QuotaNode, fr: FlavorResource, extra: int) -> bool:
        return self.usage(node, fr) + extra > node.subtree.get(fr, 0)

    def within_nominal(self, node: QuotaNode, frs: Iterable[FlavorResource]) -> bool:
        return all(self.usage(node, fr) <= node.subtree.get(fr, 0) for fr in frs)


class QuotaTree:
    """All ClusterQueues and Cohorts of a queue configuration, linked and summed."""

    def __init__(self, config: QueueConfig) -> None:
        self.queues: dict[str, QuotaNode] = {}
        self.cohorts: dict[str, QuotaNode] = {}
        self.inactive: dict[str, str] = {}  # ClusterQueue -> why it is inactive
        # Bumped by `touch` whenever usage changes (an admission, a release, a reservation
        # for one admission cycle), not by what-ifs that restore what they change: answers
        # computed against the tree (assignments, preemption oracle) stay valid until then.
        self.version = 0
        # Bumped by `commit`: changes for real, which a cycle's reservations are not.
        self.commits = 0
        self.keys = FlavorResourceKeys()
        for name, cohort in config.cohorts.items():
            node = self._cohort(name)
            node.weight = cohort.fair_sharing_weight
            _set_quota(node, cohort.resource_groups)
        for name, cohort in config.cohorts.items():
            if cohort.parent:
                _link(self._cohort(cohort.parent), self.cohorts[name])
        for name, queue in config.cluster_queues.items():
            node = QuotaNode(name, True, queue.fair_sharing_weight, self.keys)
            _set_quota(node, queue.resource_groups)
            self.queues[name] = node
            if queue.cohort:
                _link(self._cohort(queue.cohort), node)
            if queue.stop_policy is not StopPolicy.NONE:
                self.inactive[name] = f"ClusterQueue {name} is inactive (stopPolicy {queue.stop_policy})"
        cyclic = _cohorts_in_cycles(self.cohorts.values())
        for name, node in self.queues.items():
            if any(a.name in cyclic for a in _bounded_ancestors(node, len(self.cohorts) + 1)):
                self.inactive[name] = f"ClusterQueue {name} is inactive (its cohort tree has a cycle)"
        roots = {id(n.root()): n.root() for n in self.queues.values() if n.name not in self.inactive}
        for root in roots.values():
            _accumulate(root, 0)

    def _cohort(self, name: str) -> QuotaNode:
        node = self.cohorts.get(name)
        if node is None:
            node = self.cohorts[name] = QuotaNode(name, False, keys=self.keys)
        return node

    def queue(self, name: str) -> QuotaNode:
        return self.queues[name]

    def add(self, queue: QuotaNode, usage: Usage) -> None:
        for fr, value in usage.items():
            queue.add_usage(fr, value)

    def remove(self, queue: QuotaNode, usage: Usage) -> None:
        for fr, value in usage.items():
            queue.remove_usage(fr, value)

    def touch(self) -> None:
        """Usage changed (see `version`)."""
        self.version += 1

    def commit(self) -> None:
        """Usage or its holders changed for real: an admission, an eviction, a release."""
        self.commits += 1
        self.touch()

    def queues_of_tree(self, queue: QuotaNode) -> list[QuotaNode]:
        """Every ClusterQueue sharing `queue`'s root cohort (or just `queue`)."""
        return list(_queues_under(queue.root())) if queue.parent is not None else [queue]


# -- building -----------------------------------------------------------------------------


def _set_quota(node: QuotaNode, groups: tuple[ResourceGroup, ...]) -> None:
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                fr = node.keys.of(flavor.flavor, quota.resource)
                node.nominal[fr] = quota.nominal_milli
                if quota.borrowing_limit_milli is not None:
                    node.borrowing_limit[fr] = quota.borrowing_limit_milli
                if quota.lending_limit_milli is not None:
                    node.lending_limit[fr] = quota.lending_limit_milli


def _link(parent: QuotaNode, child: QuotaNode) -> None:
    child.parent = parent
    (parent.child_queues if child.is_cluster_queue else parent.child_cohorts).append(child)


def _bounded_ancestors(node: QuotaNode, limit: int) -> Iterator[QuotaNode]:
    current = node.parent
    for _ in range(limit):
        if current is None:
            return
        yield current
        current = current.parent


def _cohorts_in_cycles(cohorts: Iterable[QuotaNode]) -> set[str]:
    cyclic: set[str] = set()
    for start in cohorts:
        seen = {start.name}
        node = start.parent
        while node is not None:
            if node.name in seen:
                cyclic |= seen
                break
            seen.add(node.name)
            node = node.parent
    return cyclic


def _accumulate(node: QuotaNode, depth: int) -> None:
    """Post-order: each node's subtree quota and guaranteed part from its children."""
    node.depth = depth
    node.subtree = dict(node.nominal)
    for child in (*node.child_cohorts, *node.child_queues):
        _accumulate(child, depth + 1)
        for fr, quota in child.subtree.items():
            node.subtree[fr] = node.subtree.get(fr, 0) + quota - child.guaranteed.get(fr, 0)
    node.guaranteed = {
        fr: max(0, node.subtree.get(fr, 0) - limit) for fr, limit in node.lending_limit.items()
    }


def _queues_under(node: QuotaNode) -> Iterator[QuotaNode]:
    for child in node.child_cohorts:
        yield from _queues_under(child)
    yield from node.child_queues


def lowest_common_ancestor(a: QuotaNode, b: QuotaNode) -> QuotaNode | None:
    ancestors_of_a = {id(n) for n in a.ancestors()}
    for node in b.ancestors():
        if id(node) in ancestors_of_a:
            return node
    return None


def child_towards(ancestor: QuotaNode, node: QuotaNode) -> QuotaNode:
    """The child of `ancestor` on the path down to `node` (Kueue's "almost LCA")."""
    while node.parent is not ancestor:
        assert node.parent is not None, "ancestor is not above node"
        node = node.parent
    return node


"""The fewest victims: remove candidates one by one until the preemptor fits, then add back
what is not needed, newest removed first (Kueue's minimal preemption and fillBackWorkloads,
pkg/scheduler/preemption/preemption.go). Everything is simulated on the live quota tree and
undone by `restore`.

Removing candidates one by one asks "does it fit now?" after each, and on a busy cluster
most answers are "no" long before the last. The first `bounds.py` fact settles those by a
running sum in candidate order: removing x of usage anywhere raises the queue's `available`
by at most x, so while, for some requested flavor-resource, the request exceeds what was
available when the search began plus the candidates' usage of it removed so far, the
preemptor does not fit and the tree walk is skipped. `replay --verify` walks the tree
beside each such "no" ("victim search step ruled out by a running sum"). The fill-back asks
the same question of the removed set less the candidate it would add back: when the sums
say "no", the candidate stays removed without being added, checked and removed again
("victim search fill-back step ruled out by a running sum"). Searches that need many
victims (a large preemptor, small candidates) add back nearly every one only to remove it
again, so this is most of a long search's fill-back.

With `on_overlay` (classical preemption), the removals and the fill-back's additions go to an
overlay beside the tree instead of the tree itself (per flavor-resource, the usage they leave
on each node they reach: `quota.remove_on_overlay`, `add_on_overlay`), and the fit and the
callers' validity checks (`within_nominal`) read through it: the same arithmetic, nothing
written, nothing to put back. The overlay keeps only the flavor-resources the search reads
(the request's and the needed ones): a candidate's usage of any other flavor-resource moves
no quantity the search looks at (each flavor-resource's arithmetic is its own), so it is not
walked up the cohort. The oracle asks about one flavor-resource and a candidate holds three
or more. Fair sharing keeps the tree: it reads shares of the whole cohort between steps.
`replay --verify` runs each classical search both ways and compares the targets ("victim
search on an overlay of the usage").
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler.admission.preemption.common import Target, add_workload, remove_workload
from scheduler.admission.quota import (
    FlavorResource,
    QuotaNode,
    QuotaTree,
    Usage,
    UsageAfter,
    add_on_overlay,
    remove_on_overlay,
)
from scheduler.admission.workloads import AdmissionWorkload
from scheduler.verify import ClockedVerifier

TopologyFits = Callable[[list[AdmissionWorkload]], bool]


class VictimSearch:
    def __init__(self, tree: QuotaTree, queue: QuotaNode, usage: Usage, allow_borrowing: bool,
                 preemptor_usage_simulated: bool = False, check: ClockedVerifier | None = None,
                 topology_fits: TopologyFits | None = None, on_overlay: bool = False,
                 frs_need: frozenset[FlavorResource] = frozenset()) -> None:
        assert not (on_overlay and preemptor_usage_simulated), "fair sharing reads the tree between steps"
        self.tree = tree
        # Reads go through the overlay either way: without an entry for a flavor-resource
        # (the tree mode's case), they read the tree as it stands.
        self.overlay: dict[FlavorResource, UsageAfter] = {}
        self.writes_tree = not on_overlay
        # What the overlay keeps: every flavor-resource `_fits` and `within_nominal` read.
        self.reads: tuple[FlavorResource, ...] = _reads(usage, frs_need)
        self.queue = queue
        self.usage = usage
        self.allow_borrowing = allow_borrowing
        self.simulated = preemptor_usage_simulated  # fair sharing keeps it added while choosing
        self.check = check
        self.topology_fits = topology_fits  # TAS: does the pod set's topology fit with these gone?
        self.removed: list[Target] = []
        self.result: list[Target] = []
        # Per requested flavor-resource: what was available at the start (the tree as `_fits`
        # sees it: without the preemptor's usage) plus what the removed candidates use of it.
        self._most_available: dict[FlavorResource, int] = {fr: queue.available(fr) for fr, v in usage.items() if v > 0}

    def take(self, target: Target) -> bool:
        """Remove `target`; True (and `result` set) when the preemptor fits now."""
        self._remove(target.workload)
        self.removed.append(target)
        if self._surely_short(target):
            if self.check is not None:
                self.check.same("victim search step ruled out by a running sum", False, self._fits_now(),
                                target.workload.name)
            return False
        tree = self.tree
        if self.simulated:
            tree.remove(self.queue, self.usage)
        try:
            if not self._fits():
                return False
            for target_back in reversed(self.removed[:-1]):
                if self._surely_short_without(target_back):
                    if self.check is not None:
                        self.check.same("victim search fill-back step ruled out by a running sum", False,
                                        self._fits_with_back(target_back), target_back.workload.name)
                    continue  # it stays removed, as a failed fit check leaves it
                self._add(target_back.workload)
                if self._fits(target_back):
                    self.removed.remove(target_back)
                    self._count_back(target_back)
                else:
                    self._remove(target_back.workload)
            self.result = list(self.removed)
            return True
        finally:
            if self.simulated:
                tree.add(self.queue, self.usage)

    def _surely_short(self, target: Target) -> bool:
        """Adds `target`'s usage to the running sums; True when some request exceeds its bound."""
        most, removed_usage = self._most_available, target.workload.usage
        short = False
        for fr, value in self.usage.items():
            if value <= 0:
                continue
            bound = most[fr] = most[fr] + removed_usage.get(fr, 0)
            if value > max(0, bound):
                short = True
        return short

    def _surely_short_without(self, target: Target) -> bool:
        """The fill-back's question, "does the preemptor still fit with `target` back?",
        answered "no" by the running sums: the removed candidates but `target` raise what is
        available by at most their usage, so a request above what was available at the start
        plus that usage cannot fit (adding back never raises `available`)."""
        most, back_usage = self._most_available, target.workload.usage
        for fr, value in self.usage.items():
            if value > 0 and value > max(0, most[fr] - back_usage.get(fr, 0)):
                return True
        return False

    def _count_back(self, target: Target) -> None:
        """`target` is back for good: its usage leaves the running sums."""
        most, back_usage = self._most_available, target.workload.usage
        for fr in most:
            most[fr] -= back_usage.get(fr, 0)

    def _fits_with_back(self, target: Target) -> bool:
        """The plain fill-back step (`replay --verify`): `target` added back, the fit read,
        `target` removed again (adding then removing the same usage leaves every node's usage
        as it was)."""
        self._add(target.workload)
        try:
            return self._fits(target)
        finally:
            self._remove(target.workload)

    def _fits_now(self) -> bool:
        """`_fits` as `take` would read it (the verification's plain answer): the tree, through
        the search's overlay when it has one (the overlay itself is checked by the classical
        search run both ways)."""
        if self.simulated:
            self.tree.remove(self.queue, self.usage)
        try:
            return self._fits()
        finally:
            if self.simulated:
                self.tree.add(self.queue, self.usage)

    def _fits(self, back: Target | None = None) -> bool:
        """Kueue's workloadFits: within what is available, within nominal quota when
        borrowing is not allowed, and (TAS) the pod set's topology fits with the removed
        workloads gone (`back`, being added back, is not gone)."""
        queue, overlay = self.queue, self.overlay
        for fr, value in self.usage.items():
            after = overlay.get(fr)
            if not self.allow_borrowing and _usage(queue, fr, after) + value > queue.subtree.get(fr, 0):
                return False
            if value > max(0, queue.available(fr, after)):
                return False
        if self.topology_fits is not None:
            return self.topology_fits([t.workload for t in self.removed if t is not back])
        return True

    def within_nominal(self, node: QuotaNode, frs: frozenset[FlavorResource]) -> bool:
        """`node.within_nominal` with this search's removals made (`frs` among its `reads`)."""
        overlay = self.overlay
        return all(_usage(node, fr, overlay.get(fr)) <= node.subtree.get(fr, 0) for fr in frs)

    def restore(self) -> None:
        if self.writes_tree:
            for target in self.removed:
                add_workload(self.tree, target.workload)
        else:
            self.overlay = {}
        self.removed = []

    def _remove(self, wl: AdmissionWorkload) -> None:
        if self.writes_tree:
            remove_workload(self.tree, wl)
        else:
            self._move_on_overlay(wl, remove_on_overlay)

    def _add(self, wl: AdmissionWorkload) -> None:
        if self.writes_tree:
            add_workload(self.tree, wl)
        else:
            self._move_on_overlay(wl, add_on_overlay)

    def _move_on_overlay(self, wl: AdmissionWorkload,
                         move: Callable[[UsageAfter, QuotaNode, FlavorResource, int], None]) -> None:
        """`wl`'s usage of the flavor-resources the search reads taken off the overlay
        (`remove_on_overlay`) or put back (`add_on_overlay`)."""
        queue, usage, overlay = self.tree.queue(wl.cluster_queue or ""), wl.usage, self.overlay
        for fr in self.reads:
            value = usage.get(fr, 0)
            if value:
                after = overlay.get(fr)
                if after is None:
                    after = overlay[fr] = {}
                move(after, queue, fr, value)


def _usage(node: QuotaNode, fr: FlavorResource, after: UsageAfter | None) -> int:
    """`node`'s usage of `fr` as the overlay leaves it (the tree's without one)."""
    return node.usage.get(fr, 0) if after is None else node.usage_after(fr, after)


def _reads(usage: Usage, frs_need: frozenset[FlavorResource]) -> tuple[FlavorResource, ...]:
    """The request's flavor-resources, then the needed ones it does not name, each once (in
    the order `dict.fromkeys` would give; a loop, which the compiled build runs natively where
    it calls `dict.fromkeys` as a generic method, once per search)."""
    reads = list(usage)
    for fr in frs_need:
        if fr not in usage:
            reads.append(fr)
    return tuple(reads)

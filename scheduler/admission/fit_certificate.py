"""A nomination that fits, kept for as long as the quota checks that decided it still pass.

A nomination whose every resource group stopped at the first flavor it could be given
(the flavors before it skipped by the screen) with every resource fitting is decided by
those checks alone: per requested resource of that flavor, the request fits what is
available without preemption, at a borrowing level (Kueue's fitsResourceQuota). The
flavors before it are skipped whatever the quota (`flavor_screen`: the ClusterQueue's spec
and the workload's shape, both in the cache key); the flavors after it are not looked at;
no preemption oracle is asked. So while each request still fits, each group's highest
borrowing level still stops its scan there (`should_try_next`: it stops unless the flavor
borrows and the fungibility says to try the next when borrowing) and the highest level of
all is the one recorded, assigning the flavors afresh gives the same assignment: the same
flavors, usage and modes, borrowing, scan progress, no reasons, no targets.

Any admission or release in the cohort moves the available quota of every ClusterQueue
that borrows from it (with no lending limits, all of them), so the per-flavor-resource
versions (`nomination_cache`) invalidate nearly every cached nomination between two cycles,
while most nominations computed again come out the same fitting assignment as the last one
for that key (docs/performance.md gives the count). A fitting nomination is therefore kept
with its `FitCertificate` instead of versions: re-checking it reads the few (flavor,
resource) quotas of the chosen flavors, not the whole scan.

`replay --verify` computes every nomination reused this way afresh ("fitting nomination
reused while its quota checks pass").
"""

from __future__ import annotations

from scheduler.admission.flavor_assignment import Assignment, Mode
from scheduler.admission.flavor_screen import Screen
from scheduler.admission.objects import FlavorFungibility
from scheduler.admission.quota import FlavorResource, FlavorResourceKeys, QuotaNode

FIT_REUSE_CHECK = "fitting nomination reused while its quota checks pass"

# Per resource group: each requested (flavor, resource) of the chosen flavor and its request.
_Group = tuple[tuple[FlavorResource, int], ...]


class FitCertificate:
    """The quota checks that decided a fitting nomination (see the module's docstring)."""

    __slots__ = ("groups", "borrow", "try_next_when_borrowing")

    def __init__(self, groups: tuple[_Group, ...], borrow: int, try_next_when_borrowing: bool) -> None:
        self.groups = groups
        self.borrow = borrow  # the assignment's borrowing level: the highest of every group's
        self.try_next_when_borrowing = try_next_when_borrowing

    def holds(self, queue: QuotaNode) -> bool:
        """Assigning flavors now would give the certified assignment: every request still
        fits, no group's scan would go on past its flavor, the borrowing level is the same."""
        highest = 0
        for group in self.groups:
            level = 0
            for fr, value in group:
                if value > max(0, queue.available(fr)):
                    return False
                borrow, _ = queue.borrowing_level(fr, value)
                if borrow > level:
                    level = borrow
            if level > 0 and self.try_next_when_borrowing:
                return False  # the scan would look at the next flavor too
            if level > highest:
                highest = level
        return highest == self.borrow


def fit_certificate(assignment: Assignment, has_targets: bool, screen: Screen, start: tuple[int, ...],
                    fungibility: FlavorFungibility, keys: FlavorResourceKeys) -> FitCertificate | None:
    """The certificate of a nomination just computed, or None when it is not one that its
    quota checks alone decided: not a fit, a partial admission (a smaller count fitted after
    the whole one did not), or a group whose scan looked at another flavor than the chosen
    one (past a flavor it did not skip, or on beyond it)."""
    if assignment.mode is not Mode.FIT or has_targets or assignment.pods is not None:
        return None
    uncovered, screened_groups = screen
    if uncovered is not None:
        return None
    groups: list[_Group] = []
    for group_index, requested, screened in screened_groups:
        chosen = assignment.flavors.get(requested[0])
        if chosen is None:
            return None
        first = start[group_index] if group_index < len(start) else 0
        index = first
        while index < len(screened) and screened[index][1] is not None:
            index += 1  # skipped by the screen, whatever the quota
        if index == len(screened) or screened[index][0] != chosen:
            return None
        if assignment.tried.get(group_index) != (-1 if index == len(screened) - 1 else index):
            return None  # the scan went on past the chosen flavor
        frs = [keys.of(chosen, resource) for resource in requested]
        groups.append(tuple((fr, assignment.usage[fr]) for fr in frs))
    return FitCertificate(tuple(groups), assignment.borrow, fungibility.try_next_when_borrowing)

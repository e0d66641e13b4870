"""A version per flavor-resource: the tick of the last change to its usage or holders.

Answers the admission cycle keeps between cycles (nominations, the preemption oracle's) carry
the versions of the flavor-resources they read and stay valid while those are unchanged
(see `nomination_cache`). Under fair sharing every answer reads every flavor-resource of the
cohort, so there one version stands for the whole tree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from scheduler.admission.quota import FlavorResource

_WHOLE_TREE: FlavorResource = ("", "")  # the one version every change bumps under fair sharing


class FlavorResourceVersions:
    """A version per flavor-resource: the tick of the last change that touched it."""

    def __init__(self, *, whole_tree_only: bool) -> None:
        self.whole_tree_only = whole_tree_only
        self._tick = 0
        self._versions: dict[FlavorResource, int] = {}

    def bump(self, frs: Iterable[FlavorResource]) -> None:
        """Usage or holders of `frs` changed."""
        self._tick += 1
        tick = self._tick
        versions = self._versions
        if self.whole_tree_only:
            versions[_WHOLE_TREE] = tick
            return
        for fr in frs:
            versions[fr] = tick

    def stamp(self, frs: tuple[FlavorResource, ...]) -> tuple[int, ...]:
        """The versions of `frs` now (what a cached answer is compared against)."""
        get = self._versions.get
        if self.whole_tree_only:
            return (get(_WHOLE_TREE, 0),)
        return tuple([get(fr, 0) for fr in frs])

    def saved(self, frs: Iterable[FlavorResource]) -> dict[FlavorResource, int]:
        """The versions of `frs` (with `_WHOLE_TREE`), to put back with `restore`."""
        get = self._versions.get
        return {fr: get(fr, 0) for fr in (*frs, _WHOLE_TREE)}

    def restore(self, saved: Mapping[FlavorResource, int]) -> None:
        """Undo bumps whose changes were all undone (a cycle's reservations, nothing committed)."""
        self._versions.update(saved)

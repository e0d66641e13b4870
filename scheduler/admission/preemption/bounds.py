"""Arithmetic bounds that settle "could the preemptor fit once every possible victim is gone?"
without simulating the removals on the quota tree.

`ClassicalPreemption._could_fit` answers it by removing every freeable usage from the tree,
asking the preemptor's queue what is available, and adding it all back: two walks up the
cohort tree per source and flavor-resource, for a question that is "no" for most nominations
on a busy cluster. Two facts about Kueue's quota arithmetic (`quota.py`) give the "no"
without touching the tree:

- Removing x of usage anywhere raises any queue's `available` by at most x. At the node the
  usage leaves, the part within its guaranteed quota raises its local term, the rest lowers
  its parent's usage by the same amount, which raises both terms of the min it borrows
  through by at most that; by induction up the path, and every other node sees only its
  parent's change. So after the removals: available ≤ available now + Σ freeable.
- The preemptor's queue's own usage after the removals is exactly its usage now minus what is
  freeable in it (no other removal changes it). That gives its borrowing exactly (the
  no-borrowing run needs usage + request ≤ nominal) and, under a borrowingLimit, the cap on
  what it can take from its parent.

When either bound is below the request, the simulation would say "does not fit" too; when
both allow it, the simulation decides. `replay --verify` runs the simulation beside every
"no" from here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scheduler.admission.quota import FlavorResource, QuotaNode, Usage


def cannot_fit(queue: QuotaNode, usage: Usage, freeable: Sequence[tuple[QuotaNode, Mapping[FlavorResource, int]]],
               allow_borrowing: bool) -> bool:
    """True when `usage` surely does not fit `queue` after removing every `freeable` usage
    (per source queue); False when only the simulation can tell."""
    for fr, value in usage.items():
        if value <= 0:
            continue
        own = queue.usage.get(fr, 0)
        total = 0
        for source, amounts in freeable:
            amount = amounts.get(fr, 0)
            total += amount
            if source is queue:
                own -= amount
        subtree = queue.subtree.get(fr, 0)
        if not allow_borrowing and own + value > subtree:
            return True
        if queue.parent is not None:
            limit = queue.borrowing_limit.get(fr)
            if limit is not None:
                guaranteed = queue.guaranteed.get(fr, 0)
                cap = max(0, guaranteed - own) + (subtree - guaranteed) - max(0, own - guaranteed) + limit
                if value > cap:
                    return True
        if value > queue.available(fr) + total:
            return True
    return False

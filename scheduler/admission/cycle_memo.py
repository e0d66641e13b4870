"""Step 5 of an admission cycle taken from an earlier cycle when it would come out the same.

While a preemptor waits for its victims to terminate (30 s by default) it stays its queue's
head (sticky under BestEffortFIFO) and is processed again in every cycle: its targets summed,
its fit with them gone checked, its quota reserved for the cycle, its victims "evicted" again
(a no-op), its message written. Cycles come in runs: a requeue of the cohort's inadmissible
workloads gives each parked shape of each ClusterQueue its turn, one cycle per shape, and
every one of those cycles processes the other queues' waiting preemptors again, with the same
nominations, on the same tree, to the same outcome.

What processing an entry reads and writes (`Admitter._process`, without TAS and without fair
sharing's tournament, for which the memo is off):

- An *inert* entry (NoFit, an inactive queue, or Preempt without targets in a queue that
  reclaims within the cohort unconditionally and is no preemptor under
  PrioritizePreemptorWorkloads, so it reserves nothing) writes only its own fields, from its
  own assignment. It neither reads nor changes what the others read.
- Every other entry reads its assignment and targets, the tree's usage (what is available,
  with the cycle's reservations and victims), the victims taken by the entries processed
  before it in the cycle, whether admission is blocked (waitForPodsReady), the state of its
  targets; it writes its own fields, its scan progress (cleared by a skip or by issued
  preemptions), its queue's preemptor, the cycle's reservations and victims (undone or
  dropped at the end of the cycle) and, for real, admissions and evictions (each a `commit`).

So when the cycle's non-inert entries are the same workloads with the very same nominations
(the same objects: cache hits), in the same order (the classical order is a sort by their own
fields), as those of an earlier cycle, while admission is blocked or not as then, and no
commit happened since that cycle began, which committed nothing itself, the tree is the one
that cycle read (every change of its usage outside a cycle's undone reservations is a
commit) and its targets were all evicted already (an eviction for real commits; a victim
released without a commit is no longer admitted, and only admitted targets are evicted).
Processing them gives the outcome that cycle recorded, and applying it (the fields, the
cleared scan progress, the queue's preemptor) leaves everything as processing would: the
reservations it would make are undone at the end of the cycle, the tree's version put back
with them, and the per-flavor-resource versions are compared only for equality. Cycles that
alternate (a head inert in one and not in the next) are recorded each under their entries.

`replay --verify` processes every cycle and checks, where the memo would have answered,
that it gives the recorded outcome ("admission cycle processed as an earlier one").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from scheduler.admission.flavor_assignment import Mode
from scheduler.admission.nominator import Entry
from scheduler.admission.objects import ClusterQueue
from scheduler.admission.policies import PreemptionPolicy
from scheduler.admission.quota import QuotaTree
from scheduler.eventlog.schema import PendingReason
from scheduler.verify import ClockedVerifier

MEMO_CHECK = "admission cycle processed as an earlier one"
_RECLAIM_ANY = PreemptionPolicy.ANY  # a module constant (see preemption.common)
_MOST_RECORDED = 256  # distinct cycles between two commits; more are dropped (costs time only)


class _Outcome:
    """What processing left on one entry, and what it changed beyond it."""

    __slots__ = ("reason", "message", "transient", "retry_now", "equivalent_fail", "clears_scan", "preempting")

    def __init__(self, entry: Entry, had_scan: bool) -> None:
        self.reason = entry.reason
        self.message = entry.message
        self.transient = entry.transient
        self.retry_now = entry.retry_now
        self.equivalent_fail = entry.equivalent_fail
        self.clears_scan = had_scan and entry.wl.scan is None  # a skip, or preemptions issued
        self.preempting = entry.reason is PendingReason.WAITING_FOR_PREEMPTED  # its queue's preemptor

    def apply(self, entry: Entry) -> None:
        entry.reason, entry.message, entry.transient = self.reason, self.message, self.transient
        entry.retry_now, entry.equivalent_fail = self.retry_now, self.equivalent_fail
        if self.clears_scan:
            entry.wl.scan = None
        if self.preempting:
            entry.pending_queue.preemptor = entry.wl

    def described(self) -> tuple[object, ...]:
        return (self.reason, self.message, self.transient, self.retry_now, self.equivalent_fail, self.clears_scan,
                self.preempting)


class _Recorded:
    __slots__ = ("key", "blocked", "commits", "outcomes")

    def __init__(self, key: list[object], blocked: bool, commits: int, outcomes: list[_Outcome]) -> None:
        self.key = key  # the objects themselves: kept alive, so that no other one takes their ids
        self.blocked = blocked
        self.commits = commits  # the tree's commit count through the recorded cycle
        self.outcomes = outcomes


class CycleMemo:
    """The outcomes of cycles that committed nothing, by their non-inert entries, kept until
    the next commit."""

    def __init__(self, tree: QuotaTree, specs: Mapping[str, ClusterQueue], preemptors_first: bool,
                 blocked: Callable[[], bool]) -> None:
        self.tree = tree
        self.preemptors_first = preemptors_first
        self.blocked = blocked
        self.reclaims_always = {name: spec.preemption.reclaim_within_cohort is _RECLAIM_ANY
                                for name, spec in specs.items()}
        self.check: ClockedVerifier | None = None  # `replay --verify`: every cycle processed, the memo compared
        self.reused = 0  # cycles whose processing was taken from a recorded one
        # Cycles that alternate (a head that is inert in one cycle and not in the next) each
        # find their own: recorded by the ids of their entries' objects.
        self._recorded: dict[tuple[int, ...], _Recorded] = {}
        self._commits = -1  # the tree's commit count the recorded cycles began (and ended) at

    def _tree_unchanged(self) -> bool:
        """No commit since the recorded cycles began: the tree's usage and holders are the same."""
        return self.tree.commits == self._commits

    def inert(self, entry: Entry) -> bool:
        """Processing `entry` reads and writes nothing but its own fields (the module says why)."""
        assignment = entry.assignment
        if assignment.mode is Mode.NO_FIT or entry.reason is PendingReason.SUSPENDED:
            return True
        return (assignment.mode is Mode.PREEMPT and not entry.targets and self.reclaims_always[entry.node.name]
                and not (self.preemptors_first and entry.is_preemptor))

    def process(self, ordered: list[Entry], process: Callable[[Entry], None]) -> None:
        """Step 5 over the cycle's entries in processing order (`process`: one entry)."""
        if not any(entry.targets for entry in ordered):
            # Nothing worth keeping: what is saved is an entry's preemption processed again.
            # A cycle processed without the memo leaves the records as they stand: it either
            # commits (they are dropped at the next lookup) or leaves the tree as it was.
            for entry in ordered:
                process(entry)
            return
        inert = [self.inert(entry) for entry in ordered]
        active = [entry for entry, alone in zip(ordered, inert, strict=True) if not alone]
        key: list[object] = []
        for entry in active:
            key += _key_of(entry)
        ids = tuple([id(part) for part in key])
        blocked = self.blocked()
        if not self._tree_unchanged():
            self._recorded.clear()
        found = self._recorded.get(ids)
        reusable = found is not None and _same_objects(key, found.key) and found.blocked == blocked
        if found is not None and reusable and self.check is None:
            self.reused += 1
            for entry, alone in zip(ordered, inert, strict=True):
                if alone:  # its own fields only, from its own assignment
                    process(entry)
            for entry, outcome in zip(active, found.outcomes, strict=True):
                outcome.apply(entry)
            return
        commits = self.tree.commits
        had_scan = [entry.wl.scan is not None for entry in active]
        for entry in ordered:
            process(entry)
        outcomes = [_Outcome(entry, had) for entry, had in zip(active, had_scan, strict=True)]
        if found is not None and reusable and self.check is not None:
            # and no commit since the recorded cycle, nor in this one
            self.check.same(MEMO_CHECK, [o.described() for o in found.outcomes] + [found.commits],
                            [o.described() for o in outcomes] + [self.tree.commits])
        if self.tree.commits != commits or any(entry.admitted for entry in active):
            return  # the next cycle finds the commit and drops what is recorded
        if len(self._recorded) >= _MOST_RECORDED:
            self._recorded.clear()
        self._commits = commits
        self._recorded[ids] = _Recorded(key, blocked, commits, outcomes)


def _key_of(entry: Entry) -> tuple[object, ...]:
    """What an entry's processing reads of its own: the nominations as objects (a cache hit,
    or a fit reused while its certificate holds, hands out the same ones)."""
    return entry.wl, entry.assignment, entry.targets, entry.is_preemptor


def _same_objects(these: list[object], those: list[object]) -> bool:
    return len(these) == len(those) and all(one is other for one, other in zip(these, those, strict=True))

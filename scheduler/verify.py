"""`replay --verify`: every fast path of the replay checked against the plain computation.

The replay answers most questions from indexes and bounded searches (free GPUs per model
and per topology domain, GPUs held per priority, nodes by usage, parked queue shapes,
skipped preemption retries, deferred reprieves). With `--verify` each such answer is also
computed the slow, obvious way, and the replay stops at the first difference with a
`VerificationError` that says what differed, when, and for which workload. The checks only
read, so a verified replay writes the same event log as an unverified one.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

# Every check `--verify` makes, by the name its failures and summary print (docs/performance.md
# names each with its fast path; tests/scheduler/test_verify_check_names.py keeps the two and
# the checks the scheduler's sources make the same).
CHECKS = frozenset({
    # placement: the node search
    "partial node search with inline fit checks",
    "heap root by pre-order rank",
    "heap root kept during the node walk",
    "node list walked in C under the heap's tie order",
    "native walk's int64 arrays hold the lists' counts",
    "batch hint from the kept heap",
    "node chosen through the usage index",
    "failing node search settled by the usage index",
    "failing node search settled by free GPUs per model",
    "failing group plan counted from free GPUs",
    "parked shape still fails",
    # placement: preemption
    "GPUs held below a priority from the index",
    "group preemption skipped as unchanged",
    "pod preemption skipped as unchanged",
    "group preemption ruled out by virtual free counts",
    "victims planned on the view without lower priorities",
    "victims with deferred reprieves",
    "usable GPUs of a victim summed once per search",
    # placement: topology domains
    "best topology domain from a bounded search",
    "closest topology domain from a bounded search",
    "free GPUs of a topology domain from running sums",
    # Kueue admission
    "nomination reused from the per-flavor-resource cache",
    "fitting nomination reused while its quota checks pass",
    "preemption oracle answer reused per flavor-resource",
    "preemption oracle's borrowing level on an overlay of the usage",
    "flavor assignment without the oracle on doomed flavors",
    "flavor screen per ClusterQueue and workload shape",
    "preemption ruled out by quota bounds",
    "quota fit once every candidate is gone, on an overlay of the usage",
    "victim search step ruled out by a running sum",
    "victim search fill-back step ruled out by a running sum",
    "victim search on an overlay of the usage",
    "victim search reading only the candidates a run can take",
    "quota fit from the cycle's victims summed per queue",
    "repeated eviction of a terminating victim skipped",
    "admission fair sharing head from the rebuilt heap",
    "admission cycle skipped as idle",
    "admission cycle processed as an earlier one",
})


class VerificationError(RuntimeError):
    """A fast path disagreed with the plain computation it stands for."""


class Verifier:
    """Compares fast answers with plain ones and counts the checks by kind."""

    def __init__(self) -> None:
        self.checks: Counter[str] = Counter()

    def same(self, now: float | None, what: str, fast: object, plain: object, workload: str | None = None) -> None:
        """Raise a VerificationError unless the fast answer equals the plain one."""
        self.checks[what] += 1
        if fast != plain:
            when = f"at t={now:g}s " if now is not None else ""
            about = f" for workload {workload}" if workload else ""
            raise VerificationError(f"{when}{what}{about}: the fast path gave {fast!r}, "
                                    f"the plain computation {plain!r}")

    def fail(self, now: float, what: str, detail: str) -> None:
        self.checks[what] += 1
        raise VerificationError(f"at t={now:g}s {what}: {detail}")

    def summary(self) -> str:
        """One line: how many checks of which kinds passed."""
        kinds = ", ".join(f"{count:,} {what}" for what, count in sorted(self.checks.items()))
        return f"{sum(self.checks.values()):,} checks passed ({kinds})" if self.checks else "no fast path was used"


class ClockedVerifier:
    """A `Verifier` for code that has no clock of its own: asks `clock` for the simulated
    time of each check."""

    def __init__(self, verifier: Verifier, clock: Callable[[], float]) -> None:
        self.verifier = verifier
        self.clock = clock

    def same(self, what: str, fast: object, plain: object, workload: str | None = None) -> None:
        self.verifier.same(self.clock(), what, fast, plain, workload)

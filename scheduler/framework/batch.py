"""OpportunisticBatching: the previous pod's sorted nodes handed to the next pod as a hint.

kube-scheduler (beta and on by default since v1.35; `pkg/scheduler/framework/runtime/batch.go`,
used by `findNodesThatFitPod` and `schedulePod` in `schedule_one.go`, `algorithm.go` on
master) keeps, after a pod was scheduled by a full search, the heap of the other feasible
nodes' scores (`sortedPrioritizedNodes` after its first `Pop`). The next scheduling cycle's
pod gets the heap's next `Pop` as a *hint* when (`batchStateCompatible`):

- a state is kept and not empty;
- that pod's cycle directly follows the last successful one (`cycleCount == last + 1`: any
  failed cycle in between, or a cycle of another profile, makes the state unusable);
- the pod has no nominated node;
- its signature (`SignPod`) is not nil and equals the state's;
- the state is at most 500 ms old (`maxBatchAge`; the replay reads simulated time).

Before the pop, the node chosen last is filtered for the new pod; when it still fits it is
rescored and put back among the candidates, the heap rebuilt from its internal order plus
that node (`refreshHintCandidates`, `rescoreHintedNode`). The hint is then filtered like a
nominated node (`evaluateNominatedNode`): when it passes it is taken without a scan (the
start index does not move); otherwise the usual search runs.

After a successful cycle `StoreScheduleResults` records the cycle and the chosen node; when
the hint was taken the state stays as it is (one node fewer), else the state becomes this
cycle's heap of the other nodes, or nothing when the pod has no signature or no other node
was feasible (one feasible node: no heap at all). A failed cycle stores nothing.

The scores kept are those of the search that filled the state: the hint can differ from what
a fresh search would pick (other pods finished meanwhile, the heap's order after pops). That
is upstream's rule, so it is the model; `replay --verify` checks the kept heap against the
same rule computed plainly, by replaying the state's history on the search's own list.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from scheduler.framework.node_heap import SortedScoredNodes
from scheduler.verify import Verifier

MAX_BATCH_AGE_S = 0.5  # batch.go maxBatchAge
HINT_CHECK = "batch hint from the kept heap"


@dataclass
class BatchState:
    """batch.go's batchState, and (for `--verify`) how it came to be."""

    signature: Hashable
    sorted_nodes: SortedScoredNodes
    created_s: float
    # The search that filled the state (score, node) in scan order, then each change since:
    # (node, fresh score) for a rescored node put back, (-1, 0.0) for a pop.
    seed: list[tuple[float, int]] = field(default_factory=list)
    history: list[tuple[int, float]] = field(default_factory=list)


class OpportunisticBatch:
    """One profile's batch: hints for consecutive pods of one signature."""

    def __init__(self, verifier: Verifier | None = None) -> None:
        self.state: BatchState | None = None
        self.cycle = 0  # the scheduling cycle under way (kube-scheduler's cycle count)
        self.last_cycle = -1  # the last cycle that stored results (a successful one)
        self.last_chosen = -1
        self.hints_taken = 0  # pods placed on their hint (batchedPods)
        self.verifier = verifier

    def begin_cycle(self) -> None:
        """A scheduling cycle begins (one pod popped from the queue)."""
        self.cycle += 1

    def usable(self, signature: Hashable | None, nominated: bool, now: float) -> bool:
        """batchStateCompatible: may the kept state hint this cycle's pod?"""
        state = self.state
        if state is None or len(state.sorted_nodes) == 0:
            return False
        if self.cycle != self.last_cycle + 1:
            return False  # a cycle failed in between (it stored nothing)
        if nominated or signature is None or signature != state.signature:
            return False
        return not now > state.created_s + MAX_BATCH_AGE_S

    def hint(self, signature: Hashable | None, nominated: bool, now: float,
             still_fits: Callable[[int], bool], rescore: Callable[[int], float]) -> int | None:
        """GetNodeHint: the next node of the kept heap for this cycle's pod, or None."""
        if not self.usable(signature, nominated, now):
            return None
        state = self.state
        assert state is not None
        if still_fits(self.last_chosen):  # refreshHintCandidates → rescoreHintedNode
            fresh = rescore(self.last_chosen)
            state.sorted_nodes = SortedScoredNodes(state.sorted_nodes.unordered() + [(fresh, self.last_chosen)])
            if self.verifier is not None:
                state.history.append((self.last_chosen, fresh))
        node = state.sorted_nodes.pop()
        if self.verifier is not None:
            state.history.append((-1, 0.0))
            self.verifier.same(now, HINT_CHECK, node, plain_hint(state.seed, state.history))
        return node

    def store(self, signature: Hashable | None, hinted: int | None, chosen: int,
              scored: list[tuple[float, int]] | None, others: SortedScoredNodes | None, now: float) -> None:
        """StoreScheduleResults after a successful cycle. `others`: the heap of this
        cycle's search after the chosen node was popped (None without a search, or with one
        feasible node); `scored`: that search's list, kept for `--verify`."""
        self.last_cycle, self.last_chosen = self.cycle, chosen
        if hinted is not None and hinted == chosen:
            self.hints_taken += 1
            return
        if signature is not None and others is not None and len(others) > 0:
            seed = list(scored) if self.verifier is not None and scored is not None else []
            self.state = BatchState(signature, others, now, seed)
        else:
            self.state = None


def plain_hint(seed: list[tuple[float, int]], history: list[tuple[int, float]]) -> int:
    """The hint the batch rule gives, computed from scratch: a heap over the search's list,
    its first pop (the node that search chose), then every change since in order."""
    heap = SortedScoredNodes(seed)
    heap.pop()
    node = -1
    for changed, score in history:
        if changed >= 0:
            heap = SortedScoredNodes(heap.unordered() + [(score, changed)])
        else:
            node = heap.pop()
    return node

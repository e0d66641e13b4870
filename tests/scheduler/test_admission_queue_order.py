"""The lazy pending queue pops heads in exactly the order one plain heap of everybody would.

`PendingQueue` keeps requeued workloads of one shape as a sorted list with only the first in
its heap (see its module docstring). Here a naive model (one set of heap members, one set of
inadmissible ones, the head = the smallest key) runs the same random operations beside it:
heads, membership and positions must agree after every step.
"""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.admission.policies import QueueingStrategy
from scheduler.admission.queues import PendingQueue


@dataclass(eq=False)
class Waiting:
    name: str
    priority: int
    shape: tuple
    seq: int

    @property
    def queue_key(self):
        return (-self.priority, 0.0, self.seq)


class NaiveQueue:
    def __init__(self) -> None:
        self.heap: dict[str, Waiting] = {}
        self.parked: dict[str, Waiting] = {}

    def head(self) -> Waiting | None:
        return min(self.heap.values(), key=lambda w: w.queue_key, default=None)


operations = st.lists(
    st.one_of(
        st.tuples(st.just("arrive"), st.integers(0, 2), st.integers(0, 2)),  # priority, shape
        st.tuples(st.just("fail"), st.booleans(), st.booleans()),  # alike fail?, transient?
        st.tuples(st.just("admit"), st.just(0), st.just(0)),
        st.tuples(st.just("requeue"), st.just(0), st.just(0)),
        st.tuples(st.just("leave"), st.integers(0, 50), st.just(0)),  # a member is deactivated
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(operations)
def test_heads_come_out_in_heap_order(ops):
    lazy, naive = PendingQueue("cq", QueueingStrategy.BEST_EFFORT_FIFO), NaiveQueue()
    members: list[Waiting] = []
    for step, (op, a, b) in enumerate(ops):
        if op == "arrive":
            wl = Waiting(f"w{step}", a, ("shape", b), step)
            members.append(wl)
            lazy.push(wl)
            naive.heap[wl.name] = wl
        elif op in ("fail", "admit"):
            expected = naive.head()
            got = lazy.pop_head()
            assert got is expected, f"step {step}: head {got and got.name}, a plain heap gives {expected and expected.name}"
            if got is None:
                continue
            del naive.heap[got.name]
            if op == "admit":
                lazy.remove(got)
                members.remove(got)
            elif b:  # transient: straight back
                lazy.requeue(got, transient=True, requeues_at_pop=lazy.requeues)
                naive.heap[got.name] = got
            else:
                lazy.requeue(got, transient=False, requeues_at_pop=lazy.requeues)
                naive.parked[got.name] = got
                if a:  # NoFit: every heap workload of its shape goes aside too
                    lazy.park_equivalents(got, "WaitingForQuota")
                    for other in [w for w in naive.heap.values() if w.shape == got.shape]:
                        naive.parked[other.name] = naive.heap.pop(other.name)
        elif op == "requeue":
            moved = lazy.requeue_inadmissible(0.0)
            assert moved == len(naive.parked)
            naive.heap.update(naive.parked)
            naive.parked.clear()
        elif op == "leave" and members:
            wl = members.pop(a % len(members))
            lazy.remove(wl)
            naive.heap.pop(wl.name, None)
            naive.parked.pop(wl.name, None)
        assert lazy.has_heads == bool(naive.heap)
        assert {w.name for w in lazy.inadmissible} == set(naive.parked)
        assert len(lazy) == len(members)
        ordered = sorted(members, key=lambda w: w.queue_key)
        for position, wl in enumerate(ordered, 1):
            assert lazy.position(wl) == (position, len(members))
    # Drain: the rest comes out in key order.
    while naive.heap:
        expected = naive.head()
        assert lazy.pop_head() is expected
        del naive.heap[expected.name]
    assert lazy.pop_head() is None

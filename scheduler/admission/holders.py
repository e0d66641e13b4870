"""Who holds quota, indexed for preemption: per ClusterQueue and flavor-resource, in
Kueue's candidate order (lower priority first, then most recently admitted, then id).

Preemption looks for victims among the workloads of a queue that use a contested
flavor-resource, in that order, and usually stops after a few: iterating a sorted index
lazily costs what is used, where classifying every holder of every queue on every
attempt cost what is held (thousands on a large cluster).

Each index is two parallel lists kept sorted: one integer per holder (`packed_order_key`,
ordered exactly as the `order_key` tuples) and the holders. Every admission and release
bisects them; an integer compares in one step where the tuples compared item by item,
reading three objects per step from wherever they were allocated.

A queue keeps one index per usage signature (the flavor-resources a holder uses, in its
usage's order), not one per flavor-resource: a workload asks for GPUs, CPU and memory of one
flavor, so it sits in one index instead of three, and an admission or a release inserts or
deletes once. The holders of any of a set of flavor-resources are those of the signatures
that meet the set, each in exactly one of them, merged by their unique keys.
"""

from __future__ import annotations

import heapq
import struct
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator

from scheduler.admission.quota import FlavorResource
from scheduler.admission.workloads import AdmissionWorkload

OrderKey = tuple[int, float, int]
Signature = tuple[FlavorResource, ...]  # the flavor-resources a holder uses
_Index = tuple[list[int], list[AdmissionWorkload]]  # packed order keys and holders, both in candidate order


def order_key(wl: AdmissionWorkload) -> OrderKey:
    """Kueue's CandidatesOrdering inside one class: priority asc, newest admission first, id."""
    return (wl.priority, -(wl.admitted_s or 0.0), wl.seq)


_BIT_63 = 1 << 63
_LOW_64 = (1 << 64) - 1
_DOUBLE = struct.Struct(">d")
_UINT64 = struct.Struct(">Q")


def packed_order_key(wl: AdmissionWorkload) -> int:
    """`order_key` as one integer that sorts as the tuple does: priority × 2¹²⁸ plus the
    admission time's place among doubles × 2⁶⁴ plus `seq` (0 ≤ seq < 2⁶⁴)."""
    return _packed(wl, newest_first_bits(wl.admitted_s or 0.0))


def newest_first_bits(admitted_s: float) -> int:
    """The place of -admitted_s among doubles, as 64 bits that sort as the doubles do: a
    double's bits, the sign bit flipped for positives and every bit for negatives. Adding
    0.0 first makes -0.0 the 0.0 it equals in the tuple."""
    bits: int = _UINT64.unpack(_DOUBLE.pack(-admitted_s + 0.0))[0]
    return (bits ^ _LOW_64) if bits & _BIT_63 else (bits | _BIT_63)


def _packed(wl: AdmissionWorkload, time_bits: int) -> int:
    seq = wl.seq
    if not 0 <= seq <= _LOW_64:
        raise ValueError(f"workload {wl.name}: seq {seq} outside 0..2**64-1")
    return (wl.priority << 128) + (time_bits << 64) + seq


class Holders:
    def __init__(self, queues: Iterable[str]) -> None:
        self.by_queue: dict[str, dict[str, AdmissionWorkload]] = {q: {} for q in queues}
        # queue -> usage signature -> (packed order keys, holders), both in candidate order
        self._sorted: dict[str, dict[Signature, _Index]] = {
            q: {} for q in self.by_queue}
        # Each holder's packed key and the index it sits in, as it was added: a release finds
        # its place without hashing the signature again.
        self._held: dict[str, tuple[int, _Index]] = {}
        # The bits of the last admission time packed: the admissions of one cycle share it.
        self._last_time = 0.0
        self._last_time_bits = newest_first_bits(0.0)
        self.evicting: dict[str, AdmissionWorkload] = {}  # evicted, quota not yet released
        # queue -> flavor-resource -> priority -> usage held: how much preemption could free
        self._totals: dict[str, dict[FlavorResource, dict[int, int]]] = {q: {} for q in self.by_queue}

    def of(self, queue: str) -> list[AdmissionWorkload]:
        return list(self.by_queue[queue].values())

    def add(self, queue: str, wl: AdmissionWorkload) -> None:
        self.by_queue[queue][wl.name] = wl
        admitted_s = wl.admitted_s or 0.0
        if admitted_s != self._last_time:
            self._last_time, self._last_time_bits = admitted_s, newest_first_bits(admitted_s)
        key = _packed(wl, self._last_time_bits)  # unique: `seq` is the workload's
        usage = wl.usage
        signature = tuple(usage)
        by_signature = self._sorted[queue]
        index = by_signature.get(signature)
        if index is None:
            index = by_signature[signature] = ([], [])
        self._held[wl.name] = (key, index)
        keys, holders = index
        at = bisect_right(keys, key)
        keys.insert(at, key)
        holders.insert(at, wl)
        totals, priority = self._totals[queue], wl.priority
        for fr, value in usage.items():
            by_priority = totals.get(fr)
            if by_priority is None:
                by_priority = totals[fr] = {}
            by_priority[priority] = by_priority.get(priority, 0) + value

    def remove(self, queue: str, wl: AdmissionWorkload) -> None:
        # Membership tests and `del` rather than `dict.pop`: the compiled build calls `pop`
        # as a generic method (looked up by name on every call), `in` and `del` directly.
        name, in_queue = wl.name, self.by_queue[queue]
        if name not in in_queue:
            return
        del in_queue[name]
        evicting, held = self.evicting, self._held
        if evicting and name in evicting:
            del evicting[name]
        key, (keys, holders) = held[name]
        del held[name]
        totals, priority = self._totals[queue], wl.priority
        for fr, value in wl.usage.items():
            totals[fr][priority] -= value
        at = bisect_left(keys, key)
        if at < len(keys) and holders[at] is wl:
            del keys[at]
            del holders[at]

    def held_below(self, queue: str, fr: FlavorResource, below_priority: int | None) -> int:
        """Usage of `fr` held in `queue` by workloads of priority below the bound (all: None)."""
        by_priority = self._totals[queue].get(fr)
        held = 0
        if by_priority is None:  # nobody in `queue` ever held `fr`
            return held
        for priority, value in by_priority.items():  # a loop: asked per source and flavor-resource
            if below_priority is None or priority < below_priority:
                held += value
        return held

    def mark_evicting(self, wl: AdmissionWorkload) -> None:
        self.evicting[wl.name] = wl

    def ordered(self, queue: str, frs: frozenset[FlavorResource], below_priority: int | None) -> Iterator[AdmissionWorkload]:
        """Holders of `queue` using any of `frs`, not being evicted, in candidate order;
        stops at `below_priority` (exclusive) when given."""
        indexes = [index for signature, index in self._sorted[queue].items() if not frs.isdisjoint(signature)]
        # The packed key of a holder of priority p is at least p × 2¹²⁸ and below (p + 1) × 2¹²⁸.
        stop = None if below_priority is None else below_priority << 128
        if len(indexes) == 1:
            keys, holders = indexes[0]
            for at in range(len(keys)):
                if stop is not None and keys[at] >= stop:
                    return
                wl = holders[at]
                if wl.name in self.evicting:
                    continue
                yield wl
            return
        # Each holder is in one signature's index and keys are unique: merging never ties.
        for key, wl in heapq.merge(*(zip(keys, holders, strict=True) for keys, holders in indexes)):
            if stop is not None and key >= stop:
                return
            if wl.name in self.evicting:
                continue
            yield wl

"""Keyed ties among the best nodes (`tie_break = "random"`, kube-scheduler's selectHost before v1.35).

Before v1.35 upstream drew uniformly among the best-scored nodes (reservoir sampling over the
scan; since, the heap's order decides, `node_heap.py`). This option draws the same way, but not from the seeded generator's sequence: every node
gets a key hashed from the seed, the scheduling attempt (workload, attempt, failures,
instant), the pod being placed and the node's index, and the best-scored feasible node
with the smallest key wins. A key is `(base ^ salt[node]) * KEY_MULT mod 2**64`: `base`
mixes the attempt and the pod, `salt` the seed and the node, both by splitmix64, and the
multiplication (a bijection) carries every bit into the high ones that decide the order,
so the least key falls on each of k nodes with chance 1/k (`test_select_host_ties.py`
counts it); it is cheap, as the usage-index walk keys every node of a tied level. Since a
key depends on nothing scanned before, a fast path (the usage index, a bounded
topology-domain search, deferred reprieves) and its plain twin pick the same node from the
same best set, whatever order they visit nodes in.

splitmix64: Steele, Lea and Flood, "Fast splittable pseudorandom number generators" (2014);
it runs on integers only (Python's `hash()` of a string is salted per process), workload
ids enter through blake2b.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from hashlib import blake2b

import numpy as np

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15  # splitmix64's increment
KEY_MULT = 0xD1342543DE82EF95  # an odd 64-bit multiplier (Steele and Vigna, 2021)
SALT = 0x5A17  # separates the node salts from the attempt hashes
# From this many nodes a level's keys are computed as one array (numpy's uint64 arithmetic
# wraps mod 2**64, as the mask does): the same keys, without a Python big integer per node.
ARRAY_LEVEL = 16


def mix(z: int) -> int:
    """splitmix64's finaliser: a bijection of 64-bit integers that scatters every bit."""
    z = (z + GOLDEN) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def combine(h: int, value: int) -> int:
    """Fold one more integer into a running hash."""
    return mix(h ^ mix(value & MASK))


def text_key(text: str) -> int:
    """A 64-bit integer for a string, the same in every process."""
    return int.from_bytes(blake2b(text.encode(), digest_size=8).digest(), "little")


def instant_key(now: float) -> int:
    """The bits of a simulated instant."""
    return int.from_bytes(struct.pack("<d", now), "little")


class TieKeys:
    """The per-attempt context of the keyed draw. The cycle sets it when an attempt begins
    (`begin_attempt`); every placement of that attempt (the live plan, preemption's plans
    without victims, their `replay --verify` twins) draws with the same keys."""

    def __init__(self, seed: int) -> None:
        self._seed = combine(0, seed)
        self.attempt = self._seed  # before any attempt (a what-if outside the cycle)
        self._names: dict[str, int] = {}
        self._salts: list[int] = []
        self._table: SaltTable | None = None
        # Pod bases of one attempt (an attempt plans the same pods several times: per domain,
        # without victims, again after preemption); dropped when the attempt changes.
        self._bases: dict[tuple[str, int], int] = {}
        self._bases_attempt = self.attempt

    def salts(self, nodes: int) -> list[int]:
        """Each node's salt, for nodes 0 … `nodes` − 1 at least (made once, kept)."""
        salts = self._salts
        if len(salts) < nodes:
            salts.extend(combine(self._seed ^ SALT, node) for node in range(len(salts), nodes))
        return salts

    def table(self, nodes: int) -> SaltTable:
        """The salts of nodes 0 … `nodes` − 1 at least, as a list and as an array."""
        table = self._table
        if table is None or len(table.salts) < nodes:
            table = self._table = SaltTable(self.salts(nodes))
        return table

    def key(self, base: int, node: int) -> int:
        """The key of `node` for the placement whose base is `base` (`pod_base`)."""
        return ((base ^ self.salts(node + 1)[node]) * KEY_MULT) & MASK

    def _name(self, workload: str) -> int:
        key = self._names.get(workload)
        if key is None:
            key = self._names[workload] = text_key(workload)
        return key

    def begin_attempt(self, workload: str, attempt: int, failures: int, now: float) -> None:
        h = combine(self._seed, self._name(workload))
        h = combine(h, attempt)
        h = combine(h, failures)
        self.attempt = combine(h, instant_key(now))

    def pod_base(self, pod: tuple[str, int] | None) -> int:
        """The base of the node keys for placing `pod` (workload, pod index) in this attempt;
        None: a pod of no particular identity (a what-if that only asks whether one fits)."""
        if pod is None:
            return self.attempt
        if self._bases_attempt != self.attempt:
            self._bases.clear()
            self._bases_attempt = self.attempt
        base = self._bases.get(pod)
        if base is None:
            base = self._bases[pod] = combine(combine(self.attempt, self._name(pod[0])), pod[1])
        return base


class SaltTable:
    """Node salts as a list (one node's key) and as an array (the keys of a whole level)."""

    def __init__(self, salts: list[int]) -> None:
        self.salts = list(salts)
        self.array = np.array(self.salts, dtype=np.uint64)

    def key(self, base: int, node: int) -> int:
        return ((base ^ self.salts[node]) * KEY_MULT) & MASK

    def keys(self, base: int, nodes: Sequence[int]) -> np.ndarray:
        """The keys of `nodes` for `base`, as an array of uint64 (each equal to `key`)."""
        return (self.array[np.asarray(nodes, dtype=np.intp)] ^ np.uint64(base)) * np.uint64(KEY_MULT)

    def least(self, base: int, nodes: Sequence[int]) -> tuple[int, int]:
        """(key, node) of least key among `nodes` (not empty). Keys of distinct nodes differ
        (distinct salts, a bijection), so the least is unique whichever way it is found."""
        if len(nodes) < ARRAY_LEVEL:
            node = min(nodes, key=lambda n: ((base ^ self.salts[n]) * KEY_MULT) & MASK)
            return self.key(base, node), node
        keys = self.keys(base, nodes)
        index = int(keys.argmin())
        return int(keys[index]), nodes[index]

    def in_key_order(self, base: int, nodes: Sequence[int]) -> list[int]:
        """`nodes` sorted by key."""
        if len(nodes) < ARRAY_LEVEL:
            return sorted(nodes, key=lambda n: ((base ^ self.salts[n]) * KEY_MULT) & MASK)
        return [nodes[i] for i in self.keys(base, nodes).argsort().tolist()]

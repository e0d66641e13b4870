"""Per GPU model, how many nodes have k whole GPUs free and how many shared devices have m
milli-GPUs free: enough to say, without a node walk, that no node of a request's models can
pass GpuFit (`framework/no_fit.settled_by_room`).

GpuFit passes a node for a request of `milli` milli-GPUs only if the node has
⌈milli ÷ 1000⌉ whole free GPUs (a request of one GPU or more), or a whole free GPU or a shared
device with `milli` free (a fraction); GPUs nominated to others only take from that. So when
no node of an accepted model has that many whole free GPUs and (for a fraction) no shared
device of the model has `milli` free, every node of those models fails GpuFit. Each count
moves by one per change of a node's whole free GPUs or of a shared device's free share:
`ClusterState` writes them where it writes its lists (`indexes_moved` for whole GPUs,
`share_taken` / `share_given` for shared devices: allocate, release, restore, rollback), so
keeping them costs a few dict updates per change whatever the cluster's size, and asking
costs the few distinct counts of the request's models.
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.model import Node
from scheduler.model.workload import MILLI


class GpuRoom:
    """The counts per GPU model (by the model's id, `model_of` per node): whole free GPUs →
    nodes (`whole`), free milli-GPUs of a shared device → devices (`shares`). A count that
    falls to 0 is removed, so a question reads only the values some node or device has."""

    def __init__(self, nodes: Sequence[Node]) -> None:
        self.model_ids: dict[str, int] = {}
        self.model_of: list[int] = [self.model_ids.setdefault(node.gpu_model, len(self.model_ids)) for node in nodes]
        self.whole: list[dict[int, int]] = [{} for _ in self.model_ids]
        self.shares: list[dict[int, int]] = [{} for _ in self.model_ids]
        for index, node in enumerate(nodes):
            counts = self.whole[self.model_of[index]]
            counts[node.gpus] = counts.get(node.gpus, 0) + 1
        self._accepted: dict[tuple[str, ...], tuple[int, ...]] = {}

    def whole_moved(self, node: int, before: int, after: int) -> None:
        """`node` went from `before` whole free GPUs to `after` (they differ)."""
        counts = self.whole[self.model_of[node]]
        left = counts[before] - 1
        if left:
            counts[before] = left
        else:
            del counts[before]
        counts[after] = counts.get(after, 0) + 1

    def share_moved(self, node: int, before: int | None, after: int | None) -> None:
        """A shared device of `node` went from `before` free milli-GPUs to `after` (None: it
        was not, or is no longer, shared)."""
        counts = self.shares[self.model_of[node]]
        if before is not None:
            left = counts[before] - 1
            if left:
                counts[before] = left
            else:
                del counts[before]
        if after is not None:
            counts[after] = counts.get(after, 0) + 1

    def _accepted_ids(self, models: tuple[str, ...]) -> tuple[int, ...]:
        accepted = self._accepted.get(models)
        if accepted is None:
            accepted = self._accepted[models] = tuple(
                model_id for model, model_id in self.model_ids.items() if not models or model in models)
        return accepted

    def none_fits(self, models: tuple[str, ...], milli: int) -> bool:
        """Whether no node of `models` (any model: ()) has the whole free GPUs or the shared
        device's free share GpuFit needs for `milli` milli-GPUs (`milli` > 0)."""
        whole = (milli + MILLI - 1) // MILLI
        for model_id in self._accepted_ids(models):
            for free in self.whole[model_id]:
                if free >= whole:
                    return False
            if milli < MILLI:
                for free in self.shares[model_id]:
                    if free >= milli:
                        return False
        return True

    def pods_by_gpus(self, models: tuple[str, ...], milli: int) -> tuple[int, int]:
        """(places, pods) for pods of `milli` milli-GPUs (a multiple of 1000, or a fraction below
        1000) on nodes of `models` (any model: ()): the pods their free GPUs hold together (a
        fraction also on each shared device, its free share over `milli`), and at least as
        many as the nodes that hold one (nodes with room; for a fraction the shared devices
        with room are counted one each, not by node)."""
        places = pods = 0
        if milli >= MILLI:
            whole = milli // MILLI
            for model_id in self._accepted_ids(models):
                for free, count in self.whole[model_id].items():
                    if free >= whole:
                        places += count
                        pods += count * (free // whole)
            return places, pods
        per_gpu = MILLI // milli
        for model_id in self._accepted_ids(models):
            for free, count in self.whole[model_id].items():
                if free:
                    places += count
                    pods += count * free * per_gpu
            for share, count in self.shares[model_id].items():
                if share >= milli:
                    places += count
                    pods += count * (share // milli)
        return places, pods

    def recount(self, whole_free: Sequence[int], shared_free: Sequence[dict[int, int]]
                ) -> tuple[list[dict[int, int]], list[dict[int, int]]]:
        """`whole` and `shares` recounted from the state's lists (`replay --verify`, the fuzz tests)."""
        whole: list[dict[int, int]] = [{} for _ in self.model_ids]
        shares: list[dict[int, int]] = [{} for _ in self.model_ids]
        for node, model_id in enumerate(self.model_of):
            counts = whole[model_id]
            counts[whole_free[node]] = counts.get(whole_free[node], 0) + 1
            device_counts = shares[model_id]
            for free in shared_free[node].values():
                device_counts[free] = device_counts.get(free, 0) + 1
        return whole, shares

    def differences(self, whole_free: Sequence[int], shared_free: Sequence[dict[int, int]]) -> list[str]:
        """The models whose counts differ from a recount (a writer that forgot them); empty
        when they agree."""
        whole, shares = self.recount(whole_free, shared_free)
        return [model for model, model_id in self.model_ids.items()
                if self.whole[model_id] != whole[model_id] or self.shares[model_id] != shares[model_id]]

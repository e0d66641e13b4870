"""The fewest victims: remove candidates one by one until the preemptor fits, then add back
what is not needed, newest removed first (Kueue's minimal preemption and fillBackWorkloads,
pkg/scheduler/preemption/preemption.go). Everything is simulated on the live quota tree and
undone by `restore`.
"""

from __future__ import annotations

from scheduler.admission.preemption.common import Target, add_workload, remove_workload
from scheduler.admission.quota import QuotaNode, QuotaTree, Usage


class VictimSearch:
    def __init__(self, tree: QuotaTree, queue: QuotaNode, usage: Usage, allow_borrowing: bool,
                 preemptor_usage_simulated: bool = False) -> None:
        self.tree = tree
        self.queue = queue
        self.usage = usage
        self.allow_borrowing = allow_borrowing
        self.simulated = preemptor_usage_simulated  # fair sharing keeps it added while choosing
        self.removed: list[Target] = []
        self.result: list[Target] = []

    def take(self, target: Target) -> bool:
        """Remove `target`; True (and `result` set) when the preemptor fits now."""
        remove_workload(self.tree, target.workload)
        self.removed.append(target)
        tree = self.tree
        if self.simulated:
            tree.remove(self.queue, self.usage)
        try:
            if not self._fits():
                return False
            for target_back in reversed(self.removed[:-1]):
                add_workload(tree, target_back.workload)
                if self._fits():
                    self.removed.remove(target_back)
                else:
                    remove_workload(tree, target_back.workload)
            self.result = list(self.removed)
            return True
        finally:
            if self.simulated:
                tree.add(self.queue, self.usage)

    def _fits(self) -> bool:
        """Kueue's workloadFits: within what is available, and within nominal quota when
        borrowing is not allowed."""
        queue = self.queue
        for fr, value in self.usage.items():
            if not self.allow_borrowing and queue.borrowing_with(fr, value):
                return False
            if value > max(0, queue.available(fr)):
                return False
        return True

    def restore(self) -> None:
        for target in self.removed:
            add_workload(self.tree, target.workload)
        self.removed = []

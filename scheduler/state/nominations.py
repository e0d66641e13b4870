"""GPUs kept for preemptors while their victims terminate (kube-scheduler's nominated pods).

When preemption succeeds, kube-scheduler sets the preemptor's `nominatedNodeName` and, from
then on, filters every pod of lower or equal priority as if the nominated pods were already
on their nodes (`RunFilterPluginsWithNominatedPods`, pkg/scheduler/framework/runtime); pods
of higher priority ignore them. Without it, the GPUs a preemption frees go to whichever
lower-priority pod the queue tries first, and the preemptor preempts again: a loop.

The replay keeps the nominated milli-GPUs per node and nominee. A nominee is a pod
(workload id, pod index) or a whole pod group (workload id, `GROUP`). A nomination ends when
the nominee places a pod, leaves (finishes, is evicted or requeued), or tries again after
its victims are gone and its preemption finds nothing (upstream clears the nominated node
then). Difference: pods of the SAME priority as the nominee are not held back here
(upstream holds them back too); the replay cannot tell the nominee from its peers in a
filter without the pod's identity in the request.
"""

from __future__ import annotations

from collections.abc import Iterable

Nominee = tuple[str, int]  # (workload id, pod index or WHOLE_GROUP)
WHOLE_GROUP = -1  # the pod index of a nominee that is a whole pod group (`workload_run.GROUP`)


class Nominations:
    def __init__(self) -> None:
        self._on_node: dict[int, dict[Nominee, tuple[int, int]]] = {}  # node → nominee → (priority, milli)
        self._nodes_of: dict[Nominee, tuple[int, ...]] = {}
        self._nominees_of_run: dict[str, set[Nominee]] = {}
        # Each nominated pod's NominatedNodeName (pod index → node), per nominee: the node
        # the pod tries first on its next attempt (evaluateNominatedNode).
        self._pod_nodes: dict[Nominee, dict[int, int]] = {}
        # Grows on every change: answers that depended on the nominations (a preemption that
        # found no victims) are stale once it moves.
        self.generation = 0

    def __bool__(self) -> bool:
        return bool(self._nodes_of)

    def held_for_higher(self, node: int, priority: int) -> int:
        """Milli-GPUs on `node` nominated to preemptors of a priority above `priority`."""
        nominated = self._on_node.get(node)
        if not nominated:
            return 0
        return sum(milli for held_priority, milli in nominated.values() if held_priority > priority)

    def node_of(self, workload_id: str, pod: int) -> int | None:
        """The nominated node of pod `pod` of `workload_id`, or None."""
        for nominee in ((workload_id, pod), (workload_id, WHOLE_GROUP)):
            pods = self._pod_nodes.get(nominee)
            if pods is not None and pod in pods:
                return pods[pod]
        return None

    def add(self, nominee: Nominee, priority: int, placements: Iterable[tuple[int, int]],
            pods: Iterable[tuple[int, int]] = ()) -> None:
        """Nominate `nominee`'s pods: (node, milli-GPUs) each, and (pod index, node) per pod
        (a pod nominee: its one placement); replaces its earlier nomination."""
        self.drop(nominee)
        placements = list(placements)
        pod_nodes = dict(pods)
        if not pod_nodes and nominee[1] != WHOLE_GROUP and len(placements) == 1:
            pod_nodes = {nominee[1]: placements[0][0]}
        per_node: dict[int, int] = {}
        for node, milli in placements:
            per_node[node] = per_node.get(node, 0) + milli
        if not per_node:
            return
        for node, milli in per_node.items():
            self._on_node.setdefault(node, {})[nominee] = (priority, milli)
        self._nodes_of[nominee] = tuple(per_node)
        if pod_nodes:
            self._pod_nodes[nominee] = pod_nodes
        self._nominees_of_run.setdefault(nominee[0], set()).add(nominee)
        self.generation += 1

    def drop(self, nominee: Nominee) -> tuple[int, ...]:
        """End `nominee`'s nomination; the nodes it held GPUs on (empty: it had none)."""
        nodes = self._nodes_of.pop(nominee, ())
        self._pod_nodes.pop(nominee, None)
        for node in nodes:
            on_node = self._on_node[node]
            del on_node[nominee]
            if not on_node:
                del self._on_node[node]
        if nodes:
            run = self._nominees_of_run[nominee[0]]
            run.discard(nominee)
            if not run:
                del self._nominees_of_run[nominee[0]]
            self.generation += 1
        return nodes

    def drop_run(self, workload_id: str, pod: int | None = None) -> list[int]:
        """End the nominations of a workload (with `pod`: of that pod and of its whole group);
        the nodes that had GPUs kept, once per nomination."""
        nodes: list[int] = []
        for nominee in sorted(self._nominees_of_run.get(workload_id, ())):
            if pod is None or nominee[1] in (pod, WHOLE_GROUP):
                nodes.extend(self.drop(nominee))
        return nodes

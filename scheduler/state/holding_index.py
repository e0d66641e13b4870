"""Which workloads hold GPUs, kept as indexes so that preemption never scans every workload.

Preemption looks for victims only among workloads that hold GPUs and have a lower priority
than the preemptor; and a preemption that could not help is not retried until something
that can change its answer happened. The `HoldingIndex` keeps both answers current as pods
are placed and released:

- the holding runs, in the order they got GPUs, and the same runs by priority;
- releases counted by (GPU model of the nodes, priority of the releaser): `version`.
"""

from __future__ import annotations

from collections.abc import Iterator

from scheduler.state.cluster_state import ClusterState
from scheduler.workload_run import WorkloadRun

_EVERYONE = 2**31  # above every 32-bit priority


class HoldingIndex:
    def __init__(self, state: ClusterState) -> None:
        self.state = state
        # Workloads holding GPUs (reserved or started), in the order they got them.
        self.runs: dict[str, WorkloadRun] = {}
        # The same runs by priority: preemption reads only the levels below the preemptor's.
        self.by_priority: dict[int, dict[str, WorkloadRun]] = {}
        self._releases: dict[tuple[str, int], int] = {}

    def holds(self, run: WorkloadRun) -> None:
        """`run` got a pod placed (idempotent)."""
        if self.runs.setdefault(run.spec.workload_id, run) is run:
            self.by_priority.setdefault(run.spec.priority, {})[run.spec.workload_id] = run

    def stopped(self, run: WorkloadRun) -> None:
        """`run` holds nothing any more."""
        if self.runs.pop(run.spec.workload_id, None) is not None:
            self.by_priority[run.spec.priority].pop(run.spec.workload_id, None)

    def below(self, priority: int) -> Iterator[tuple[int, dict[str, WorkloadRun]]]:
        """(priority level, holding runs of that level) for every level below `priority`."""
        return ((level, runs) for level, runs in self.by_priority.items() if level < priority)

    def any_below(self, priority: int) -> bool:
        return any(o.spec.priority < priority for o in self.runs.values())

    def count_release(self, run: WorkloadRun, pods: list[int] | None = None) -> None:
        """`run` is about to give back every pod it holds, or only `pods` (call before
        releasing them).

        Pods that were terminating after a preemption count for every preemptor: while
        they terminated they were neither free nor anyone's victims, so their release can
        help a preemption of any priority."""
        if pods is None:
            pods = run.holding
        terminating = run.terminating or (bool(run.terminating_pods) and any(pod in run.terminating_pods for pod in pods))
        priority = _EVERYONE if terminating else run.spec.priority
        nodes, holdings = self.state.nodes, self.state.holdings
        wid = run.spec.workload_id
        for model in {nodes[holdings[(wid, pod)].node].gpu_model for pod in pods}:
            self._releases[(model, priority)] = self._releases.get((model, priority), 0) + 1

    def version(self, priority: int, models: tuple[str, ...], selector: object = None) -> tuple[object, ...]:
        """Changes when a workload of `priority` or higher gives back resources on nodes of
        `models` (any model: `()`).

        Preemption for a preemptor of priority p first removes every lower-priority pod
        and checks that the preemptor fits. What that leaves — free GPUs plus GPUs held
        below p, node by node — changes when workloads below p start or stop (GPUs only
        move between free and held-below-p) or when workloads at or above p start (it
        shrinks). It can only grow when one at or above p releases resources, and only on
        nodes the preemptor may use: until then a failed preemption fails again, and is not
        retried. The models are part of the answer: a workload admitted again under
        another Kueue flavor asks a new question, and so is the pod's node selector (a
        flavor's nodeLabels and tolerations, a TAS domain)."""
        count = sum(n for (model, level), n in self._releases.items()
                    if level >= priority and (not models or model in models))
        return (models, selector, count)

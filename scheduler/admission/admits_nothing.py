"""Warnings, for the console, about a Kueue configuration under which workloads wait forever.

A replay with such a configuration runs to its end with every workload of a queue pending and
nothing on the console says why; these checks read the configuration (and the queue names the
trace uses) before the replay and say it in one line each:

- the file defines no ClusterQueue (an empty file, or only flavors): nothing is admitted;
- a cohort tree with a cycle (``a`` parent ``b``, ``b`` parent ``a``): Kueue makes every
  ClusterQueue in that tree inactive;
- a ClusterQueue stopped (``stopPolicy`` Hold or HoldAndDrain), or with no quota at all and no
  cohort to borrow from;
- trace queues that name no LocalQueue of the file (pending Misconfigured), or a LocalQueue
  whose ClusterQueue admits nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from scheduler.admission.objects import ClusterQueue, QueueConfig
from scheduler.admission.policies import StopPolicy


def admission_warnings(config: QueueConfig, queues: Iterable[str | None]) -> list[str]:
    """One line per reason why workloads of ``queues`` (each workload's queue name, None for
    a workload that names none) would never be admitted under ``config``."""
    named = Counter(queue for queue in queues if queue)
    waiting = sum(named.values())
    if not config.cluster_queues:
        return [
            f"the queues file defines no ClusterQueue: it admits nothing; the {waiting:,} "
            "workload(s) that name a queue will stay pending"
        ]
    warnings: list[str] = []
    dead: dict[str, str] = {}  # ClusterQueue -> why it admits nothing
    reported_cycles: set[tuple[str, ...]] = set()
    for name, cluster_queue in config.cluster_queues.items():
        cycle = _cohort_cycle(config, cluster_queue.cohort)
        if cycle is not None:
            dead[name] = f"its cohort tree has a cycle ({' -> '.join(cycle)})"
            key = tuple(sorted(set(cycle)))
            if key not in reported_cycles:
                reported_cycles.add(key)
                warnings.append(
                    f"Cohort cycle {' -> '.join(cycle)}: Kueue makes every ClusterQueue under it "
                    "inactive, so they admit nothing"
                )
        elif cluster_queue.stop_policy != StopPolicy.NONE:
            dead[name] = f"stopPolicy {cluster_queue.stop_policy}"
        elif cluster_queue.cohort is None and not _has_quota(cluster_queue):
            dead[name] = "no nominal quota and no cohort to borrow from"
    for name, why in dead.items():
        if not why.startswith("its cohort tree"):
            warnings.append(f"ClusterQueue {name} admits nothing: {why}")
    if len(dead) == len(config.cluster_queues):
        warnings.append(
            f"no ClusterQueue of the queues file can admit anything: the {waiting:,} workload(s) "
            "that name a queue will stay pending"
        )
        return warnings
    unknown: Counter[str] = Counter()
    stuck: Counter[str] = Counter()
    for queue_name, count in named.items():
        local = config.local_queue(queue_name)
        if local is None:
            unknown[queue_name] += count
        elif local.cluster_queue in dead:
            stuck[local.cluster_queue] += count
        if local is not None and "/" not in queue_name:
            # Only a trace row's bare name is ambiguous: namespace/name (what the importers
            # write) says which LocalQueue it means.
            namespaces = sorted(lq.namespace for lq in config.local_queues.values() if lq.name == queue_name)
            if len(namespaces) > 1:
                warnings.append(
                    f"{count:,} workload(s) name queue {queue_name!r}, a LocalQueue name used in namespaces "
                    f"{', '.join(namespaces)}: read as {local.namespace}/{queue_name} (write namespace/name "
                    "to choose)")
    if unknown:
        shown = ", ".join(f"{name!r} ({count:,})" for name, count in unknown.most_common(3))
        more = f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
        warnings.append(
            f"{sum(unknown.values()):,} workload(s) name a queue that is no LocalQueue of the "
            f"queues file: {shown}{more}; they will stay pending (Misconfigured)"
        )
    for stuck_queue, count in stuck.most_common():
        warnings.append(
            f"{count:,} workload(s) queue in ClusterQueue {stuck_queue}, which admits nothing "
            f"({dead[stuck_queue]}): they will stay pending"
        )
    return warnings


def _cohort_cycle(config: QueueConfig, cohort: str | None) -> list[str] | None:
    """The cohort names from ``cohort`` around a parent cycle it leads into, else None."""
    path: list[str] = []
    seen: dict[str, int] = {}
    while cohort is not None:
        if cohort in seen:
            return [*path[seen[cohort]:], cohort]
        seen[cohort] = len(path)
        path.append(cohort)
        found = config.cohorts.get(cohort)
        cohort = found.parent if found is not None else None
    return None


def _has_quota(queue: ClusterQueue) -> bool:
    return any(
        quota.nominal_milli > 0
        for group in queue.resource_groups
        for flavor in group.flavors
        for quota in flavor.resources
    )

"""Admission fair sharing: a ClusterQueue's workloads ordered by their LocalQueue's decayed usage.

Source: kueue pkg/util/admissionfairsharing/admission_fair_sharing.go (`CalculateEntryPenalty`,
`CalculateUsage`, `CalculateDecayedConsumed`, `calculateAlphaRate`), pkg/cache/queue/afs
(`AfsUsageLedger`), pkg/controller/core/localqueue_controller.go (`Reconcile`,
`reconcileConsumedUsage`: the sampling), pkg/controller/core/workload_controller.go
(`updateAfsConsumedUsage`: the settlement at admission), pkg/scheduler/scheduler.go
(`updateEntryPenalty`), pkg/cache/queue/cluster_queue.go (`queueOrderingFunc`), pkg/util/resource
(`MulByFloat`). On when the Configuration has `admissionFairSharing` (and the AdmissionFairSharing
gate, beta and on since 0.15), for the ClusterQueues whose admissionScope.admissionMode is
UsageBasedAdmissionFairSharing.

- Every LocalQueue of such a ClusterQueue keeps its consumed resources, decayed:
  consumed ← consumed·(1−α) + admitted·α with α = 1 − 0.5^(elapsed / usageHalfLifeTime)
  (usageHalfLifeTime 0: α = 0, and a sample resets consumed to nothing), where `admitted` is
  what the LocalQueue's admitted workloads use now (their quota usage, summed over flavors).
- Sampling: the LocalQueue controller samples every usageSamplingInterval after the last
  update (a sample or a settlement), from the LocalQueue's creation (the replay's start), on
  the simulated clock. The replay applies the samples lazily, in order, when a LocalQueue's
  usage is read or its admitted usage is about to change: what it reads at a sample time is
  what the admitted workloads used then, so this is the same arithmetic as a timer per queue.
- Entry penalty: admitting a workload charges its LocalQueue requests·α(usageSamplingInterval),
  pushed when the quota is reserved and settled into consumed when the workload is Admitted
  (with a decay over the time since the last update, admitted usage including it). Both
  happen at one instant in the replay, so it settles at once and nothing stays pending.
- Usage of a LocalQueue: Σ over resources (in name order) weight·consumed, weight from
  resourceWeights (default 1), divided by the LocalQueue's fairSharing.weight (≤ 0: infinite).
  Quantities are in base units (GPUs, CPU cores, memory bytes), and every scaling rounds down
  to nine decimals (Kueue's `MulByFloat` on decimal quantities): Decimal here, not floats.
- Order inside the ClusterQueue (`queues.PendingQueue`): the lower LocalQueue usage first,
  then Kueue's usual order (sticky preemptor, priority, queue-order timestamp).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from decimal import ROUND_DOWN, Context, Decimal

from scheduler.admission.objects import AdmissionFairSharing, LocalQueue, QueueConfig
from scheduler.admission.quota import FlavorResource
from scheduler.admission.workloads import AdmissionWorkload

_NANO = Decimal("1e-9")  # Kueue's mulByFloatScale: 9 decimal places
_PRECISION = 80  # digits: every product of a quantity and a factor is exact before rounding
Quantities = dict[str, Decimal]  # resource name -> quantity in its base unit


def alpha_rate(elapsed_s: float, half_life_s: float) -> float:
    """calculateAlphaRate: the weight of the new sample after `elapsed_s`."""
    if half_life_s == 0:
        return 0.0
    return 1.0 - math.pow(0.5, elapsed_s / half_life_s)


def base_units(milli: Mapping[str, int]) -> Quantities:
    """Milli-units (the replay's quota arithmetic) as exact base-unit quantities."""
    return {name: Decimal(value).scaleb(-3) for name, value in milli.items()}


def mul_by_float(quantities: Quantities, factor: float, context: Context) -> Quantities:
    """MulByFloat: each quantity times the factor's shortest decimal, rounded down to 1e-9."""
    exact = Decimal(repr(factor))
    return {name: context.multiply(value, exact).quantize(_NANO, rounding=ROUND_DOWN, context=context)
            for name, value in quantities.items()}


def keep_sum(first: Quantities, second: Quantities) -> Quantities:
    """MergeResourceListKeepSum."""
    merged = dict(first)
    for name, value in second.items():
        merged[name] = merged[name] + value if name in merged else value
    return merged


class LocalQueueUsage:
    """One LocalQueue's ledger entry (UsageLedgerEntry) and what its workloads hold now."""

    __slots__ = ("cluster_queue", "weight", "consumed", "admitted", "last_update_s")

    def __init__(self, local_queue: LocalQueue, start_s: float) -> None:
        self.cluster_queue = local_queue.cluster_queue
        self.weight = local_queue.fair_sharing_weight
        self.consumed: Quantities = {}
        self.admitted: dict[str, int] = {}  # milli-units per resource, summed over flavors
        self.last_update_s = start_s


class AdmissionFairSharingLedger:
    """The usage of every LocalQueue under admission fair sharing, on the simulated clock."""

    def __init__(self, settings: AdmissionFairSharing, local_queues: Iterable[LocalQueue],
                 clock: Callable[[], float]) -> None:
        self.settings = settings
        self.clock = clock
        self.weights = dict(settings.resource_weights)
        self.alpha = alpha_rate(settings.usage_sampling_interval_s, settings.usage_half_life_s)
        self.context = Context(prec=_PRECISION)
        start = clock()
        self.entries = {lq.key: LocalQueueUsage(lq, start) for lq in local_queues}
        self.versions: dict[str, int] = {}  # per ClusterQueue: bumped when a usage of it moves

    def ordering(self, cluster_queue: str) -> QueueUsage | None:
        """What the ClusterQueue's heap orders by first; None: Kueue's usual order."""
        usage = QueueUsage(self, cluster_queue)
        return usage if usage.local_queues else None

    # -- reading -----------------------------------------------------------------------------

    def version(self, cluster_queue: str, local_queues: Iterable[str]) -> int:
        """Samples due by now applied to these LocalQueues; the ClusterQueue's usage version."""
        for key in local_queues:
            self._sample(key)
        return self.versions.get(cluster_queue, 0)

    def usage(self, local_queue: str | None) -> float:
        """CalculateUsage of the LocalQueue now (samples due applied first)."""
        entry = self.entries.get(local_queue or "")
        if entry is None:
            return 0.0
        self._sample(local_queue or "")
        total = 0.0
        for name in sorted(entry.consumed):
            total += self.weights.get(name, 1.0) * float(entry.consumed[name])
        return total / entry.weight if entry.weight > 0 else math.inf

    # -- writing -----------------------------------------------------------------------------

    def admitted(self, wl: AdmissionWorkload, usage: Mapping[FlavorResource, int]) -> None:
        """Quota reserved and Admitted at one instant: push the entry penalty and settle it
        (updateEntryPenalty, then updateAfsConsumedUsage)."""
        entry = self.entries.get(wl.local_queue or "")
        if entry is None:
            return
        self._sample(wl.local_queue or "")
        _add(entry.admitted, usage, 1)
        now = self.clock()
        penalty = mul_by_float(base_units(wl.requests), self.alpha, self.context)
        decayed = self._decayed(entry, max(0.0, now - entry.last_update_s))
        entry.consumed = keep_sum(decayed, penalty)
        entry.last_update_s = now
        self._moved(entry)

    def released(self, wl: AdmissionWorkload) -> None:
        """The workload gave its quota back: the samples due until now still saw it."""
        entry = self.entries.get(wl.local_queue or "")
        if entry is None:
            return
        self._sample(wl.local_queue or "")
        _add(entry.admitted, wl.usage, -1)

    def _sample(self, local_queue: str) -> None:
        """Reconcile of the LocalQueue at every usageSamplingInterval after its last update."""
        entry = self.entries[local_queue]
        interval, now = self.settings.usage_sampling_interval_s, self.clock()
        moved = False
        while entry.last_update_s + interval <= now:
            if not any(entry.admitted.values()) and not any(entry.consumed.values()):
                # nothing to decay and nothing to add: the samples until now change nothing
                entry.last_update_s += interval * math.floor((now - entry.last_update_s) / interval)
                entry.consumed = {name: Decimal(0) for name in entry.consumed}
                break
            entry.consumed = self._decayed(entry, interval) if self.settings.usage_half_life_s > 0 else {}
            entry.last_update_s += interval
            moved = True
        if moved:
            self._moved(entry)

    def _decayed(self, entry: LocalQueueUsage, elapsed_s: float) -> Quantities:
        rate = alpha_rate(elapsed_s, self.settings.usage_half_life_s)
        return keep_sum(mul_by_float(entry.consumed, 1 - rate, self.context),
                        mul_by_float(base_units(entry.admitted), rate, self.context))

    def _moved(self, entry: LocalQueueUsage) -> None:
        self.versions[entry.cluster_queue] = self.versions.get(entry.cluster_queue, 0) + 1


class QueueUsage:
    """What one ClusterQueue's heap reads (`queues.PendingQueue`): its LocalQueues' usage."""

    def __init__(self, ledger: AdmissionFairSharingLedger, cluster_queue: str) -> None:
        self.ledger = ledger
        self.cluster_queue = cluster_queue
        self.local_queues = tuple(key for key, entry in ledger.entries.items() if entry.cluster_queue == cluster_queue)

    def version(self) -> int:
        return self.ledger.version(self.cluster_queue, self.local_queues)

    def of(self, wl: AdmissionWorkload) -> float:
        return self.ledger.usage(wl.local_queue)


def admission_fair_sharing(config: QueueConfig, clock: Callable[[], float]) -> AdmissionFairSharingLedger:
    """The ledger of the LocalQueues of the ClusterQueues in UsageBasedAdmissionFairSharing
    mode; of none when the Configuration does not turn admission fair sharing on."""
    settings = config.configuration.admission_fair_sharing
    if settings is None:
        return AdmissionFairSharingLedger(AdmissionFairSharing(), (), clock)
    modes = {name for name, cq in config.cluster_queues.items() if cq.usage_based_admission_fair_sharing}
    return AdmissionFairSharingLedger(settings, [lq for lq in config.local_queues.values() if lq.cluster_queue in modes],
                                      clock)


def _add(admitted: dict[str, int], usage: Mapping[FlavorResource, int], sign: int) -> None:
    for (_, resource), value in usage.items():
        admitted[resource] = admitted.get(resource, 0) + sign * value

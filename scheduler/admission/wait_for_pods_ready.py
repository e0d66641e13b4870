"""waitForPodsReady: an admitted workload whose pods are not all running in time is evicted.

Source: kueue pkg/controller/core/workload_controller.go (reconcileNotReadyTimeout,
triggerDeactivationOrBackoffRequeue), pkg/workload/workload.go (semantics reference §4.9).

- The timer starts at admission (the Admitted condition) and stops when every pod of the
  workload runs (PodsReady). Pods lost to kube-level failures before that (Permit
  rejection, rendezvous time-out, kube-scheduler preemption) do not restart it: the
  workload stays admitted.
- Once ready, a workload that loses its pods waits for recovery: the recoveryTimeout
  timer (default: the timeout) starts when the Job's ready count drops (the PodsReady
  condition turns False, reason WaitForRecovery; jobframework/reconciler.go
  `podsReadyCondition`), and stops when they all run again (admittedNotReadyWorkload). A
  preempted pod stops counting as ready when it is marked for deletion (the Job controller
  counts only active, non-terminating pods), so the timer starts then, not when its
  termination grace period ends.
- On expiry the workload is evicted (PodsReadyTimeout), its quota is released, and it is
  requeued after min(backoffBaseSeconds · 2^(n−1), backoffMaxSeconds) for its n-th requeue,
  with the eviction time as its queue-order timestamp (requeuingStrategy.timestamp Eviction;
  Creation keeps its place). Past backoffLimitCount requeues it is deactivated instead.
- blockAdmission: while any admitted workload is not PodsReady nothing else is admitted
  (reason WaitingForPodsReady).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from scheduler.admission.objects import WaitForPodsReady
from scheduler.admission.policies import RequeueTimestamp
from scheduler.admission.workloads import AdmissionWorkload
from scheduler.sim import Environment, Phase

PODS_READY_TIMEOUT = "PodsReadyTimeout"
BLOCKED_MESSAGE = "waiting for all admitted workloads to be in PodsReady condition"


class AfterTimeout(Enum):
    BACKOFF = "backoff"
    DEACTIVATE = "deactivate"


class PodsReadyTracker:
    def __init__(self, env: Environment, settings: WaitForPodsReady | None,
                 on_timeout: Callable[[AdmissionWorkload], None], on_all_ready: Callable[[], None]) -> None:
        self.env = env
        self.settings = settings
        self.on_timeout = on_timeout
        self.on_all_ready = on_all_ready
        self.not_ready = 0  # admitted workloads whose pods are not all running yet

    @property
    def enabled(self) -> bool:
        return self.settings is not None

    @property
    def blocking(self) -> bool:
        """blockAdmission holds every admission while an admitted workload is not ready."""
        return self.settings is not None and self.settings.block_admission and self.not_ready > 0

    def admitted(self, wl: AdmissionWorkload) -> None:
        wl.pods_ready = wl.recovering = False
        if self.settings is None:
            return
        self.not_ready += 1
        wl.timer = self.env.at(self.env.now + self.settings.timeout_s, Phase.TIMEOUT, lambda: self._expire(wl))

    def ready(self, wl: AdmissionWorkload) -> None:
        if wl.pods_ready:
            return
        wl.pods_ready, wl.recovering = True, False
        self._stop(wl)

    def lost(self, wl: AdmissionWorkload) -> None:
        """`wl`, still admitted, lost its pods to a kube-level failure (or they were marked
        for deletion). Before PodsReady the admission timer just keeps running; after it,
        the recovery timer starts now; a second loss while recovering changes nothing."""
        if self.settings is None or not wl.pods_ready:
            return
        wl.pods_ready, wl.recovering = False, True
        self.not_ready += 1
        wl.timer = self.env.at(self.env.now + self.settings.recovery_s, Phase.TIMEOUT, lambda: self._expire(wl))

    def released(self, wl: AdmissionWorkload) -> None:
        """The workload gave its quota back (finished or evicted) before or after PodsReady."""
        if not wl.pods_ready:
            wl.pods_ready = True  # no longer counts as an admitted workload that is not ready
            self._stop(wl)

    def _stop(self, wl: AdmissionWorkload) -> None:
        if wl.timer is not None:
            wl.timer.cancel()
            wl.timer = None
        if self.settings is None:
            return
        self.not_ready -= 1
        if self.not_ready == 0 and self.settings.block_admission:
            self.on_all_ready()

    def _expire(self, wl: AdmissionWorkload) -> None:
        wl.timer = None
        if not wl.pods_ready:
            self.on_timeout(wl)

    def after_timeout(self, wl: AdmissionWorkload) -> AfterTimeout:
        """Count the requeue and set when it may be admitted again (or deactivate it)."""
        assert self.settings is not None
        settings, now = self.settings, self.env.now
        limit = settings.backoff_limit_count
        if limit is not None and wl.requeue_count + 1 > limit:
            return AfterTimeout.DEACTIVATE
        wl.requeue_count += 1
        wl.requeue_at_s = now + settings.backoff_s(wl.requeue_count)
        if settings.requeue_timestamp is RequeueTimestamp.EVICTION:
            wl.queue_timestamp_s = now
        return AfterTimeout.BACKOFF

    def timeout_message(self, wl: AdmissionWorkload) -> str:
        assert self.settings is not None
        if wl.recovering:
            return (f"Exceeded the PodsReady timeout {wl.name}: pods not ready again {self.settings.recovery_s:g}s "
                    "after they stopped running (recoveryTimeout)")
        return f"Exceeded the PodsReady timeout {wl.name}: pods not ready {self.settings.timeout_s:g}s after admission"

    def backoff_message(self, wl: AdmissionWorkload) -> str:
        wait = wl.requeue_at_s - self.env.now
        return (f"Evicted by the PodsReady timeout ({wl.requeue_count} time(s)); requeued after a backoff "
                f"of {wait:g}s")

    def deactivated_message(self, wl: AdmissionWorkload) -> str:
        assert self.settings is not None
        return ("The workload is deactivated due to exceeding the maximum number of re-queuing retries "
                f"(backoffLimitCount {self.settings.backoff_limit_count})")

"""A workload is one pod group: `pods` identical pods, of which `min_count` must run together."""

from __future__ import annotations

from dataclasses import dataclass

MILLI = 1000
"""GPU requests are kept in milli-GPUs so that fractional sharing adds up exactly."""


@dataclass(frozen=True, slots=True)
class Workload:
    workload_id: str
    submit_time_s: float
    duration_s: float
    pods: int
    min_count: int
    gpus_per_pod: float
    gpu_models: tuple[str, ...] = ()  # empty: any model; several: alternatives ("A|B")
    cpu_milli_per_pod: int = 0
    memory_mib_per_pod: int = 0
    tenant: str = "default"
    queue: str | None = None
    priority: int = 0
    checkpoint_interval_s: float | None = None
    topology_required: str | None = None
    topology_preferred: str | None = None
    parent_group: str | None = None  # CompositePodGroup this group belongs to
    parent_min_groups: int | None = None  # the composite's quorum of child groups (None: all)
    parent_topology_required: str | None = None  # the composite's topology level
    # The PodGroup's scheduleTimeoutSeconds: how long its pods wait at Permit (None: the profile's wait)
    schedule_timeout_s: float | None = None
    kind: str = "batch"
    # Mean fraction of time its GPUs' engines were active while it ran (DCGM
    # GR_ENGINE_ACTIVE); None = not measured. Costing only: the replay never reads it.
    gpu_utilization: float | None = None
    # Pod labels and annotations (key, value), sorted by key: the allocation keys showback can
    # group by and the FOCUS Tags. Costing only: the replay never reads them.
    labels: tuple[tuple[str, str], ...] = ()
    source_row: int = 0  # spreadsheet line of the input row (header = 1), for messages

    @property
    def gpu_milli_per_pod(self) -> int:
        return round(self.gpus_per_pod * MILLI)

    @property
    def shares_device(self) -> bool:
        """A request below one GPU shares a device with other pods (GPU sharing)."""
        return self.gpu_milli_per_pod < MILLI

    @property
    def total_gpus(self) -> float:
        return self.pods * self.gpus_per_pod

    @property
    def gpu_model_label(self) -> str | None:
        return "|".join(self.gpu_models) if self.gpu_models else None

    def accepts_model(self, model: str) -> bool:
        return not self.gpu_models or model in self.gpu_models

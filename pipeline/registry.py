"""The one registry of usage classes and idle causes.

The models write these names, the audits check them (the `idle_reasons()` and
`usage_classes()` macros are generated from here), the FOCUS column registry allows them, the
dashboards order and colour them, and docs/tables.md lists them from here. A new cause is added
here first; docs/cost-model.md §3.1 states its rule (a test keeps the two in step).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UsageClass:
    name: str
    meaning: str


@dataclass(frozen=True)
class IdleCause:
    name: str
    meaning: str
    owner: str  # who could act on it


# Every GPU-second of every node is in exactly one class (docs/cost-model.md §3).
USAGE_CLASSES: tuple[UsageClass, ...] = (
    UsageClass("productive", "held by a running pod whose gang has started, and the work is kept"),
    UsageClass("gang_wait", "held without progress: reserved at the gang barrier, or started while "
                            "fewer than min_count pods of the group run"),
    UsageClass("lost_to_preemption", "held by a pod whose work since its group's last checkpoint was "
                                     "thrown away by a preemption or time-out"),
    UsageClass("idle", "held by nobody; x_IdleReason says why"),
)
# the class of a commitment's Purchase rows (not a GPU-second)
PURCHASE_CLASS = "commitment_purchase"

# GPU idle causes, in their order of precedence (docs/cost-model.md §3.1); scheduling_latency
# claims twice (admitted workloads before quota, workloads not evaluated yet after it)
IDLE_CAUSES: tuple[IdleCause, ...] = (
    IdleCause("shared_device_slack", "the unshared part of devices fractional requests share",
              "the fractional tenants (pack, right-size)"),
    IdleCause("gang_barrier", "could host the missing pods of a gang holding reservations at the "
                              "barrier", "the gang (min_count, topology)"),
    IdleCause("fragmentation", "free while workloads wait after a failed placement (admitted: their "
                               "quota is reserved)", "the placement (shapes, bin packing)"),
    IdleCause("scheduling_latency", "free while workloads wait that nobody has tried yet (admitted "
                                    "ones before quota, not yet evaluated ones after it)",
              "nobody: the scheduler's and admission's cycle"),
    IdleCause("quota", "free while workloads wait for quota, only where their minimum shape fits",
              "the quota owners (lend, borrow limits)"),
    IdleCause("no_demand", "nobody asked for them, or only shapes that fit nowhere", "capacity planning"),
)
# the one reason of unrequested CPU and memory (causes are a GPU notion)
UNALLOCATED = "unallocated"

USAGE_CLASS_NAMES: tuple[str, ...] = tuple(c.name for c in USAGE_CLASSES)
IDLE_CAUSE_NAMES: tuple[str, ...] = tuple(c.name for c in IDLE_CAUSES)
IDLE_REASON_NAMES: tuple[str, ...] = (*IDLE_CAUSE_NAMES, UNALLOCATED)


def _sql_list(names: tuple[str, ...]) -> str:
    return "[" + ", ".join(f"'{name}'" for name in names) + "]"


def registry_macros() -> str:
    """SQL creating the temporary macros the models and audits read the registry through."""
    return (
        f"create or replace temp macro usage_classes() as {_sql_list(USAGE_CLASS_NAMES)};\n"
        f"create or replace temp macro record_usage_classes() as "
        f"{_sql_list((*USAGE_CLASS_NAMES, PURCHASE_CLASS))};\n"
        f"create or replace temp macro idle_causes() as {_sql_list(IDLE_CAUSE_NAMES)};\n"
        f"create or replace temp macro idle_reasons() as {_sql_list(IDLE_REASON_NAMES)};\n"
    )


def markdown_tables() -> str:
    """The registry as Markdown (docs/tables.md)."""
    lines = ["| usage class | the GPUs are… |", "|---|---|"]
    lines += [f"| `{c.name}` | {c.meaning} |" for c in USAGE_CLASSES]
    lines += ["", "| # | idle cause | the idle GPUs… | who could act |", "|---|---|---|---|"]
    lines += [f"| {n} | `{c.name}` | {c.meaning} | {c.owner} |" for n, c in enumerate(IDLE_CAUSES, 1)]
    lines += ["", f"CPU and memory idle has the single reason `{UNALLOCATED}`."]
    return "\n".join(lines)

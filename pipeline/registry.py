"""The one registry of usage classes and idle causes.

The models write these names, the audits check them (the `idle_reasons()` and
`usage_classes()` macros are generated from here), the FOCUS column registry allows them, the
dashboards order and colour them, and docs/tables.md lists them from here. A new cause is added
here first (its words, colour and who carries it under the `cause` policy), with its step of
the waterfall (WATERFALL: the waits it claims for and its fit test, a macro of
models/macros.sql); docs/cost-model.md §3.1 states its rule (a test keeps the two in step).
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
    label: str  # its name in the dashboards and reports
    colour: str  # the same in every chart
    # who carries it under the `cause` idle policy (int_idle_shares): "owners" (its own rule),
    # "window" (the teams that used the cell, as the `window` policy) or "platform" (`__idle__`)
    charged_to: str


@dataclass(frozen=True)
class Claim:
    """One step of the idle waterfall (int_idle_by_cause): a cause claims, of the free GPUs the
    steps before it left, what the waits of these kinds could have used by its fit test."""

    cause: str
    waits: tuple[str, ...]  # admitted | quota | not_admitted (int_idle_by_cause's `wait`)
    fit_test: str  # a macro of models/macros.sql: what a waiting shape could have used there


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

# GPU idle causes, in their order of precedence (docs/cost-model.md §3.1)
IDLE_CAUSES: tuple[IdleCause, ...] = (
    IdleCause("shared_device_slack", "the unshared part of devices fractional requests share",
              "the fractional tenants (pack, right-size)", "Shared-device slack", "#8d6e63", "owners"),
    IdleCause("partition_fragmentation", "the rest of GPUs split into partitions (DRA devices drawing on a "
                                         "counter set, MIG slices): only other slices could use it, no whole-GPU request",
              "the platform (the partitions it publishes)", "Partition fragmentation", "#ad1457", "platform"),
    IdleCause("gang_barrier", "could host the missing pods of a gang holding reservations at the "
                              "barrier", "the gang (min_count, topology)", "Gang barrier", "#ef6c00", "owners"),
    IdleCause("fragmentation", "free on nodes where no pod of an admitted waiting shape fits, while its "
                               "minimum would fit the model's free GPUs packed",
              "the placement (shapes, bin packing)", "Fragmentation", "#e65100", "window"),
    IdleCause("scheduling_latency", "free where a waiting shape's minimum fits as they are, for workloads "
                                    "not tried yet (admitted ones before quota, not yet evaluated ones after it)",
              "nobody: the scheduler's and admission's cycle", "Scheduling latency", "#0277bd", "window"),
    IdleCause("quota", "free while workloads wait for quota, only where their minimum shape fits",
              "the quota owners (lend, borrow limits)", "Quota", "#6a1b9a", "owners"),
    IdleCause("capacity_shortfall", "free beside waiting demand whose minimum is larger than the free "
                                    "GPUs of every model it accepts", "capacity planning (more or larger nodes)",
              "Capacity shortfall", "#546e7a", "platform"),
    IdleCause("no_demand", "nobody asked for them, or only shapes that fit nowhere", "capacity planning",
              "No demand", "#9e9e9e", "platform"),
)
# The waterfall after shared_device_slack (partition_fragmentation on partitioned nodes) and gang_barrier, in order: each step takes, of the
# GPUs left, min(what is left, what its waits could use); no_demand takes the rest.
WATERFALL: tuple[Claim, ...] = (
    Claim("fragmentation", ("admitted",), "fit_unusable_while_packed_fits"),
    Claim("scheduling_latency", ("admitted",), "fit_as_they_are"),
    Claim("quota", ("quota",), "fit_as_they_are"),
    Claim("scheduling_latency", ("not_admitted",), "fit_as_they_are"),
    Claim("capacity_shortfall", ("admitted", "quota", "not_admitted"), "fit_larger_than_free"),
)
# the one reason of unrequested CPU and memory (causes are a GPU notion)
UNALLOCATED = "unallocated"

USAGE_CLASS_NAMES: tuple[str, ...] = tuple(c.name for c in USAGE_CLASSES)
IDLE_CAUSE_NAMES: tuple[str, ...] = tuple(c.name for c in IDLE_CAUSES)
IDLE_REASON_NAMES: tuple[str, ...] = (*IDLE_CAUSE_NAMES, UNALLOCATED)
PLATFORM_CAUSE_NAMES: tuple[str, ...] = tuple(c.name for c in IDLE_CAUSES if c.charged_to == "platform")
WINDOW_CAUSE_NAMES: tuple[str, ...] = tuple(c.name for c in IDLE_CAUSES if c.charged_to == "window")


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
        f"create or replace temp macro platform_idle_causes() as {_sql_list(PLATFORM_CAUSE_NAMES)};\n"
    )


_CHARGED_TO = {"owners": "its owners", "window": "as `window`", "platform": "the platform (`__idle__`)"}


def markdown_tables() -> str:
    """The registry as Markdown (docs/tables.md)."""
    lines = ["| usage class | the GPUs are… |", "|---|---|"]
    lines += [f"| `{c.name}` | {c.meaning} |" for c in USAGE_CLASSES]
    lines += ["", "| # | idle cause | the idle GPUs… | who could act | under the cause policy |",
              "|---|---|---|---|---|"]
    lines += [f"| {n} | `{c.name}` | {c.meaning} | {c.owner} | {_CHARGED_TO[c.charged_to]} |"
              for n, c in enumerate(IDLE_CAUSES, 1)]
    lines += ["", "The waterfall, after `shared_device_slack` and `gang_barrier` (each step claims of the "
              "GPUs left what its waits could use by its fit test):", "",
              "| step | cause | waits | fit test |", "|---|---|---|---|"]
    lines += [f"| {n} | `{c.cause}` | {', '.join(c.waits)} | `{c.fit_test}` |" for n, c in enumerate(WATERFALL, 1)]
    lines += ["", f"CPU and memory idle has the single reason `{UNALLOCATED}`."]
    return "\n".join(lines)

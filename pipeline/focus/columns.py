"""Registry of the columns of `focus_cost_records`: the FOCUS columns we emit, then ours.

One entry per column, mirroring the spec's column skeleton (name, feature level, data type,
nullability, allowed values). The row-level checks in `pipeline.focus.checks` and the export's
metadata are generated from it. Order matters: it is the column order of the table (FOCUS
columns first, alphabetically as in the spec, then `x_`).

Two layouts: FOCUS 1.2 (the default: 55 of the 57 columns; CapacityReservationId/Status are left
out because committed nodes are modelled as commitment discounts) and FOCUS 1.3 with split cost
allocation (`build --focus-split`), which adds ServiceProviderName, HostProviderName and the
Allocated* columns.
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.registry import IDLE_REASON_NAMES, PURCHASE_CLASS, USAGE_CLASS_NAMES

# FOCUS 1.2 allowed values (focus-1.2-notes.md section 3)
CHARGE_CATEGORIES = ("Usage", "Purchase", "Tax", "Credit", "Adjustment")
CHARGE_FREQUENCIES = ("One-Time", "Recurring", "Usage-Based")
PRICING_CATEGORIES = ("Standard", "Dynamic", "Committed", "Other")
COMMITMENT_DISCOUNT_STATUSES = ("Used", "Unused")
SERVICE_CATEGORIES = (
    "AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases",
    "Developer Tools", "Multicloud", "Identity", "Integration", "Internet of Things",
    "Management and Governance", "Media", "Migration", "Mobile", "Networking", "Security",
    "Storage", "Web", "Other",
)
# the subcategories of the two categories a GPU platform can sit under
SERVICE_SUBCATEGORIES = (
    "Containers", "End User Computing", "Quantum Compute", "Serverless Compute",
    "Virtual Machines", "Other (Compute)", "AI Platforms", "Bots", "Generative AI",
    "Machine Learning", "Natural Language Processing", "Other (AI and Machine Learning)",
)
# ours, from the one registry (pipeline/registry.py): usage classes and the class of Purchase
# rows; GPU idle causes in their order of precedence, then the one reason of unrequested CPU
# and memory
USAGE_CLASSES = (*USAGE_CLASS_NAMES, PURCHASE_CLASS)
IDLE_REASONS = IDLE_REASON_NAMES
# run phases of a charge period (int_run_phases)
PHASES = ("warmup", "steady", "drain")
GPU_USAGE_SUBCLASSES = ("active", "allocated_idle", "unmeasured")
"""x_UsageSubClass of productive GPU rows: split by the workload's measured engine-active
fraction (x_GpuActiveFraction), or `unmeasured` when the trace had none."""
RESOURCES = ("gpu", "cpu", "memory")
COMMITMENT_DISCOUNT_CATEGORIES = ("Spend", "Usage")


@dataclass(frozen=True)
class Column:
    name: str
    level: str  # M(andatory), R(ecommended), C(onditional); "x" for custom columns
    data_type: str  # FOCUS data type: String, Decimal, Date/Time, JSON, Integer
    nullable: bool
    allowed: tuple[str, ...] | None = None

    @property
    def is_custom(self) -> bool:
        return self.name.startswith("x_")


def _c(name, level, data_type="String", nullable=True, allowed=None) -> Column:
    return Column(name, level, data_type, nullable, allowed)


FOCUS_COLUMNS: tuple[Column, ...] = (
    _c("AvailabilityZone", "R"),
    _c("BilledCost", "M", "Decimal", False),
    _c("BillingAccountId", "M", nullable=False),
    _c("BillingAccountName", "M"),
    _c("BillingAccountType", "C"),
    _c("BillingCurrency", "M", nullable=False),
    _c("BillingPeriodEnd", "M", "Date/Time", False),
    _c("BillingPeriodStart", "M", "Date/Time", False),
    _c("ChargeCategory", "M", nullable=False, allowed=CHARGE_CATEGORIES),
    _c("ChargeClass", "M", allowed=("Correction",)),
    _c("ChargeDescription", "M"),
    _c("ChargeFrequency", "R", nullable=False, allowed=CHARGE_FREQUENCIES),
    _c("ChargePeriodEnd", "M", "Date/Time", False),
    _c("ChargePeriodStart", "M", "Date/Time", False),
    _c("CommitmentDiscountCategory", "C", allowed=COMMITMENT_DISCOUNT_CATEGORIES),
    _c("CommitmentDiscountId", "C"),
    _c("CommitmentDiscountName", "C"),
    _c("CommitmentDiscountQuantity", "C", "Decimal"),
    _c("CommitmentDiscountStatus", "C", allowed=COMMITMENT_DISCOUNT_STATUSES),
    _c("CommitmentDiscountType", "C"),
    _c("CommitmentDiscountUnit", "C"),
    _c("ConsumedQuantity", "C", "Decimal"),
    _c("ConsumedUnit", "C"),
    _c("ContractedCost", "M", "Decimal", False),
    _c("ContractedUnitPrice", "C", "Decimal"),
    _c("EffectiveCost", "M", "Decimal", False),
    _c("InvoiceId", "R"),
    _c("InvoiceIssuerName", "M", nullable=False),
    _c("ListCost", "M", "Decimal", False),
    _c("ListUnitPrice", "C", "Decimal"),
    _c("PricingCategory", "C", allowed=PRICING_CATEGORIES),
    _c("PricingCurrency", "C", nullable=False),
    _c("PricingCurrencyContractedUnitPrice", "C", "Decimal"),
    _c("PricingCurrencyEffectiveCost", "C", "Decimal", False),
    _c("PricingCurrencyListUnitPrice", "C", "Decimal"),
    _c("PricingQuantity", "M", "Decimal"),
    _c("PricingUnit", "M"),
    _c("ProviderName", "M", nullable=False),
    _c("PublisherName", "M", nullable=False),
    _c("RegionId", "C"),
    _c("RegionName", "C"),
    _c("ResourceId", "C"),
    _c("ResourceName", "C"),
    _c("ResourceType", "C"),
    _c("ServiceCategory", "M", nullable=False, allowed=SERVICE_CATEGORIES),
    _c("ServiceName", "M", nullable=False),
    _c("ServiceSubcategory", "R", nullable=False, allowed=SERVICE_SUBCATEGORIES),
    _c("SkuId", "C"),
    _c("SkuMeter", "C"),
    _c("SkuPriceDetails", "C", "JSON"),
    _c("SkuPriceId", "C"),
    _c("SubAccountId", "C"),
    _c("SubAccountName", "C"),
    _c("SubAccountType", "C"),
    _c("Tags", "C", "JSON"),
)

# FOCUS 1.3: the columns split cost allocation and the provider rename add
SPLIT_COLUMNS: tuple[Column, ...] = (
    _c("AllocatedMethodDetails", "R", "JSON"),
    _c("AllocatedMethodId", "C"),
    _c("AllocatedResourceId", "C"),
    _c("AllocatedResourceName", "C"),
    _c("AllocatedTags", "C", "JSON"),
    _c("HostProviderName", "M"),
    _c("ServiceProviderName", "M", nullable=False),
)

CUSTOM_COLUMNS: tuple[Column, ...] = (
    _c("x_RunId", "x", nullable=False),
    _c("x_Node", "x"),  # null on the Purchase rows of a commitment pool (it spans nodes)
    _c("x_GpuModel", "x"),  # null on CPU-only nodes
    _c("x_Rack", "x"),
    _c("x_Tenant", "x", nullable=False),
    _c("x_Workload", "x"),
    _c("x_Queue", "x"),
    _c("x_ClusterQueue", "x"),
    _c("x_Priority", "x", "Integer"),
    _c("x_UsageClass", "x", nullable=False, allowed=USAGE_CLASSES),
    _c("x_IdleReason", "x", allowed=IDLE_REASONS),
    _c("x_Resource", "x", nullable=False, allowed=RESOURCES),
    _c("x_Borrowed", "x", "Boolean", False),
    _c("x_Phase", "x", allowed=PHASES),  # null on Purchase rows
    _c("x_PreemptedBy", "x"),  # lost_to_preemption rows: the workload the eviction made room for
    _c("x_PreemptedByTenant", "x"),  # and its team
    _c("x_UsageSubClass", "x", allowed=GPU_USAGE_SUBCLASSES),  # productive GPU rows only
    _c("x_GpuActiveFraction", "x", "Decimal"),  # the workload's engine-active fraction, 0..1
)

ALL_COLUMNS: tuple[Column, ...] = FOCUS_COLUMNS + CUSTOM_COLUMNS
"""The FOCUS 1.2 layout (the default)."""


def focus_columns(split: bool) -> tuple[Column, ...]:
    """The FOCUS columns of a layout, alphabetically (the spec's order)."""
    if not split:
        return FOCUS_COLUMNS
    return tuple(sorted(FOCUS_COLUMNS + SPLIT_COLUMNS, key=lambda column: column.name))


def table_columns(split: bool) -> tuple[Column, ...]:
    """Every column of `focus_cost_records` in a layout: FOCUS columns, then ours."""
    return focus_columns(split) + CUSTOM_COLUMNS


# Columns with one value on every row of every run and layout (the SQL model writes the same
# literal in its Usage and Purchase branches). The table stores them as virtual generated
# columns: computed when read, never written per row (at a million rows they were a third of
# the model's write time). A test checks these values against the model's own literals.
CONSTANT_COLUMNS: dict[str, str | None] = {
    "BillingAccountId": "gpu-finops-internal",
    "BillingAccountName": "GPU Platform (internal chargeback)",
    "BillingAccountType": "Internal Chargeback Account",
    "BillingCurrency": "USD",
    "ChargeClass": None,
    "InvoiceIssuerName": "Internal GPU Platform",
    "PricingCurrency": "USD",
    "ProviderName": "Internal GPU Platform",
    "PublisherName": "Internal GPU Platform",
    "RegionId": "on-prem",
    "RegionName": "On-premises",
    "ServiceCategory": "Compute",
    "ServiceName": "Kubernetes GPU Cluster",
    "ServiceSubcategory": "Containers",
    "HostProviderName": "Internal GPU Platform",
    "ServiceProviderName": "Internal GPU Platform",
}


def focus_version(split: bool) -> str:
    return "1.3" if split else "1.2"


REGISTRY: dict[str, Column] = {c.name: c for c in (*FOCUS_COLUMNS, *SPLIT_COLUMNS, *CUSTOM_COLUMNS)}

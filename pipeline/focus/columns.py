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


_PURCHASE = "x_UsageClass = 'commitment_purchase'"
# CommitmentDiscountStatus = 'Unused': a Committed node's idle
_UNUSED = f"(not {_PURCHASE} and PricingCategory = 'Committed' and x_UsageClass = 'idle')"
# Columns whose value on every row follows from the row's stored columns (the SQL model
# computes each from the same inputs: the row's run, node, resource, charge period, usage
# class, tenant and commitment). Stored as virtual generated columns too: every reader sees
# them as before, no row stores them. A test checks each against the model's own values.
_DERIVED_BOTH: dict[str, str] = {
    # (a generated column cannot read another: ContractedCost and CommitmentDiscountStatus are
    # spelled out where a derived column needs them)
    "BilledCost": f"case when {_PURCHASE} then ContractedUnitPrice * PricingQuantity "
                  "when CommitmentDiscountId is null then EffectiveCost else 0.0 end",
    "BillingPeriodEnd": "date_trunc('month', ChargePeriodStart) + interval 1 month",
    "BillingPeriodStart": "date_trunc('month', ChargePeriodStart)",
    "ChargeCategory": f"case when {_PURCHASE} then 'Purchase' else 'Usage' end",
    "ChargeFrequency": f"case when {_PURCHASE} then 'Recurring' else 'Usage-Based' end",
    "CommitmentDiscountCategory": "case when CommitmentDiscountId is not null then 'Usage' end",
    # a Purchase row's SkuId is 'commitment-' and the commitment's SKU
    "CommitmentDiscountName": "case when CommitmentDiscountId is not null then 'Committed ' || x_Resource "
                              f"|| ' capacity (' || (case when {_PURCHASE} then substr(SkuId, 12) else SkuId end) "
                              "|| ')' end",
    "CommitmentDiscountStatus": f"case when not {_PURCHASE} and PricingCategory = 'Committed' "
                                "then (case when x_UsageClass = 'idle' then 'Unused' else 'Used' end) end",
    "CommitmentDiscountQuantity": "case when CommitmentDiscountId is not null then PricingQuantity end",
    "CommitmentDiscountType": "case when CommitmentDiscountId is not null then 'Committed Capacity' end",
    "CommitmentDiscountUnit": "case when CommitmentDiscountId is not null then PricingUnit end",
    "ConsumedQuantity": f"case when {_PURCHASE} or {_UNUSED} then null "
                        "when x_UsageClass = 'idle' then 0.0 else PricingQuantity end",
    "ConsumedUnit": f"case when {_PURCHASE} or {_UNUSED} then null else PricingUnit end",
    "ContractedCost": "ContractedUnitPrice * PricingQuantity",
    "InvoiceId": "'INV-' || x_RunId || '-' || strftime(ChargePeriodStart, '%Y-%m')",
    "ListCost": "ListUnitPrice * PricingQuantity",
    "PricingCurrencyContractedUnitPrice": "ContractedUnitPrice",
    "PricingCurrencyEffectiveCost": "EffectiveCost",
    "PricingCurrencyListUnitPrice": "ListUnitPrice",
    "ResourceId": f"case when {_PURCHASE} then CommitmentDiscountId else 'k8s://' || x_RunId || '/node/' || x_Node end",
    "ResourceName": f"case when {_PURCHASE} then substr(SkuId, 12) || ' commitment' else x_Node end",
    "ResourceType": f"case when {_PURCHASE} then 'Commitment' when x_GpuModel is null then 'CPU Node' "
                    "else 'GPU Node' end",
    "SkuMeter": f"case when {_PURCHASE} then (case x_Resource when 'gpu' then 'GPU Commitment' "
                "when 'cpu' then 'CPU Commitment' else 'Memory Commitment' end) "
                "else (case x_Resource when 'gpu' then 'GPU Usage' when 'cpu' then 'CPU Usage' "
                "else 'Memory Usage' end) end",
}
_DERIVED_ROWS: dict[str, str] = {  # FOCUS 1.2 rows: a team's namespace is the sub-account
    "SubAccountId": f"case when not {_PURCHASE} then 'k8s://' || x_RunId || '/namespace/' || x_Tenant end",
    "SubAccountName": f"case when not {_PURCHASE} then x_Tenant end",
    "SubAccountType": f"case when not {_PURCHASE} then 'Kubernetes Namespace' end",
}
_DERIVED_SPLIT: dict[str, str] = {  # FOCUS 1.3 split: the cluster is, workloads are allocated parts
    "SubAccountId": f"case when not {_PURCHASE} then 'k8s://' || x_RunId || '/cluster' end",
    "SubAccountName": f"case when not {_PURCHASE} then x_RunId end",
    "SubAccountType": f"case when not {_PURCHASE} then 'Kubernetes Cluster' end",
    "AllocatedMethodId": f"case when not {_PURCHASE} then x_Resource || '-request-hours' end",
    "AllocatedResourceId": "case when x_Workload is not null then 'k8s://' || x_RunId || '/workload/' || x_Workload end",
    "AllocatedResourceName": "x_Workload",
}


def derived_columns(split: bool) -> dict[str, str]:
    """Column -> its SQL expression over the stored columns, in a layout."""
    return {**_DERIVED_BOTH, **(_DERIVED_SPLIT if split else _DERIVED_ROWS)}


def virtual_columns(split: bool) -> dict[str, str]:
    """Every column the FOCUS table does not store, as SQL over the stored ones: the constants
    (literals) and the derived columns."""
    literals = {name: "null" if value is None else "'" + value.replace("'", "''") + "'"
                for name, value in CONSTANT_COLUMNS.items()}
    return {**literals, **derived_columns(split)}

def focus_version(split: bool) -> str:
    return "1.3" if split else "1.2"


REGISTRY: dict[str, Column] = {c.name: c for c in (*FOCUS_COLUMNS, *SPLIT_COLUMNS, *CUSTOM_COLUMNS)}

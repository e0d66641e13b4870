"""Row-level FOCUS checks generated from the column registry, as DuckDB queries.

The FOCUS validator checks allowed values per column, not per row, never fires the cost
identities for rows without a ChargeClass, parses dates leniently and skips the attribute rules
(ISO dates with `Z`, `x_` prefixes, unit format); it knows nothing of FOCUS 1.3 split cost
allocation (focus-1.2-notes.md section 7.6). These checks cover what it misses. Each check is a
query that returns the violating rows (empty = pass); the set adapts to the table's layout
(FOCUS 1.2, or 1.3 with split cost allocation when the Allocated* columns are there).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.focus.columns import FOCUS_COLUMNS, REGISTRY, SPLIT_COLUMNS, table_columns

TABLE = "focus_cost_records"

# FOCUS SkuPriceDetails keys (custom keys must start with x_)
SKU_PRICE_DETAIL_KEYS = (
    "CoreCount", "DiskMaxIops", "DiskSpace", "DiskType", "GpuCount", "InstanceType",
    "InstanceSeries", "MemorySize", "NetworkMaxIops", "NetworkMaxThroughput", "OperatingSystem",
    "Redundancy", "StorageClass",
)
# FOCUS Unit Format: "<plural units>", "<unit>-<plural time units>" or "<plural units>/<time unit>",
# capitalized words (GPU-Hours, Core-Hours, GiB-Hours, Requests/Second)
UNIT_PATTERN = (
    r"^[A-Z][A-Za-z0-9]*( [A-Z][A-Za-z0-9]*)*"
    r"(-(Years|Months|Days|Hours|Minutes|Seconds)|/(Year|Month|Day|Hour|Minute|Second))?$"
)
ISO_UTC_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"
JSON_COLUMNS = ("Tags", "SkuPriceDetails", "AllocatedTags", "AllocatedMethodDetails")
# relative tolerance of the cost identities (the validator's own product check uses 1e-9)
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Check:
    name: str
    sql: str


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _mismatch(a: str, b: str) -> str:
    return f"abs(({a}) - ({b})) > {TOLERANCE} * greatest(1, abs({b}))"


def is_split_layout(columns: dict[str, str]) -> bool:
    return "AllocatedMethodId" in columns


def _column_checks(columns: dict[str, str]) -> list[Check]:
    checks: list[Check] = []
    for column in table_columns(is_split_layout(columns)):
        if column.name not in columns:
            continue  # reported by columns_violations
        if not column.nullable:
            checks.append(
                Check(f"focus_not_null:{column.name}", f'select * from {TABLE} where "{column.name}" is null')
            )
        if column.allowed:
            values = ", ".join(_quote(v) for v in column.allowed)
            checks.append(
                Check(
                    f"focus_allowed_values:{column.name}",
                    f'select * from {TABLE} where "{column.name}" not in ({values})',
                )
            )
    # Date/Time columns: a timestamp type (UTC by construction), or ISO 8601 strings ending in Z
    for name, duck_type in columns.items():
        registered = REGISTRY.get(name)
        if registered is None or registered.data_type != "Date/Time":
            continue
        if duck_type.startswith("TIMESTAMP"):
            continue
        checks.append(
            Check(
                "focus_datetime_iso_utc",
                f"""select '{name}' as "column", "{name}" as value from {TABLE}
                    where "{name}" is not null
                      and not regexp_full_match(cast("{name}" as varchar), '{ISO_UTC_PATTERN}')""",
            )
        )
    return checks


def _row_checks() -> list[Check]:
    keys = ", ".join(_quote(k) for k in SKU_PRICE_DETAIL_KEYS)
    return [
        Check(
            "focus_charge_period_ordered",
            f"select * from {TABLE} where not (ChargePeriodStart < ChargePeriodEnd)",
        ),
        Check(
            "focus_billing_period_ordered",
            f"""select * from {TABLE}
                where not (BillingPeriodStart < BillingPeriodEnd)
                   or not (BillingPeriodStart <= ChargePeriodStart and ChargePeriodStart < BillingPeriodEnd)""",
        ),
        Check(
            "focus_list_cost_identity",
            f"select * from {TABLE} where {_mismatch('ListCost', 'ListUnitPrice * PricingQuantity')}",
        ),
        Check(
            "focus_contracted_cost_identity",
            f"""select * from {TABLE}
                where {_mismatch('ContractedCost', 'ContractedUnitPrice * PricingQuantity')}""",
        ),
        Check(
            # Usage rows consume their quantity, except what a commitment left unused
            "focus_consumed_quantity_on_usage_rows",
            f"""select * from {TABLE}
                where (ChargeCategory = 'Usage' and CommitmentDiscountStatus is distinct from 'Unused')
                      != (ConsumedQuantity is not null)
                   or (ConsumedQuantity is null) != (ConsumedUnit is null)""",
        ),
        Check(
            "focus_pricing_unit_iff_quantity",
            f"select * from {TABLE} where (PricingQuantity is null) != (PricingUnit is null)",
        ),
        Check(
            "focus_unit_format",
            f"""select * from {TABLE}
                where not regexp_full_match(PricingUnit, '{UNIT_PATTERN}')
                   or not regexp_full_match(coalesce(ConsumedUnit, 'Units'), '{UNIT_PATTERN}')
                   or not regexp_full_match(coalesce(CommitmentDiscountUnit, 'Units'), '{UNIT_PATTERN}')""",
        ),
        Check(
            "focus_sku_price_details_keys",
            f"""select * from {TABLE}
                where SkuPriceDetails is not null and exists (
                    select 1 from unnest(json_keys(SkuPriceDetails)) as k(key)
                    where not (key like 'x\\_%' escape '\\' or key in ({keys}))
                )""",
        ),
        Check(
            "focus_commitment_columns_consistent",
            f"""select * from {TABLE}
                where (CommitmentDiscountId is null) != (CommitmentDiscountCategory is null)
                   or (CommitmentDiscountId is null) != (CommitmentDiscountType is null)
                   or (CommitmentDiscountId is null) != (CommitmentDiscountQuantity is null)
                   or (CommitmentDiscountQuantity is null) != (CommitmentDiscountUnit is null)
                   or (CommitmentDiscountId is null and CommitmentDiscountStatus is not null)
                   or (CommitmentDiscountId is not null and ChargeCategory = 'Usage'
                       and CommitmentDiscountStatus is null)""",
        ),
        Check(
            # FOCUS: `Committed` prices usage a commitment covers, never the commitment's purchase
            "focus_committed_pricing_on_covered_usage",
            f"""select * from {TABLE}
                where (PricingCategory = 'Committed')
                      != (ChargeCategory = 'Usage' and CommitmentDiscountId is not null)""",
        ),
        Check(
            "focus_purchase_rows",
            f"""select * from {TABLE}
                where ChargeCategory = 'Purchase'
                  and (ChargeFrequency = 'Usage-Based' or EffectiveCost != 0)""",
        ),
    ]


def _json_checks(columns: dict[str, str]) -> list[Check]:
    present = [name for name in JSON_COLUMNS if name in columns]
    if not present:
        return []
    condition = " or ".join(
        f"({name} is not null and (not json_valid({name}) or json_type({name}) != 'OBJECT'))"
        for name in present
    )
    return [Check("focus_json_columns_are_objects", f"select * from {TABLE} where {condition}")]


def _split_checks() -> list[Check]:
    """FOCUS 1.3 Data Generator-Calculated Split Cost Allocation."""
    ratio = "cast(json_extract(AllocatedMethodDetails, '$.Elements[0].AllocatedRatio') as double)"
    # the origin charge of a part: same period, resource (ResourceId), SKU price and commitment status
    origin = "x_RunId, ChargePeriodStart, ResourceId, SkuPriceId, CommitmentDiscountStatus"
    return [
        Check(
            "focus_split_allocations_sum_to_origin",
            f"""with parts as (
                    select *, {ratio} as ratio,
                        sum(PricingQuantity) over (partition by {origin}) as origin_quantity,
                        sum({ratio}) over (partition by {origin}) as ratio_sum
                    from {TABLE}
                    where AllocatedMethodId is not null
                )
                select * exclude (ratio_sum), ratio_sum from parts
                where ratio is null
                   or {_mismatch('ratio_sum', '1')}
                   or {_mismatch('ratio * origin_quantity', 'PricingQuantity')}""",
        ),
        Check(
            # dimensions, unit prices and the origin's tags are the same in every part
            "focus_split_parts_share_origin_dimensions",
            f"""select {origin}, count(*) as parts from {TABLE}
                where AllocatedMethodId is not null
                group by {origin}
                having count(distinct Tags) > 1 or count(distinct SubAccountId) > 1
                    or count(distinct ChargeDescription) > 1 or count(distinct ListUnitPrice) > 1
                    or count(distinct ContractedUnitPrice) > 1 or count(distinct PricingCategory) > 1
                    or count(distinct AllocatedMethodId) > 1""",
        ),
        Check(
            "focus_split_allocated_resource",
            f"""select * from {TABLE}
                where (AllocatedResourceId is null) != (AllocatedResourceName is null)
                   or (AllocatedResourceId is null and AllocatedTags is not null)
                   or (AllocatedMethodId is null and (AllocatedResourceId is not null
                       or AllocatedMethodDetails is not null))
                   or (ChargeCategory = 'Usage' and AllocatedMethodId is null)
                   or exists (
                       select 1 from unnest(json_keys(AllocatedTags)) as k(key)
                       where Tags is not null and json_exists(Tags, '$."' || key || '"')
                   )""",
        ),
    ]


def generated_checks(columns: dict[str, str]) -> list[Check]:
    """Every row-level check for a table with these columns (name → DuckDB type)."""
    checks = _column_checks(columns) + _row_checks() + _json_checks(columns)
    if is_split_layout(columns):
        checks += _split_checks()
    return checks


def columns_violations(actual_columns: list[str]) -> list[tuple[str, str]]:
    """(check name, example) for the table's shape: FOCUS columns missing, custom columns
    without the `x_` prefix, or placed before a FOCUS column."""
    split = "AllocatedMethodId" in actual_columns
    problems: list[tuple[str, str]] = []
    expected = FOCUS_COLUMNS + (SPLIT_COLUMNS if split else ())
    for column in expected:
        if column.level == "M" and column.name not in actual_columns:
            problems.append(("focus_required_columns_present", column.name))
    for column in expected:
        if column.name not in actual_columns:
            problems.append(("focus_columns_present", column.name))
    focus_names = {column.name for column in expected}
    for name in actual_columns:
        if name not in focus_names and not name.startswith("x_"):
            problems.append(("focus_custom_columns_prefixed", name))
    custom_seen = False
    for name in actual_columns:
        if name.startswith("x_"):
            custom_seen = True
        elif custom_seen:
            problems.append(("focus_custom_columns_last", name))
    return problems

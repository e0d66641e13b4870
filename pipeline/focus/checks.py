"""Row-level FOCUS checks generated from the column registry, as DuckDB queries.

The FOCUS validator checks allowed values per column, not per row, and skips the cost identities
and period ordering (focus-1.2-notes.md section 7.6); these checks cover what it misses. Each check
is a query that returns the violating rows (empty = pass).
"""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.focus.columns import ALL_COLUMNS, FOCUS_COLUMNS, Column

TABLE = "focus_cost_records"


@dataclass(frozen=True)
class Check:
    name: str
    sql: str | None  # None: the check is about the table's shape, see `columns_check`


def _quote(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _not_null_check(column: Column) -> Check:
    return Check(
        f"focus_not_null:{column.name}",
        f'select * from {TABLE} where "{column.name}" is null',
    )


def _allowed_values_check(column: Column) -> Check:
    values = ", ".join(_quote(v) for v in column.allowed or ())
    return Check(
        f"focus_allowed_values:{column.name}",
        f'select * from {TABLE} where "{column.name}" not in ({values})',
    )


def generated_checks() -> list[Check]:
    """Non-null and allowed-value checks for every registry column, plus cross-column rules."""
    checks: list[Check] = []
    for column in ALL_COLUMNS:
        if not column.nullable:
            checks.append(_not_null_check(column))
        if column.allowed:
            checks.append(_allowed_values_check(column))
    checks += [
        Check(
            "focus_charge_period_ordered",
            f"select * from {TABLE} where not (ChargePeriodStart < ChargePeriodEnd)",
        ),
        Check(
            "focus_billing_period_ordered",
            f"select * from {TABLE} where not (BillingPeriodStart < BillingPeriodEnd)",
        ),
        Check(
            # Usage rows carry a consumed quantity and its unit; other rows carry neither
            "focus_consumed_quantity_on_usage_rows",
            f"""select * from {TABLE}
                where (ChargeCategory = 'Usage') != (ConsumedQuantity is not null)
                   or (ConsumedQuantity is null) != (ConsumedUnit is null)""",
        ),
        Check(
            "focus_pricing_unit_iff_quantity",
            f"select * from {TABLE} where (PricingQuantity is null) != (PricingUnit is null)",
        ),
        Check(
            "focus_sku_price_details_keys",
            f"""select * from {TABLE}
                where SkuPriceDetails is not null and exists (
                    select 1 from unnest(json_keys(SkuPriceDetails)) as k(key)
                    where not (key like 'x\\_%' escape '\\' or key in (
                        'CoreCount', 'DiskMaxIops', 'DiskSpace', 'DiskType', 'GpuCount',
                        'InstanceType', 'InstanceSeries', 'MemorySize', 'NetworkMaxIops',
                        'NetworkMaxThroughput', 'OperatingSystem', 'Redundancy', 'StorageClass'
                    ))
                )""",
        ),
        Check(
            "focus_json_columns_are_objects",
            f"""select * from {TABLE}
                where (Tags is not null and json_type(Tags) != 'OBJECT')
                   or (SkuPriceDetails is not null and json_type(SkuPriceDetails) != 'OBJECT')""",
        ),
    ]
    return checks


def columns_violations(actual_columns: list[str]) -> list[tuple[str, str]]:
    """(check name, example) for missing FOCUS columns and x_ columns placed before FOCUS ones."""
    problems: list[tuple[str, str]] = []
    for column in FOCUS_COLUMNS:
        if column.level == "M" and column.name not in actual_columns:
            problems.append(("focus_required_columns_present", column.name))
    for column in FOCUS_COLUMNS:
        if column.name not in actual_columns:
            problems.append(("focus_columns_present", column.name))
    custom_seen = False
    for name in actual_columns:
        if name.startswith("x_"):
            custom_seen = True
        elif custom_seen:
            problems.append(("focus_custom_columns_last", name))
    return problems

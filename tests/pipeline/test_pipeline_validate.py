"""`validate`: a good database passes; each kind of violation fails, named.

The kinds the FOCUS validator skips or gets wrong (focus-1.2-notes.md section 7.6) go through
the real command line (`gpu-finops validate`, exit 1, the check's name on stderr): enum values
per row, unit price × quantity = cost, period ordering, ISO timestamps with Z, x_ prefixes, and
allocated parts summing to the origin charge in split mode.
"""

from __future__ import annotations

import shutil

import duckdb
import pytest

from gpu_finops.cli import main
from pipeline.validate import validate_db

# The build writes on every core, so a table's physical row order is not fixed: the row a test
# breaks is the first in an order of its content.
_FIRST = ("(select rowid from focus_cost_records where {} order by x_RunId, ChargePeriodStart, x_Node, "
          "x_Resource, x_Workload, x_UsageClass, x_UsageSubClass, x_IdleReason, x_Borrowed, x_PreemptedBy "
          "limit 1)")
FIRST_USAGE_ROW = "rowid = " + _FIRST.format("ChargeCategory = 'Usage'")
FIRST_PRODUCTIVE_ROW = "rowid = " + _FIRST.format("x_UsageClass = 'productive'")


def broken_copy(source, tmp_path, statement):
    db = tmp_path / "broken.duckdb"
    shutil.copy(source, db)
    con = duckdb.connect(str(db))
    # every column stored, as a FOCUS table another tool wrote would hold it: the build's
    # virtual generated columns (constants, columns derived from the row) cannot be updated
    con.execute("create table focus_stored as select * from focus_cost_records")
    con.execute("drop table focus_cost_records")
    con.execute("alter table focus_stored rename to focus_cost_records")
    con.execute(statement)
    con.close()
    return db


@pytest.mark.parametrize(
    ("statement", "check"),
    [
        # enums per row: one bad value among good ones (the validator passes the column)
        (f"update focus_cost_records set ChargeCategory = 'GPU' where {FIRST_USAGE_ROW}",
         "focus_allowed_values:ChargeCategory"),
        (f"update focus_cost_records set CommitmentDiscountStatus = 'Partly' where {FIRST_USAGE_ROW}",
         "focus_allowed_values:CommitmentDiscountStatus"),
        # unit price × quantity = cost (the validator never fires it without a ChargeClass)
        (f"update focus_cost_records set ListCost = ListCost + 1 where {FIRST_USAGE_ROW}",
         "focus_list_cost_identity"),
        (f"update focus_cost_records set ContractedCost = ContractedCost * 2 + 1 where {FIRST_USAGE_ROW}",
         "focus_contracted_cost_identity"),
        # period ordering
        (f"update focus_cost_records set ChargePeriodEnd = ChargePeriodStart where {FIRST_USAGE_ROW}",
         "focus_charge_period_ordered"),
        (f"update focus_cost_records set BillingPeriodStart = BillingPeriodEnd where {FIRST_USAGE_ROW}",
         "focus_billing_period_ordered"),
        # ISO 8601 timestamps with Z (the validator parses '2026-11-02 00:00:00' happily)
        ("alter table focus_cost_records alter ChargePeriodStart type varchar "
         "using strftime(ChargePeriodStart, '%Y-%m-%d %H:%M:%S')",
         "focus_datetime_iso_utc"),
        # x_ prefixes: a custom column, a custom SkuPriceDetails key
        ("alter table focus_cost_records add column Team varchar", "focus_custom_columns_prefixed"),
        (f"update focus_cost_records set SkuPriceDetails = '{{\"Gpus\": 1}}' where {FIRST_USAGE_ROW}",
         "focus_sku_price_details_keys"),
        # unit format (a lowercase unit passes the validator)
        (f"update focus_cost_records set PricingUnit = 'gpu-hours' where {FIRST_USAGE_ROW}",
         "focus_unit_format"),
    ],
)
def test_cli_names_each_kind_of_violation_the_validator_misses(built, tmp_path, capsys, statement, check):
    db = broken_copy(built.db, tmp_path, statement)
    assert main(["validate", "--db", str(db)]) == 1
    assert f"FAIL {check}:" in capsys.readouterr().err


def test_cli_names_split_parts_that_do_not_add_up(built_split, tmp_path, capsys):
    # one allocated part grows: the parts no longer add up to their node-hour
    db = broken_copy(
        built_split.db, tmp_path,
        f"""update focus_cost_records set PricingQuantity = PricingQuantity + 0.5,
                ListCost = ListUnitPrice * (PricingQuantity + 0.5),
                ContractedCost = ContractedUnitPrice * (PricingQuantity + 0.5)
            where {FIRST_PRODUCTIVE_ROW}""",
    )
    assert main(["validate", "--db", str(db)]) == 1
    err = capsys.readouterr().err
    assert "FAIL focus_split_allocations_sum_to_origin:" in err
    assert "FAIL audit:node_period_capacity_conserved:" in err


def test_cli_passes_good_databases(built, built_split, capsys):
    assert main(["validate", "--db", str(built.db)]) == 0
    assert main(["validate", "--db", str(built_split.db)]) == 0
    assert "passed" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("statement", "check"),
    [
        (f"update focus_cost_records set ListCost = ListCost + 1 where {FIRST_USAGE_ROW}",
         "audit:list_cost_identity"),
        ("update focus_cost_records set x_IdleReason = 'fragmentation' "
         f"where {FIRST_PRODUCTIVE_ROW}", "audit:idle_reason_iff_idle"),
        (f"update focus_cost_records set PricingQuantity = PricingQuantity + 0.5 where {FIRST_USAGE_ROW}",
         "audit:node_period_capacity_conserved"),
        (f"update focus_cost_records set EffectiveCost = -1 where {FIRST_USAGE_ROW}",
         "audit:no_negative_quantity_or_cost"),
        (f"update focus_cost_records set PricingCategory = 'Spot' where {FIRST_USAGE_ROW}",
         "audit:enum_values_valid"),
        ("update focus_cost_records set EffectiveCost = EffectiveCost + 1, "
         "ContractedCost = ContractedCost + 1 where CommitmentDiscountStatus = 'Unused'",
         "audit:commitment_amortized_exactly"),
        ("update focus_cost_records set ConsumedQuantity = PricingQuantity "
         "where CommitmentDiscountStatus = 'Unused'", "focus_consumed_quantity_on_usage_rows"),
        ("update focus_cost_records set PricingCategory = 'Committed' where ChargeCategory = 'Purchase'",
         "focus_committed_pricing_on_covered_usage"),
        ("update focus_cost_records set ChargeFrequency = 'Usage-Based' where ChargeCategory = 'Purchase'",
         "focus_purchase_rows"),
        ("update fct_showback set cost_idle_shared = cost_idle_shared + 1 where tenant <> '__idle__'",
         "audit:showback_balances"),
        ("update fct_pod_intervals set gpus = 100 where rowid = 0", "audit:no_gpu_over_allocated"),
        ("alter table focus_cost_records drop column BilledCost", "focus_required_columns_present"),
        ("update focus_cost_records set Tags = '[1, 2]' where rowid = 0", "focus_json_columns_are_objects"),
    ],
)
def test_injected_violation_is_named(built, tmp_path, statement, check):
    names = {violation.check for violation in validate_db(broken_copy(built.db, tmp_path, statement))}
    assert check in names, names

"""validate_db passes on a good database and names the check for each injected violation."""

from __future__ import annotations

import shutil

import duckdb
import pytest

from pipeline.validate import validate_db


def test_good_db_passes(built):
    assert validate_db(built.db) == []


@pytest.mark.parametrize(
    ("statement", "check"),
    [
        ("update focus_cost_records set ListCost = ListCost + 1 where rowid = 0",
         "audit:list_cost_identity"),
        ("update focus_cost_records set ChargeCategory = 'GPU' where rowid = 0",
         "focus_allowed_values:ChargeCategory"),
        ("update focus_cost_records set x_IdleReason = 'fragmentation' "
         "where x_UsageClass = 'productive' and rowid = (select min(rowid) from focus_cost_records "
         "where x_UsageClass = 'productive')",
         "audit:idle_reason_iff_idle"),
        ("update focus_cost_records set ConsumedQuantity = ConsumedQuantity + 0.5 where rowid = 0",
         "audit:node_period_capacity_conserved"),
        ("update focus_cost_records set ChargePeriodEnd = ChargePeriodStart where rowid = 0",
         "focus_charge_period_ordered"),
        ("update focus_cost_records set EffectiveCost = -1 where rowid = 0",
         "audit:no_negative_quantity_or_cost"),
        ("update focus_cost_records set PricingCategory = 'Spot' where rowid = 0",
         "audit:enum_values_valid"),
        ("update focus_cost_records set SkuPriceDetails = '{\"Gpus\": 1}' where rowid = 0",
         "focus_sku_price_details_keys"),
        ("update fct_pod_intervals set gpus = 100 where rowid = 0", "audit:no_gpu_over_allocated"),
        ("alter table focus_cost_records drop column BilledCost",
         "focus_required_columns_present"),
    ],
)
def test_injected_violation_is_named(built, tmp_path, statement, check):
    db = tmp_path / "broken.duckdb"
    shutil.copy(built.db, db)
    con = duckdb.connect(str(db))
    con.execute(statement)
    con.close()
    names = {violation.check for violation in validate_db(db)}
    assert check in names, names

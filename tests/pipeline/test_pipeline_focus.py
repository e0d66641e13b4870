"""focus_cost_records in both layouts (FOCUS 1.2 rows, FOCUS 1.3 split cost allocation),
commitments, and the Parquet export with its FOCUS metadata."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from tables import approx_rows, rows

from pipeline.focus.columns import CUSTOM_COLUMNS, FOCUS_COLUMNS, SPLIT_COLUMNS
from pipeline.validate import validate_db


@pytest.fixture(scope="module")
def split_con(built_split):
    connection = duckdb.connect(str(built_split.db), read_only=True)
    yield connection
    connection.close()


def record(con, where: str) -> dict:
    found = con.execute(f"select * from focus_cost_records where {where}").fetchall()
    assert len(found) == 1, found
    return dict(zip([d[0] for d in con.description], found[0], strict=True))


def test_column_layout_focus_1_2(con):
    columns = [d[0] for d in con.execute("select * from focus_cost_records limit 0").description]
    assert columns == [c.name for c in FOCUS_COLUMNS] + [c.name for c in CUSTOM_COLUMNS]
    assert len(FOCUS_COLUMNS) == 55 and columns[55] == "x_RunId" and columns[-1] == "x_GpuActiveFraction"
    assert not {c.name for c in SPLIT_COLUMNS} & set(columns)


def test_usage_row_on_a_committed_node(con):
    row = record(con, "x_RunId = 'reserved' and x_UsageClass = 'gang_wait'")
    quantity = 2 * 600 / 3600
    assert row["ConsumedQuantity"] == row["PricingQuantity"] == pytest.approx(quantity)
    assert row["PricingCategory"] == "Committed" and row["ChargeCategory"] == "Usage"
    # FOCUS: ContractedUnitPrice excludes commitment discounts (no other negotiated rate: list)
    assert row["ListUnitPrice"] == 4.0 and row["ContractedUnitPrice"] == 4.0
    assert row["ListCost"] == row["ContractedCost"] == row["ListUnitPrice"] * row["PricingQuantity"]
    # paid by the commitment: nothing billed, the amortized share at its rate is the effective cost
    assert row["BilledCost"] == 0.0
    assert row["EffectiveCost"] == 3.0 * row["PricingQuantity"]
    assert (row["CommitmentDiscountId"], row["CommitmentDiscountStatus"], row["CommitmentDiscountCategory"]) == (
        "k8s://reserved/commitment/gpu-h100", "Used", "Usage"
    )
    assert row["CommitmentDiscountQuantity"] == row["PricingQuantity"]
    assert row["CommitmentDiscountUnit"] == row["PricingUnit"] == row["ConsumedUnit"] == "GPU-Hours"
    assert row["ResourceId"] == "k8s://reserved/node/n1" and row["ResourceType"] == "GPU Node"
    assert row["SkuId"] == "gpu-h100" and row["SkuPriceId"] == "gpu-h100-committed"
    assert json.loads(row["SkuPriceDetails"]) == {
        "GpuCount": 1, "x_GpuModel": "H100", "x_PricingCategory": "Committed"
    }
    assert row["SubAccountId"] == "k8s://reserved/namespace/team-c"
    assert json.loads(row["Tags"]) == {
        "tenant": "team-c", "workload": "w1", "kind": "training", "usage_class": "gang_wait"
    }
    assert (row["ChargePeriodStart"], row["ChargePeriodEnd"]) == (datetime(2026, 11, 2, 0), datetime(2026, 11, 2, 1))
    assert (row["BillingPeriodStart"], row["BillingPeriodEnd"]) == (datetime(2026, 11, 1), datetime(2026, 12, 1))
    assert row["ChargeFrequency"] == "Usage-Based" and row["InvoiceId"] == "INV-reserved-2026-11"
    assert (row["x_Workload"], row["x_Tenant"], row["x_Resource"], row["x_Borrowed"]) == ("w1", "team-c", "gpu", False)
    assert row["x_IdleReason"] is None and row["x_PreemptedBy"] is None
    # the run's only submission is at 0: hour 0 is steady, hour 1 the drain
    assert row["x_Phase"] == "steady"


def test_commitment_purchase_and_unused_rows(con):
    purchase = record(con, "x_RunId = 'reserved' and ChargeCategory = 'Purchase'")
    assert (purchase["BilledCost"], purchase["EffectiveCost"], purchase["ListCost"]) == (48.0, 0.0, 64.0)
    assert (purchase["PricingQuantity"], purchase["CommitmentDiscountQuantity"]) == (16.0, 16.0)
    assert purchase["ChargeFrequency"] == "Recurring" and purchase["PricingCategory"] == "Standard"
    assert purchase["ConsumedQuantity"] is None and purchase["CommitmentDiscountStatus"] is None
    # the Committed capacity of a SKU is one pooled commitment, spanning its nodes
    assert purchase["ResourceId"] == purchase["CommitmentDiscountId"] == "k8s://reserved/commitment/gpu-h100"
    assert purchase["x_Node"] is None and purchase["x_Phase"] is None
    assert (purchase["SkuId"], purchase["SkuPriceId"]) == ("commitment-gpu-h100", "commitment-gpu-h100-monthly")
    assert (purchase["x_UsageClass"], purchase["x_Tenant"]) == ("commitment_purchase", "__commitment__")
    assert (purchase["ChargePeriodStart"], purchase["ChargePeriodEnd"]) == (
        datetime(2026, 11, 2, 0), datetime(2026, 11, 2, 2)
    )
    # idle on the committed node: the commitment's unused part, consuming nothing
    approx_rows(
        rows(
            con,
            """select ChargePeriodStart, x_IdleReason, CommitmentDiscountStatus, ConsumedQuantity,
                      PricingQuantity, BilledCost, EffectiveCost
               from focus_cost_records where x_RunId = 'reserved' and x_UsageClass = 'idle'
               order by all""",
        ),
        [
            (datetime(2026, 11, 2, 0), "gang_barrier", "Unused", None, 1 / 3, 0.0, 1.0),
            (datetime(2026, 11, 2, 0), "no_demand", "Unused", None, 4.0, 0.0, 12.0),
            (datetime(2026, 11, 2, 1), "no_demand", "Unused", None, 22 / 3, 0.0, 22.0),
        ],
    )
    # the amortization is exact: used + unused effective cost = the purchase
    assert rows(
        con,
        "select sum(EffectiveCost) from focus_cost_records where x_RunId = 'reserved' and ChargeCategory = 'Usage'",
    ) == [(pytest.approx(48.0),)]


def test_standard_and_spot_rows_bill_what_they_cost(con):
    for run_id, category in (("finished-gang", "Standard"), ("fractional", "Dynamic")):
        assert rows(
            con,
            """select distinct PricingCategory, BilledCost = EffectiveCost, CommitmentDiscountId
               from focus_cost_records where x_RunId = ?""",
            [run_id],
        ) == [(category, True, None)]


def test_borrowed_share_and_cluster_queue(con):
    # x_Borrowed marks the queue's GPU-hours above its nominal quota (4) on the workload that
    # borrowed: in hour 0 cq-a holds 8 GPUs for 3000 s, 4 × 3000 s above nominal, all on w2
    # (Kueue admitted it `Borrowing`), none on w1 (admitted within nominal); in hour 1 w2 alone
    # is within its quota
    approx_rows(
        rows(
            con,
            """select x_Workload, x_ClusterQueue, x_Borrowed, sum(PricingQuantity) from focus_cost_records
               where x_RunId = 'kueue' and x_Workload is not null group by all order by all""",
        ),
        [
            ("w1", "cq-a", False, 4.0),
            ("w2", "cq-a", False, 4 * 600 / 3600),
            ("w2", "cq-a", True, 4 * 3000 / 3600),
        ],
    )
    # in all: Kueue's own measure, ∫ max(admitted − nominal, 0)
    assert rows(
        con,
        """select sum(PricingQuantity) from focus_cost_records
           where x_RunId = 'kueue' and x_Borrowed""",
    ) == [(pytest.approx(4 * 3000 / 3600),)]


def test_cpu_and_memory_rows_have_their_own_sku_and_unit(con):
    row = record(con, "x_RunId = 'cpu-memory' and x_Node = 'c1' and x_Resource = 'cpu' and ChargePeriodStart = '2026-11-02 00:00:00'")
    assert (row["PricingUnit"], row["PricingQuantity"], row["EffectiveCost"]) == ("Core-Hours", 16.0, 0.64)
    assert (row["SkuId"], row["SkuMeter"], row["ResourceType"], row["x_GpuModel"]) == (
        "cpu-core", "CPU Usage", "CPU Node", None
    )
    assert json.loads(row["SkuPriceDetails"]) == {"CoreCount": 1, "x_PricingCategory": "Standard"}
    assert (row["x_UsageClass"], row["x_IdleReason"]) == ("idle", "unallocated")


def test_split_layout_columns(split_con):
    columns = [d[0] for d in split_con.execute("select * from focus_cost_records limit 0").description]
    focus = sorted(c.name for c in (*FOCUS_COLUMNS, *SPLIT_COLUMNS))
    assert columns == focus + [c.name for c in CUSTOM_COLUMNS]


def test_split_parts_add_up_to_the_node_hour(split_con):
    parts = rows(
        split_con,
        """select AllocatedResourceId, x_UsageClass, x_IdleReason, PricingQuantity,
                  cast(json_extract(AllocatedMethodDetails, '$.Elements[0].AllocatedRatio') as double),
                  AllocatedMethodId, Tags, AllocatedTags, SubAccountId, ChargeDescription
           from focus_cost_records
           where x_RunId = 'preempted' and ChargePeriodStart = '2026-11-02 00:00:00'
           order by all""",
    )
    origin_tags = '{"zone":"z1","rack":"r1","pricing_category":"Standard"}'
    held_w1, lost_w1 = 2 * 1800 / 3600, 2 * 200 / 3600
    held_w2 = 6 * 1600 / 3600
    # w2 and then w1 wait beside free GPUs they fit as they are
    latency = (6 * 10 + 2 * 1600) / 3600
    no_demand = 8 - held_w1 - lost_w1 - held_w2 - latency
    expected = [
        ("k8s://preempted/workload/w1", "lost_to_preemption", None, lost_w1),
        ("k8s://preempted/workload/w1", "productive", None, held_w1),
        ("k8s://preempted/workload/w2", "productive", None, held_w2),
        # the unallocated remainder, by cause
        (None, "idle", "no_demand", no_demand),
        (None, "idle", "scheduling_latency", latency),
    ]
    approx_rows(
        [p[:4] + (p[4],) for p in parts],
        [e + (e[3] / 8.0,) for e in expected],
    )
    for part in parts:
        assert part[5] == "gpu-request-hours"
        assert (part[6], part[8], part[9]) == (origin_tags, "k8s://preempted/cluster", "GPU-Hours on n1")
        assert (part[7] is None) == (part[0] is None)
    assert json.loads(parts[0][7]) == {
        "tenant": "team-a", "workload": "w1", "kind": "training", "usage_class": "lost_to_preemption"
    }


def test_both_layouts_cost_the_same(con, split_con):
    query = """select x_RunId, x_Resource, ChargeCategory, round(sum(EffectiveCost), 9),
                      round(sum(BilledCost), 9), round(sum(PricingQuantity), 9)
               from focus_cost_records group by all order by all"""
    assert rows(con, query) == rows(split_con, query)


def test_both_layouts_pass_the_row_checks_and_audits(built, built_split):
    assert validate_db(built.db) == []
    assert validate_db(built_split.db) == []


@pytest.mark.parametrize("layout", ["1.2", "1.3"])
def test_export_is_partitioned_utc_and_names_its_schema(built, built_split, layout):
    export = (built if layout == "1.2" else built_split).export
    metadata = json.loads((export / "focus_metadata.json").read_text())
    schema = metadata["Schema"][0]
    assert metadata["DataGenerator"]["DataGenerator"] == "gpu-finops"
    assert metadata["DataGenerator"]["DataGeneratorVersion"]
    # the code that replayed each run, from its run.json (these hand-written runs record none)
    assert metadata["DataGenerator"]["x_RunBuilds"] == [
        {"version": None, "scheduler": None, "commit": None, "runs": sorted(built.run_ids)}
    ]
    assert schema["FocusVersion"] == layout
    # the runs' end, not the wall clock: a rebuild writes the same metadata
    assert schema["CreationDate"] == "2026-11-02T12:00:00Z"
    definitions = {d["ColumnName"]: d for d in schema["ColumnDefinition"]}
    assert len(definitions) == (73 if layout == "1.2" else 80)
    assert definitions["BilledCost"] == {"ColumnName": "BilledCost", "DataType": "Decimal", "NumericPrecision": 53}
    assert definitions["Tags"]["ProviderTagPrefixes"] == []
    if layout == "1.3":  # the metadata objects FOCUS 1.3 added
        instance = metadata["DatasetInstance"][0]
        assert instance["FocusDatasetId"] == "CostAndUsage"
        assert metadata["Recency"][0] == {
            "DatasetInstanceId": instance["DatasetInstanceId"],
            "TimeSectors": [{"TimeSectorStart": "2026-11-02T00:00:00Z",
                             "TimeSectorEnd": "2026-11-02T12:00:00Z", "TimeSectorComplete": True}],
        }
    else:
        assert "DatasetInstance" not in metadata
    files = sorted(p.relative_to(export).as_posix() for p in export.rglob("*.parquet"))
    assert files == ["focus_cost_records/billing_period=2026-11/charge_date=2026-11-02/data_0.parquet"]
    parquet = pq.ParquetFile(export / files[0])
    assert parquet.schema_arrow.field("ChargePeriodStart").type.tz == "UTC"
    assert parquet.metadata.metadata[b"focus_schema_id"].decode() == schema["SchemaId"]
    # any engine reads the partitions back: pyarrow's dataset reader here
    dataset = ds.dataset(export / "focus_cost_records", format="parquet", partitioning="hive")
    table = dataset.to_table(columns=["x_RunId", "EffectiveCost", "billing_period"])
    assert set(table.column("billing_period").to_pylist()) == {"2026-11"}
    assert sum(table.column("EffectiveCost").to_pylist()) == pytest.approx(
        duckdb.connect(str((built if layout == "1.2" else built_split).db), read_only=True)
        .execute("select sum(EffectiveCost) from focus_cost_records").fetchone()[0]
    )


@contextmanager
def _model_beside_its_table(database: Path, tmp_path: Path, split: bool) -> Iterator[tuple[duckdb.DuckDBPyConnection, str]]:
    """A copy of a built database with the build's macros, and the FOCUS model's SQL body."""
    from pipeline.runner import MODELS, create_macros

    copy = tmp_path / "copy.duckdb"
    shutil.copy(database, copy)
    connection = duckdb.connect(str(copy))
    try:
        create_macros(connection, focus_split=split)
        yield connection, next(m for m in MODELS if m.name == "focus_cost_records").sql()
    finally:
        connection.close()


@pytest.mark.parametrize("layout", ["1.2", "1.3"])
def test_constant_columns_hold_the_models_own_values(layout, built, built_split, tmp_path):
    """The columns stored as virtual generated columns (never written per row) read exactly
    what the SQL model computes for every row, in both layouts."""
    from pipeline.focus.columns import CONSTANT_COLUMNS, table_columns

    split = layout == "1.3"
    with _model_beside_its_table((built_split if split else built).db, tmp_path, split) as (connection, body):
        present = {c.name for c in table_columns(split)}
        checked = [name for name in CONSTANT_COLUMNS if name in present]
        assert len(checked) >= 14
        for name in checked:
            computed = connection.execute(f'select distinct "{name}" from ({body})').fetchall()
            stored = connection.execute(f'select distinct "{name}" from focus_cost_records').fetchall()
            assert computed == stored == [(CONSTANT_COLUMNS[name],)], name


@pytest.mark.parametrize("layout", ["1.2", "1.3"])
def test_derived_columns_hold_the_models_own_values(layout, built, built_split, tmp_path):
    """The columns derived from a row's stored columns (virtual generated columns, never
    written) read what the SQL model computes, row for row, in both layouts."""
    from pipeline.focus.columns import derived_columns, table_columns, virtual_columns

    split = layout == "1.3"
    with _model_beside_its_table((built_split if split else built).db, tmp_path, split) as (connection, body):
        present = [c.name for c in table_columns(split)]
        stored = ", ".join(f'"{name}"' for name in present if name not in virtual_columns(split))
        derived = [name for name in derived_columns(split) if name in present]
        assert len(derived) >= (29 if split else 26)
        rows = connection.execute("select count(*) from focus_cost_records").fetchone()[0]
        assert rows > 100
        for name in derived:
            model_rows = f'select {stored}, "{name}" from ({body})'
            table_rows = f'select {stored}, "{name}" from focus_cost_records'
            differing = [connection.execute(f"select count(*) from ({a} except all {b})").fetchone()[0]
                         for a, b in ((model_rows, table_rows), (table_rows, model_rows))]
            assert differing == [0, 0], name

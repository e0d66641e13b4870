"""A GPU split into DRA partitions (MIG slices drawing on its counter set): the rest of the split
GPU is idle for `partition_fragmentation`, its own cause, and each slice is priced as its share
(docs/dra.md, docs/cost-model.md §3.1)."""

from __future__ import annotations

import json

import pytest


def test_the_rest_of_a_split_gpu_is_partition_fragmentation(con):
    rows = con.execute("""select x_IdleReason, sum(PricingQuantity) from focus_cost_records
                          where x_RunId = 'mig' and x_UsageClass = 'idle' and x_Resource = 'gpu'
                          group by 1 order by 1""").fetchall()
    causes = dict(rows)
    assert causes["partition_fragmentation"] == pytest.approx(0.858)  # the first hour's rest of gpu-0
    assert "shared_device_slack" not in causes  # the same GPUs on a node without partitions would be slack
    assert causes["no_demand"] == pytest.approx(1.0)  # the second hour: nobody asks


def test_the_same_holding_without_devices_is_shared_device_slack(con):
    """The fractional scenario (a T4 shared by 0.25 + 0.5) has no devices: its slack stays slack."""
    causes = dict(con.execute("""select x_IdleReason, sum(PricingQuantity) from focus_cost_records
                                 where x_RunId = 'fractional' and x_UsageClass = 'idle' and x_Resource = 'gpu'
                                 group by 1""").fetchall())
    assert "partition_fragmentation" not in causes and causes["shared_device_slack"] == pytest.approx(0.25)


def test_a_slice_is_priced_as_its_share_of_the_gpu(con):
    quantity, list_cost, price = con.execute("""
        select sum(ConsumedQuantity), sum(ListCost), max(ListUnitPrice) from focus_cost_records
        where x_RunId = 'mig' and x_Workload = 'w1' and x_Resource = 'gpu'""").fetchone()
    assert quantity == pytest.approx(0.142) and list_cost == pytest.approx(0.142 * price)


def test_a_slices_records_name_its_mig_profile_under_their_own_sku_price(con):
    """FOCUS: SkuPriceDetails are shared by every row of a SkuPriceId, so the slice's GPU rows
    have their own SkuPriceId under the GPU's SkuId, whose details name the profile and share."""
    rows = con.execute("""select distinct SkuId, SkuPriceId, SkuPriceDetails from focus_cost_records
                          where x_RunId = 'mig' and x_Resource = 'gpu'
                          order by x_Workload nulls last""").fetchall()
    (sku, slice_price_id, details), (idle_sku, idle_price_id, idle_details) = rows
    assert sku == idle_sku and slice_price_id == idle_price_id + "-1g-10gb-142"
    assert json.loads(details) == json.loads(idle_details) | {"x_MigProfile": "1g.10gb", "x_GpuShare": 0.142}


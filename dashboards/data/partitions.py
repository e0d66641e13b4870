"""GPU partitions through DRA: what the GPUs a DRA driver publishes cost, per MIG profile (or
whole GPU, capacity share), beside the idle rest of GPUs split into partitions (docs/dra.md).
Read from `fct_device_profile_cost`, which is empty for a run without ``--dra``; these only
filter and add up its rows."""

from __future__ import annotations

import duckdb
import pandas as pd

from dashboards.data.core import Filters, _df, table_columns

DEVICE_PROFILE_COLUMNS = ["gpu_model", "device_profile", "usage", "gpu_share", "gpu_hours",
                          "list_cost", "effective_cost"]
FRAGMENTATION_LABEL = "partition fragmentation"  # the idle rest of split GPUs, as a bar of its own


def device_profile_cost(con: duckdb.DuckDBPyConnection, filters: Filters) -> pd.DataFrame:
    """Per GPU model and device profile: the GPU-hours and cost of the workloads on those
    devices (usage ``workload``), and per GPU model the idle rest of its split GPUs (usage
    ``partition_fragmentation``, device_profile ``partition fragmentation``). Honours the date
    and GPU model filters; not the team filter (idle capacity belongs to no team). Empty for a
    run without DRA devices, or a database built before the mart."""
    if not table_columns(con, "fct_device_profile_cost"):
        return pd.DataFrame({column: [] for column in DEVICE_PROFILE_COLUMNS})
    return _df(
        con,
        f"""
        SELECT p.gpu_model,
               coalesce(p.device_profile, '{FRAGMENTATION_LABEL}') AS device_profile,
               p.usage,
               any_value(p.gpu_share) AS gpu_share,
               sum(p.gpu_hours) AS gpu_hours,
               sum(p.list_cost) AS list_cost,
               sum(p.effective_cost) AS effective_cost
        FROM fct_device_profile_cost p
        WHERE p.run_id = $run_id
          AND ($ts_from::TIMESTAMP IS NULL OR p.charge_period_start >= $ts_from::TIMESTAMP)
          AND ($ts_to::TIMESTAMP IS NULL OR p.charge_period_start < $ts_to::TIMESTAMP)
          AND (len($gpu_models::VARCHAR[]) = 0 OR list_contains($gpu_models::VARCHAR[], p.gpu_model))
        GROUP BY ALL
        ORDER BY p.usage DESC, effective_cost DESC, device_profile, p.gpu_model
        """,
        filters.params(),
    )

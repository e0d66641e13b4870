"""Trace inputs: the generic schema, the cluster, pre-replay checks and rejected rows."""

from scheduler.trace.checks import check_against_cluster, write_rejected_csv
from scheduler.trace.cluster import cluster_to_arrow, read_cluster, workloads_to_arrow
from scheduler.trace.generic import RejectedRow, TraceLoad, read_generic_trace

__all__ = [
    "RejectedRow",
    "TraceLoad",
    "check_against_cluster",
    "cluster_to_arrow",
    "read_cluster",
    "read_generic_trace",
    "workloads_to_arrow",
    "write_rejected_csv",
]

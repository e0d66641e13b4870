"""Frozen value types: what a workload asks for and what a cluster offers."""

from scheduler.model.cluster import Cluster, Node
from scheduler.model.workload import Workload

__all__ = ["Cluster", "Node", "Workload"]

"""Cluster inputs: a node table (CSV or Parquet) or a TOML file of node pools.

Node table, one row per node (DESIGN.md section 4.2b)::

    node, gpu_model, gpus, cpu_milli, memory_mib, zone, block, rack, pricing_category, labels

``node``, ``gpu_model`` and ``gpus`` are required; ``cpu_milli`` and ``memory_mib`` default to
0 (not modelled: no CPU or memory constraint); ``zone``, ``block``, ``rack`` are optional
topology labels; ``pricing_category`` is Standard (default), Committed or Dynamic. Node names
must be unique. A node may have 0 GPUs (then ``gpu_model`` may be empty). ``labels`` (optional)
gives the node's other Kubernetes labels as ``key=value`` pairs separated by ``;`` or ``,``
(``karpenter.sh/capacity-type=spot;pool=training``): a Kueue ResourceFlavor's nodeLabels,
and a Topology's levels, select nodes by them. The columns above are labels already
(`scheduler.model.cluster.WELL_KNOWN_LABELS`: ``nvidia.com/gpu.product``,
``topology.kubernetes.io/zone``, ``gpu-finops/block``, ``gpu-finops/rack``,
``kubernetes.io/hostname``, ``gpu-finops/pricing-category``); ``labels`` may not repeat them.

TOML of node pools: each ``[[pool]]`` table expands to ``count`` identical nodes::

    [[pool]]
    name_prefix = "h100"        # nodes h100-000, h100-001, ... (required)
    count = 16                  # number of nodes (required, >= 1)
    gpu_model = "H100"          # required when gpus > 0
    gpus = 8                    # GPUs per node (required, >= 0)
    cpu_milli = 192000          # optional, default 0 (not modelled)
    memory_mib = 2097152        # optional, default 0 (not modelled)
    zone = "zone-a"             # optional
    blocks = 2                  # optional: N blocks named <prefix>-b0.. or a list of names,
                                #   or block = "name" for one block
    racks = 4                   # optional: N racks named <prefix>-r00.. or a list of names,
                                #   or rack = "name" for one rack
    pricing_category = "Standard"  # optional: Standard, Committed or Dynamic
    labels = { "karpenter.sh/capacity-type" = "spot" }  # optional: other node labels

Nodes fill racks in order (the first ``count / racks`` nodes in the first rack, and so on)
and racks fill blocks the same way, so a rack never spans two blocks. Unknown keys are an
error (a typo would otherwise change the cluster silently).

Errors raise `InputError` naming the file, the row (tables) or ``pool[i].key`` (TOML), and
the field. Values must fit the run directory's columns: at most `MAX_NODES` nodes, a node's
``gpus`` a 32-bit integer, CPU and memory at most `MAX_NODE_RESOURCE`; text fields hold text
(a TOML list or table there is an error, not a name, and so is a control character). A node
table column that looks like a known one (``pricing_categroy``) gives a warning.
"""

from __future__ import annotations

import math
import reprlib
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from scheduler.errors import InputError
from scheduler.eventlog.columns import arrow_table
from scheduler.eventlog.schema import CLUSTER_SCHEMA, WORKLOAD_SCHEMA
from scheduler.eventlog.text import parse_toml
from scheduler.model.cluster import PRICING_CATEGORIES, WELL_KNOWN_LABELS, Cluster, Node
from scheduler.model.workload import Workload
from scheduler.trace.io import (
    ROW_PROBLEM,
    control_character_problem,
    header_typos,
    read_table_rows,
    read_utf8,
)

REQUIRED_COLUMNS = ("node", "gpu_model", "gpus")
COLUMNS = (*REQUIRED_COLUMNS, "cpu_milli", "memory_mib", "zone", "block", "rack", "pricing_category", "labels")
MAX_NODES = 100_000
"""Nodes in one cluster: above the largest Kubernetes clusters, and a bound on the replay."""
MAX_NODE_GPUS = 2**31 - 1  # cluster.parquet stores a node's GPUs as a 32-bit integer
MAX_NODE_RESOURCE = 2**53  # CPU millicores or MiB: still exact once read as a number
POOL_KEYS = frozenset(
    {
        "name_prefix", "count", "gpu_model", "gpus", "cpu_milli", "memory_mib", "zone",
        "block", "blocks", "rack", "racks", "pricing_category", "labels",
    }
)


def read_cluster(path: Path, warnings: list[str] | None = None) -> Cluster:
    """Read a cluster from a node table (CSV/Parquet) or a node-pool TOML file; warnings for
    the console (a misspelt column) are appended to ``warnings``."""
    path = Path(path)
    if path.suffix.lower() == ".toml":
        try:
            document = parse_toml(read_utf8(path))
        except tomllib.TOMLDecodeError as exc:  # deep nesting and huge integers too (parse_toml)
            raise InputError(path, f"not valid TOML: {exc}") from None
        pools = document.get("pool")
        if not isinstance(pools, list) or not pools:
            raise InputError(path, "expected one or more [[pool]] tables", field="pool")
        return Cluster(tuple(expand_pools(pools, source=path)))
    return Cluster(tuple(_read_node_table(path, warnings)))


def _read_node_table(path: Path, warnings: list[str] | None) -> list[Node]:
    columns, rows = read_table_rows(path)
    for column in REQUIRED_COLUMNS:
        if column not in columns:
            raise InputError(path, "required column missing", row=1, field=column)
    if warnings is not None:
        warnings.extend(header_typos(columns, COLUMNS, path, "node table"))
    nodes: list[Node] = []
    first_row: dict[str, int] = {}
    for row_number, record in rows:
        if ROW_PROBLEM in record:
            raise InputError(path, record[ROW_PROBLEM], row=row_number)
        node = _node_from_values(record, source=path, row=row_number)
        if node.name in first_row:
            raise InputError(
                path,
                f"duplicate node name {node.name!r} (first on row {first_row[node.name]})",
                row=row_number,
                field="node",
            )
        first_row[node.name] = row_number
        nodes.append(node)
        if len(nodes) > MAX_NODES:
            raise InputError(path, f"more than {MAX_NODES:,} nodes: not a cluster this tool can replay", row=row_number)
    if not nodes:
        raise InputError(path, "no nodes: the cluster needs at least one row", row=2)
    return nodes


def _node_from_values(
    record: Mapping[str, Any], *, source: Path, row: int | None, prefix: str = ""
) -> Node:
    """Validate one node's values; ``prefix`` names a TOML pool in error fields."""

    def fail(field: str, message: str) -> InputError:
        return InputError(source, message, row=row, field=prefix + field)

    def text(field: str) -> str | None:
        value = record.get(field)
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        if isinstance(value, list | tuple | dict | bytes):
            raise fail(field, f"must be text, got {type(value).__name__} {reprlib.repr(value)}")
        value = str(value).strip()
        problem = control_character_problem(value)
        if problem is not None:
            raise fail(field, problem)
        return value or None

    def whole(field: str, default: int | None) -> int:
        value = record.get(field)
        if isinstance(value, str):
            value = value.strip()
        if value is None or value == "":
            if default is None:
                raise fail(field, "missing: a whole number is required")
            return default
        try:
            number = float(value)
        except (TypeError, ValueError, OverflowError):
            raise fail(field, f"not a number: {reprlib.repr(value)}") from None
        if isinstance(value, bool) or not math.isfinite(number) or not number.is_integer():
            raise fail(field, f"must be a whole number, got {reprlib.repr(value)}")
        if number < 0:
            raise fail(field, f"must be >= 0, got {int(number)}")
        limit = MAX_NODE_GPUS if field == "gpus" else MAX_NODE_RESOURCE
        if number > limit:
            raise fail(field, f"must be at most {limit:,}, got {reprlib.repr(value)}")
        return int(number)

    name = text("node")
    if name is None:
        raise fail("node", "missing: every node needs a name")
    gpus = whole("gpus", None)
    model = text("gpu_model") or ""
    if gpus > 0 and not model:
        raise fail("gpu_model", f"missing: node {name!r} has {gpus} GPUs of no model")
    category = text("pricing_category") or "Standard"
    if category not in PRICING_CATEGORIES:
        raise fail(
            "pricing_category", f"must be one of {', '.join(PRICING_CATEGORIES)}, got {category!r}"
        )
    raw_labels = record.get("labels")
    if isinstance(raw_labels, Mapping):  # a TOML pool's table
        pairs = [(str(k).strip(), v) for k, v in raw_labels.items()]
    else:
        pairs = _label_pairs(text("labels") or "", fail)
    return Node(
        name=name,
        gpu_model=model,
        gpus=gpus,
        cpu_milli=whole("cpu_milli", 0),
        memory_mib=whole("memory_mib", 0),
        zone=text("zone"),
        block=text("block"),
        rack=text("rack"),
        pricing_category=category,
        labels=_checked_labels(pairs, fail),
    )


def _label_pairs(value: str, fail: Callable[[str, str], InputError]) -> list[tuple[str, object]]:
    """``key=value`` pairs separated by ``;`` or ``,`` (empty parts are skipped)."""
    pairs: list[tuple[str, object]] = []
    for part in value.replace(",", ";").split(";"):
        if not part.strip():
            continue
        key, equals, label = part.partition("=")
        if not equals:
            raise fail("labels", f"expected key=value, got {reprlib.repr(part.strip())}")
        pairs.append((key.strip(), label.strip()))
    return pairs


def _checked_labels(pairs: list[tuple[str, object]], fail: Callable[[str, str], InputError]) -> tuple[tuple[str, str], ...]:
    labels: dict[str, str] = {}
    for key, value in pairs:
        if not key or any(c in key for c in " =;,") or control_character_problem(key) is not None:
            raise fail("labels", f"not a label key: {reprlib.repr(key)}")
        if key in WELL_KNOWN_LABELS:
            column = "node" if WELL_KNOWN_LABELS[key] == "name" else WELL_KNOWN_LABELS[key]
            raise fail("labels", f"label {key} is the node's {column}: give it there")
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise fail(f"labels.{key}", f"must be text, got {type(value).__name__}")
        text_value = str(value).strip()
        if any(c in text_value for c in " =;,") or control_character_problem(text_value) is not None:
            raise fail(f"labels.{key}", f"not a label value: {reprlib.repr(text_value)}")
        if key in labels:
            raise fail("labels", f"label {key} given twice")
        labels[key] = text_value
    return tuple(sorted(labels.items()))


def expand_pools(pools: Sequence[Mapping[str, Any]], *, source: Path | str) -> list[Node]:
    """Expand ``[[pool]]`` tables (format in the module docstring) into nodes, in order."""
    source = Path(source)
    nodes: list[Node] = []
    seen: set[str] = set()
    for index, pool in enumerate(pools):
        prefix = f"pool[{index}]."
        if not isinstance(pool, Mapping):
            raise InputError(source, "must be a table", field=f"pool[{index}]")
        unknown = sorted(set(pool) - POOL_KEYS)
        if unknown:
            raise InputError(
                source,
                f"unknown key (known: {', '.join(sorted(POOL_KEYS))})",
                field=prefix + unknown[0],
            )
        name_prefix = pool.get("name_prefix")
        if not isinstance(name_prefix, str) or not name_prefix.strip():
            raise InputError(source, "missing: a text name prefix", field=prefix + "name_prefix")
        count = pool.get("count")
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            raise InputError(source, f"must be a whole number >= 1, got {reprlib.repr(count)}", field=prefix + "count")
        if len(nodes) + count > MAX_NODES:
            raise InputError(
                source, f"{len(nodes) + count:,} nodes in all: at most {MAX_NODES:,}", field=prefix + "count"
            )
        racks = _labels(pool, "rack", "racks", f"{name_prefix}-r", 2, count, source, prefix)
        blocks = _labels(pool, "block", "blocks", f"{name_prefix}-b", 1, len(racks) or count, source, prefix)
        width = max(3, len(str(count - 1)))
        for position in range(count):
            rack_index = position * len(racks) // count if racks else 0
            if blocks:
                # Blocks group racks when there are racks, nodes otherwise.
                unit, units = (rack_index, len(racks)) if racks else (position, count)
                block: str | None = blocks[unit * len(blocks) // units]
            else:
                block = None
            values = {key: pool.get(key) for key in ("gpu_model", "gpus", "cpu_milli", "memory_mib", "zone", "pricing_category",
                                                     "labels")}
            values["node"] = f"{name_prefix}-{position:0{width}d}"
            values["rack"] = racks[rack_index] if racks else None
            values["block"] = block
            node = _node_from_values(values, source=source, row=None, prefix=prefix)
            if node.name in seen:
                raise InputError(source, f"duplicate node name {node.name!r}", field=prefix + "name_prefix")
            seen.add(node.name)
            nodes.append(node)
    return nodes


def _labels(
    pool: Mapping[str, Any], single: str, plural: str, stem: str, digits: int, limit: int,
    source: Path, prefix: str,
) -> list[str]:
    """Label names from ``rack = "x"``, ``racks = N`` or ``racks = ["a", "b"]``."""
    if single in pool and plural in pool:
        raise InputError(source, f"give either {single} or {plural}, not both", field=prefix + plural)
    if single in pool:
        value = pool[single]
        if not isinstance(value, str) or not value.strip():
            raise InputError(source, f"must be a name, got {value!r}", field=prefix + single)
        return [value.strip()]
    value = pool.get(plural)
    if value is None:
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= limit:
            raise InputError(source, f"must be between 1 and {limit}, got {value}", field=prefix + plural)
        return [f"{stem}{i:0{digits}d}" for i in range(value)]
    if isinstance(value, list) and value and all(isinstance(v, str) and v.strip() for v in value):
        if len(value) > limit:
            raise InputError(source, f"{len(value)} names for {limit} places", field=prefix + plural)
        return [v.strip() for v in value]
    raise InputError(source, f"must be a number or a list of names, got {value!r}", field=prefix + plural)


# ------------------------------------------------------------------------------- Arrow


def cluster_to_arrow(cluster: Cluster) -> pa.Table:
    """The cluster as a table with exactly `CLUSTER_SCHEMA` (for ``cluster.parquet``)."""
    nodes = cluster.nodes
    return arrow_table(
        {
            "node": [n.name for n in nodes],
            "gpu_model": [n.gpu_model or None for n in nodes],
            "gpus": [n.gpus for n in nodes],
            "cpu_milli": [n.cpu_milli for n in nodes],
            "memory_mib": [n.memory_mib for n in nodes],
            "zone": [n.zone for n in nodes],
            "block": [n.block for n in nodes],
            "rack": [n.rack for n in nodes],
            "pricing_category": [n.pricing_category for n in nodes],
        },
        schema=CLUSTER_SCHEMA,
    )


def workloads_to_arrow(workloads: Iterable[Workload]) -> pa.Table:
    """Workloads as a table with exactly `WORKLOAD_SCHEMA` (for ``workloads.parquet``).

    ``gpu_model`` is the ``A|B`` label of the allowed models, or null for any model.
    """
    rows = list(workloads)
    return arrow_table(
        {
            "workload_id": [w.workload_id for w in rows],
            "submit_time_s": [w.submit_time_s for w in rows],
            "duration_s": [w.duration_s for w in rows],
            "pods": [w.pods for w in rows],
            "min_count": [w.min_count for w in rows],
            "gpus_per_pod": [w.gpus_per_pod for w in rows],
            "gpu_model": [w.gpu_model_label for w in rows],
            "cpu_milli_per_pod": [w.cpu_milli_per_pod for w in rows],
            "memory_mib_per_pod": [w.memory_mib_per_pod for w in rows],
            "tenant": [w.tenant for w in rows],
            "queue": [w.queue for w in rows],
            "priority": [w.priority for w in rows],
            "checkpoint_interval_s": [w.checkpoint_interval_s for w in rows],
            "topology_required": [w.topology_required for w in rows],
            "topology_preferred": [w.topology_preferred for w in rows],
            "parent_group": [w.parent_group for w in rows],
            "kind": [w.kind for w in rows],
            "gpu_utilization": [w.gpu_utilization for w in rows],
            "labels": [list(w.labels) if w.labels else None for w in rows],
        },
        schema=WORKLOAD_SCHEMA,
    )

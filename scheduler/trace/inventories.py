"""GPU node inventories of public traces, read as a `Cluster`.

Three formats besides the project's own node table (`scheduler.trace.cluster`):

- **openb node list** (Alibaba cluster-trace-gpu-v2023, ``openb_node_list_*.csv``),
  header ``sn,cpu_milli,memory_mib,gpu,model``: ``sn`` → node, ``model`` → gpu_model,
  ``gpu`` → gpus, ``cpu_milli`` and ``memory_mib`` as they are.
- **PAI 2020 machine spec** (Alibaba cluster-trace-gpu-v2020, ``pai_machine_spec.csv``),
  no header row (or the header ``machine,gpu_type,cap_cpu,cap_mem,cap_gpu``):
  ``machine`` → node, ``gpu_type`` → gpu_model (``CPU`` means no GPU: model empty),
  ``cap_gpu`` → gpus, ``cap_cpu`` cores × 1000 → cpu_milli, ``cap_mem`` GB × 1024 → memory_mib.
- **2026 spot-GPU node list** (Alibaba cluster-trace-v2026-spot-gpu, ``node_info_df.csv``),
  header ``gpu_model,gpu_capacity_num,cpu_num,node_name``: ``spot-<node_name>`` → node,
  ``gpu_model`` as is, ``gpu_capacity_num`` → gpus, ``cpu_num`` vCPUs × 1000 → cpu_milli;
  no memory column (0: not modelled).

`read_any_cluster(path)` detects the format from the header (or, for the headerless PAI
file, from the shape of the first row) and falls back to `read_cluster` for the project's
node table and node-pool TOML. A row that cannot be read raises `InputError` naming the
file, the row and the field: a cluster is all or nothing, unlike a trace.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Iterator
from pathlib import Path

from scheduler.errors import InputError
from scheduler.model.cluster import Cluster, Node
from scheduler.trace.cluster import read_cluster
from scheduler.trace.io import control_character_problem, read_utf8

OPENB_NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
PAI_MACHINE_COLUMNS = ("machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu")
SPOT_NODE_COLUMNS = ("gpu_model", "gpu_capacity_num", "cpu_num", "node_name")
PAI_CPU_ONLY = "CPU"
CLUSTER_FORMATS = ("nodes", "openb-nodes", "pai-machines", "spot-nodes")
MAX_WHOLE = 2**31 - 1  # GPUs, cores, GB or millicores of one node: far above any real one


def detect_cluster_format(path: Path) -> str:
    """One of `CLUSTER_FORMATS`: the project's node table or pool TOML is ``nodes``."""
    path = Path(path)
    if path.suffix.lower() == ".toml" or not path.is_file():
        return "nodes"
    header = _first_line(path)
    if header is None:
        return "nodes"
    names = [value.strip() for value in header]
    if all(column in names for column in OPENB_NODE_COLUMNS):
        return "openb-nodes"
    if all(column in names for column in SPOT_NODE_COLUMNS):
        return "spot-nodes"
    if names[: len(PAI_MACHINE_COLUMNS)] == list(PAI_MACHINE_COLUMNS) or _looks_like_pai_row(names):
        return "pai-machines"
    return "nodes"


def read_any_cluster(path: Path, warnings: list[str] | None = None) -> Cluster:
    """A cluster from any known inventory format (see the module docstring); warnings for the
    console (a misspelt column of a node table) are appended to ``warnings``."""
    readers: dict[str, Callable[[Path], Cluster]] = {
        "nodes": lambda p: read_cluster(p, warnings),
        "openb-nodes": read_openb_nodes,
        "pai-machines": read_pai_machines,
        "spot-nodes": read_spot_nodes,
    }
    return readers[detect_cluster_format(path)](Path(path))


def read_openb_nodes(path: Path) -> Cluster:
    nodes: list[tuple[int, Node]] = []
    for row, record in _rows(path, OPENB_NODE_COLUMNS, header=True):
        field = _Field(path, row, record)
        node = Node(
            name=field.text("sn"),
            gpu_model=field.text("model", required=False),
            gpus=field.whole("gpu"),
            cpu_milli=field.whole("cpu_milli"),
            memory_mib=field.whole("memory_mib"),
        )
        nodes.append((row, node))
    return _cluster(path, nodes)


def read_pai_machines(path: Path) -> Cluster:
    has_header = _first_line(path) == list(PAI_MACHINE_COLUMNS)
    nodes: list[tuple[int, Node]] = []
    for row, record in _rows(path, PAI_MACHINE_COLUMNS, header=has_header):
        field = _Field(path, row, record)
        gpu_type = field.text("gpu_type")
        gpus = field.whole("cap_gpu")
        node = Node(
            name=field.text("machine"),
            gpu_model="" if gpu_type == PAI_CPU_ONLY else gpu_type,
            gpus=0 if gpu_type == PAI_CPU_ONLY else gpus,
            cpu_milli=field.whole("cap_cpu") * 1000,
            memory_mib=field.whole("cap_mem") * 1024,
        )
        nodes.append((row, node))
    return _cluster(path, nodes)


def read_spot_nodes(path: Path) -> Cluster:
    nodes: list[tuple[int, Node]] = []
    for row, record in _rows(path, SPOT_NODE_COLUMNS, header=True):
        field = _Field(path, row, record)
        node = Node(
            name=f"spot-{field.text('node_name')}",
            gpu_model=field.text("gpu_model"),
            gpus=field.whole("gpu_capacity_num"),
            cpu_milli=field.whole("cpu_num") * 1000,
        )
        nodes.append((row, node))
    return _cluster(path, nodes)


# ---------------------------------------------------------------------------- helpers


class _Field:
    """Typed access to one row's cells; every failure names file, row and column."""

    def __init__(self, path: Path, row: int, record: dict[str, str]) -> None:
        self.path, self.row, self.record = path, row, record

    def text(self, column: str, *, required: bool = True) -> str:
        value = self.record.get(column, "").strip()
        if required and not value:
            raise InputError(self.path, "missing: a value is required", row=self.row, field=column)
        problem = control_character_problem(value)
        if problem is not None:
            raise InputError(self.path, problem, row=self.row, field=column)
        return value

    def whole(self, column: str) -> int:
        value = self.text(column)
        try:
            number = float(value)
        except ValueError:
            raise InputError(self.path, f"not a number: {value!r}", row=self.row, field=column) from None
        if not math.isfinite(number) or not number.is_integer() or number < 0:
            raise InputError(self.path, f"must be a whole number >= 0, got {value!r}", row=self.row, field=column)
        if number > MAX_WHOLE:  # cluster.parquet holds GPUs as 32-bit integers
            raise InputError(self.path, f"must be at most {MAX_WHOLE:,}, got {value!r}", row=self.row, field=column)
        return int(number)


def _first_line(path: Path) -> list[str] | None:
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return next(csv.reader(handle), None)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None


def _looks_like_pai_row(values: list[str]) -> bool:
    """A headerless PAI row: id, GPU type, then three whole numbers."""
    if len(values) != len(PAI_MACHINE_COLUMNS):
        return False
    return bool(values[0]) and not values[1].isdigit() and all(v.strip().isdigit() for v in values[2:])


def _rows(path: Path, columns: tuple[str, ...], *, header: bool) -> Iterator[tuple[int, dict[str, str]]]:
    reader = csv.reader(io.StringIO(read_utf8(path), newline=""))
    names = list(columns)
    row_number = 0
    try:
        if header:
            row_number = 1
            first = next(reader, None)
            if first is None:
                raise InputError(path, "empty file: expected a header row", row=1)
            names = [value.strip() for value in first]
            for column in columns:
                if column not in names:
                    raise InputError(path, "required column missing", row=1, field=column)
        for values in reader:
            row_number += 1
            if not values or all(not v.strip() for v in values):
                continue
            if len(values) > len(names):
                raise InputError(path, f"{len(values)} values but {len(names)} columns", row=row_number)
            yield row_number, dict(zip(names, values + [""] * (len(names) - len(values)), strict=True))
    except csv.Error as exc:
        raise InputError(path, f"malformed CSV: {exc}", row=row_number + 1) from None


def _cluster(path: Path, rows: list[tuple[int, Node]]) -> Cluster:
    if not rows:
        raise InputError(path, "no nodes: the cluster needs at least one row")
    first_row: dict[str, int] = {}
    for row, node in rows:
        if node.name in first_row:
            raise InputError(path, f"duplicate node name {node.name!r} (first on row {first_row[node.name]})", row=row)
        if node.gpus > 0 and not node.gpu_model:
            raise InputError(path, f"node {node.name!r} has {node.gpus} GPUs of no model", row=row)
        first_row[node.name] = row
    return Cluster(tuple(node for _, node in rows))

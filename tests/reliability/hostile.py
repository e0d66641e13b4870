"""Hypothesis strategies for broken and hostile input files, one per loader.

Each strategy draws a `HostileFile`: the bytes to write, the file name (its suffix picks the
reader) and, when the file was built row by row, how many data rows it holds, so a test can
check that every one of them is accounted for (accepted + rejected = rows written).

What they draw, on purpose: missing and extra columns, wrong types, NaN and infinite numbers,
negative and zero durations, submit times out of order, duplicate ids, huge gangs, unknown
GPU models, non-UTF-8 bytes, byte-order marks, CSV formula injection (``=cmd|' /C calc'!A0``),
quotes and line breaks inside cells, rows longer or shorter than the header; for YAML,
anchors and aliases (the "billion laughs"), very deep nesting, Python tags, tabs and NUL
bytes; for TOML, wrong types, huge counts and deep nesting; for Parquet, columns of every
Arrow type, nulls, nested lists and maps, timestamps far out of range.
"""

from __future__ import annotations

import csv
import gzip
import io
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from hypothesis import strategies as st

from scheduler.trace.generic import COLUMNS as TRACE_COLUMNS
from scheduler.trace.generic import REQUIRED_COLUMNS as TRACE_REQUIRED

# Text a spreadsheet would run, text that breaks naive parsers, and text that looks like
# numbers, times or paths.
INJECTIONS = (
    "=cmd|' /C calc'!A0", "=HYPERLINK(\"http://x\",\"y\")", "+1+1", "-2+3", "@SUM(A1:A9)",
    "\t=1+1", "\r=1+1", "'; DROP TABLE dim_runs; --", "<script>alert(1)</script>",
    "../../etc/passwd", "$(rm -rf /)",
)
ODD_TEXT = (
    "", " ", "\x00", "a\x00b", "é", "日本語", "😀", "a,b", 'a"b', "a\nb", "a\r\nb", "\ufeff",
    "NaN", "nan", "inf", "-inf", "Infinity", "1e309", "-0", "0x10", "1_000", "١٢", "None",
    "null", "TRUE", "[1, 2]", "{}", "9" * 400, "x" * 2000,
)
TIMES = (
    "2026-11-02T00:00:00Z", "2026-11-02T01:00:00+25:00", "2026-11-01T23:59:59Z",
    "0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59", "2026-02-30T00:00:00", "20261102T010000",
)
GPU_MODELS = ("A100", "H100", "L40S", "TPUv9", "A100|H100", "A100|", "|", "a100", " H100 ")
# Names a terminal would run or a chart renderer choke on (issue 20, item 5).
CONTROL_TEXT = (
    "esc\x1b[31mred", "nul\x00byte", "csi\x9b2J", "title\x1b]0;pwned\x07", "del\x7f", "bell\x07",
    "clear\x1b[2J\x1b[H", "odd\ufffe", "tab\tinside", "<script>alert(1)</script>",
    "[click](javascript:alert(1))", "[/x]", "[bold]loud",
)
# Numbers past every bound: arithmetic on them overflows a float (item 4), and the longest
# integers Python refuses to parse from text (more than 4,300 digits).
HUGE_NUMBERS = ("1e306", "-1e306", "1.7976931348623157e308", "9" * 400, "9" * 5000, "-" + "9" * 4301)
NUMBER_TEXT = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=-1e6, max_value=1e6).map(lambda x: f"{x:.3f}"),
    st.sampled_from(["0", "-1", "1", "8", "0.5", "0.0001", "1.5", "3600", "1e300", "-1e-300"]),
)
CELL = st.one_of(
    NUMBER_TEXT,
    st.sampled_from(INJECTIONS + ODD_TEXT + TIMES + GPU_MODELS + CONTROL_TEXT + HUGE_NUMBERS),
    st.text(max_size=12),
)
# Small ids collide often: duplicates are part of the point.
IDS = st.one_of(st.sampled_from(["w1", "w2", "w3", "=w4", "w 5", ""]), st.text(max_size=8))


@dataclass(frozen=True)
class HostileFile:
    name: str
    data: bytes
    rows: int | None = None  # data rows in the file, when they can be counted (see csv_rows)

    def write(self, folder: Path) -> Path:
        path = folder / self.name
        path.write_bytes(self.data)
        return path

    @property
    def utf8(self) -> bool:
        """The text is UTF-8 (a gzip file's once decompressed)."""
        data = self.data
        if data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError):
                return False
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return False
        return True


def csv_rows(data: bytes, *, skipinitialspace: bool = False) -> int | None:
    """Data rows of a CSV file as Python's csv module splits it (the header excluded, lines
    of blanks skipped, as the readers do); None when the bytes are not UTF-8 text or not CSV.
    This is the reference the loaders' accounting is checked against; gzip is decompressed."""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError):
            return None
    try:
        text = data.decode("utf-8-sig")
        records = list(csv.reader(io.StringIO(text, newline=""), skipinitialspace=skipinitialspace))
    except (UnicodeDecodeError, csv.Error):
        return None
    return sum(1 for values in records[1:] if values and not all(not v.strip() for v in values))


def _csv_bytes(header: list[str], rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


@st.composite
def _encoded(draw, text: str) -> bytes:
    """UTF-8 mostly; sometimes a BOM, Latin-1, a stray invalid byte somewhere, or gzip."""
    how = draw(st.sampled_from(["utf-8", "utf-8", "utf-8", "bom", "latin-1", "stray", "gzip"]))
    if how == "gzip":  # recognised by its magic bytes, whatever the name (mtime 0: reproducible)
        return gzip.compress(draw(_encoded(text)), mtime=0)
    if how == "bom":
        return b"\xef\xbb\xbf" + text.encode("utf-8")
    if how == "latin-1":
        try:
            return text.encode("latin-1")
        except UnicodeEncodeError:
            return text.encode("utf-8")
    data = text.encode("utf-8")
    if how == "stray":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.sampled_from([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x80"])) + data[at:]
    return data


@st.composite
def _header(draw, known: tuple[str, ...], required: tuple[str, ...]) -> list[str]:
    """Known columns, a required one sometimes missing, optional ones sometimes, unknown
    ones added, in any order."""
    keep = [c for c in known if c in required and draw(st.integers(0, 19)) > 0]
    keep += [c for c in known if c not in required and draw(st.booleans())]
    keep += draw(st.lists(st.sampled_from(["extra", "comment", "=cmd", " ", "Workload_ID"]), max_size=2))
    return list(draw(st.permutations(keep)))


@st.composite
def _table(draw, known: tuple[str, ...], required: tuple[str, ...], cell, max_rows: int = 12):
    """(header, rows): a `_header` and rows of any length, some shorter or longer than it."""
    header = draw(_header(known, required))
    width = len(header)
    rows = draw(st.lists(
        st.lists(cell, min_size=max(0, width - 2), max_size=width + 1), max_size=max_rows
    ))
    return header, rows


def _often(plausible, anything=CELL):
    """Three times in four a value plausible for the column, else anything at all."""
    return st.one_of(plausible, plausible, plausible, anything)


def _huge_or(plausible):
    """`_often`, with numbers past every bound among the plausible ones (item 4)."""
    return _often(st.one_of(plausible, st.sampled_from(HUGE_NUMBERS)))


_TRACE_CELLS = {
    "workload_id": _often(st.one_of(IDS, st.sampled_from(CONTROL_TEXT))),
    "submit_time": _huge_or(st.one_of(st.floats(-10, 1e5).map(lambda x: f"{x:.1f}"), st.sampled_from(TIMES))),
    "duration_s": _huge_or(st.sampled_from(["60", "3600", "0", "-5", "nan", "inf", "1e-320", "4e8"])),
    "pods": _huge_or(st.sampled_from(["1", "2", "8", "0", "-1", "1.5", "100001", "1e300", "2147483648"])),
    "min_count": _huge_or(st.sampled_from(["", "1", "2", "0", "9", "1e18"])),
    "gpus_per_pod": _huge_or(st.sampled_from(["1", "8", "0.5", "0.0001", "1.5", "0", "1e300", "1e306"])),
    "gpu_model": _often(st.sampled_from(GPU_MODELS + CONTROL_TEXT[:3])),
    "priority": _huge_or(st.sampled_from(["0", "100", "-5", "2147483648", "1e300", "1.5"])),
    "cpu_milli_per_pod": _huge_or(st.sampled_from(["0", "1000", "-1", "1e30"])),
    "memory_mib_per_pod": _huge_or(st.sampled_from(["0", "4096", "-1", "1e30"])),
    "checkpoint_interval_s": _huge_or(st.sampled_from(["", "600", "0", "-1", "nan", "1e300"])),
    "topology_required": _often(st.sampled_from(["", "rack", "zone", "galaxy"])),
    "parent_min_groups": _huge_or(st.sampled_from(["", "1", "0", "1e9"])),
    "tenant": _often(st.sampled_from(INJECTIONS + CONTROL_TEXT + ("team-a", ""))),
    "queue": _often(st.sampled_from(("", "team-a", "ns/q") + CONTROL_TEXT[:2])),
}


@st.composite
def generic_trace_csv(draw) -> HostileFile:
    header = draw(_header(TRACE_COLUMNS, TRACE_REQUIRED))
    rows = []
    for _ in range(draw(st.integers(0, 12))):
        row = [draw(_TRACE_CELLS.get(column, CELL)) for column in header]
        if draw(st.integers(0, 9)) == 0:
            row = row[: draw(st.integers(0, len(row)))] if draw(st.booleans()) else row + ["surplus"]
        rows.append(row)
    if draw(st.integers(0, 5)) == 0:  # a column one typo away from a known one
        header = [draw(typo_of(name)) if name in TRACE_COLUMNS and len(name) >= 6 and i == 0 else name
                  for i, name in enumerate(header)]
    data = draw(_encoded(_csv_bytes(header, rows)))
    return HostileFile("trace.csv", data, csv_rows(data))


# Arrow values of every kind the trace reader may meet in a Parquet file.
_ARROW_COLUMNS = st.sampled_from([
    ("string", pa.string(), st.one_of(st.none(), CELL)),
    ("int64", pa.int64(), st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))),
    ("float64", pa.float64(), st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True))),
    ("bool", pa.bool_(), st.one_of(st.none(), st.booleans())),
    ("binary", pa.binary(), st.one_of(st.none(), st.binary(max_size=6))),
    ("list", pa.list_(pa.int64()), st.one_of(st.none(), st.lists(st.integers(0, 9), max_size=3))),
    ("map", pa.struct([("a", pa.int64())]), st.one_of(st.none(), st.fixed_dictionaries({"a": st.integers(0, 9)}))),
    ("timestamp", pa.timestamp("s"), st.one_of(st.none(), st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31)))),
    ("timestamp-tz", pa.timestamp("us", tz="Asia/Tokyo"), st.one_of(st.none(), st.integers(-(2**62), 2**62))),
    ("date", pa.date32(), st.one_of(st.none(), st.dates())),
    ("decimal", pa.decimal128(10, 3), st.one_of(st.none(), st.decimals(-10**6, 10**6, places=3))),
    ("duration", pa.duration("s"), st.one_of(st.none(), st.integers(-(2**40), 2**40))),
])


@st.composite
def generic_trace_parquet(draw) -> HostileFile:
    header = list(dict.fromkeys(draw(_header(TRACE_COLUMNS, TRACE_REQUIRED))))  # Arrow tables may not repeat a name here
    count = draw(st.integers(0, 10))
    arrays, names = [], []
    for column in header:
        _kind, arrow_type, values = draw(_ARROW_COLUMNS)
        if column in ("workload_id", "duration_s", "gpus_per_pod") and draw(st.booleans()):
            arrow_type, values = pa.string(), _TRACE_CELLS[column]  # often plausible
        drawn = draw(st.lists(values, min_size=count, max_size=count))
        arrays.append(pa.array(drawn, type=arrow_type))
        names.append(column)
    table = pa.Table.from_arrays(arrays, names=names) if names else pa.table({"x": pa.array([None] * count)})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    data = sink.getvalue()
    if draw(st.integers(0, 9)) == 0:  # a corrupt file: cut short or scribbled on
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] if draw(st.booleans()) else data[:cut] + b"\x00" * 16 + data[cut + 16:]
        return HostileFile("trace.parquet", data, None)
    return HostileFile("trace.parquet", data, table.num_rows)


OPENB_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos",
                 "pod_phase", "creation_time", "deletion_time", "scheduled_time")
AAIC_COLUMNS = ("id", "user", "group", "queue", "nodes", "gpus", "walltime_req", "termcode",
                "time_submit", "time_start", "time_end", "waittime", "walltime")


@st.composite
def _mutated_rows(draw, header: list[str], valid_row) -> list[list[str]]:
    """Rows that start valid (``valid_row`` draws a {column: text}) and get a few cells
    replaced by hostile values, so the adapters' later checks are reached too."""
    rows = []
    for _ in range(draw(st.integers(0, 10))):
        values = draw(valid_row)
        for column in draw(st.lists(st.sampled_from(header), max_size=2)) if header else []:
            values[column] = draw(st.one_of(NUMBER_TEXT, CELL))
        rows.append([values.get(column, draw(CELL)) for column in header])
    return rows


_OPENB_ROW = st.fixed_dictionaries({
    "name": IDS, "cpu_milli": st.sampled_from(["0", "4000", "88000"]),
    "memory_mib": st.sampled_from(["0", "16384"]), "num_gpu": st.sampled_from(["0", "1", "2", "8"]),
    "gpu_milli": st.sampled_from(["0", "250", "1000"]), "gpu_spec": st.sampled_from(GPU_MODELS + ("",)),
    "qos": st.sampled_from(["LS", "BE", "Burstable", "Guaranteed", "", "Gold"]),
    "pod_phase": st.sampled_from(["Running", "Succeeded", "Pending"]),
    "creation_time": st.integers(0, 10**7).map(str), "deletion_time": st.integers(0, 2 * 10**7).map(str),
    "scheduled_time": st.one_of(st.just(""), st.integers(0, 10**7).map(str)),
})
_AAIC_ROW = st.builds(
    lambda job, nodes, gpus, code, submit, wait, run: {
        "id": str(job), "user": "7", "group": "3", "queue": "1", "nodes": str(nodes), "gpus": str(gpus),
        "walltime_req": "3600", "termcode": str(code), "time_submit": str(submit),
        "time_start": str(submit + wait), "time_end": str(submit + wait + run), "waittime": str(wait),
        "walltime": str(run),
    },
    st.integers(0, 30), st.integers(1, 8), st.integers(1, 8), st.integers(0, 4),
    st.integers(1_500_000_000, 1_520_000_000), st.integers(0, 10**5), st.integers(0, 10**5),
)


@st.composite
def openb_trace_csv(draw) -> HostileFile:
    header = draw(_header(OPENB_COLUMNS, OPENB_COLUMNS[:5]))
    rows = draw(_mutated_rows(header, _OPENB_ROW))
    data = draw(_encoded(_csv_bytes(header, rows)))
    return HostileFile("openb_pod_list.csv", data, csv_rows(data))


@st.composite
def aaic_trace_csv(draw) -> HostileFile:
    header = draw(_header(AAIC_COLUMNS, AAIC_COLUMNS))
    rows = draw(_mutated_rows(header, _AAIC_ROW))
    text = _csv_bytes(header, rows)
    if draw(st.booleans()):  # the real logs separate values with ", "
        text = text.replace(",", ", ")
    data = draw(_encoded(text))
    return HostileFile("aaicwl.csv", data, csv_rows(data, skipinitialspace=True))


NODE_COLUMNS = ("node", "gpu_model", "gpus", "cpu_milli", "memory_mib", "zone", "block", "rack",
                "pricing_category")


@st.composite
def node_table_csv(draw) -> HostileFile:
    node_cell = st.one_of(
        st.sampled_from(["n1", "n2", "n1", "8", "0", "-1", "1.5", "1e300", "2147483648", "A100",
                         "Standard", "Committed", "Spot", ""]),
        CELL,
    )
    header, rows = draw(_table(NODE_COLUMNS, NODE_COLUMNS[:3], node_cell))
    data = draw(_encoded(_csv_bytes(header, rows)))
    return HostileFile("cluster.csv", data, csv_rows(data))


INVENTORIES = (
    ("openb_node_list.csv", ("sn", "cpu_milli", "memory_mib", "gpu", "model")),
    ("pai_machine_spec.csv", ("machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu")),
    ("node_info_df.csv", ("gpu_model", "gpu_capacity_num", "cpu_num", "node_name")),
)


@st.composite
def inventory_csv(draw) -> HostileFile:
    name, columns = draw(st.sampled_from(INVENTORIES))
    header, rows = draw(_table(columns, columns, st.one_of(NUMBER_TEXT, st.sampled_from(GPU_MODELS), CELL)))
    data = draw(_encoded(_csv_bytes(header, rows)))
    return HostileFile(name, data, None)  # the PAI file may have no header: no exact count


_TOML_SCALAR = st.one_of(
    st.integers(-(2**63), 2**63 - 1).map(str), st.sampled_from(["inf", "nan", "-inf", "1e300", "1.5", "true"]),
    st.text(max_size=8).map(lambda t: '"' + t.replace("\\", "\\\\").replace('"', '\\"') + '"'),
    st.sampled_from(["[1, 2]", '["a", ""]', "{ a = 1 }", "[]", '"=cmd"', '""', "1970-01-01"]),
)
POOL_KEYS = ("name_prefix", "count", "gpu_model", "gpus", "cpu_milli", "memory_mib", "zone", "block",
             "blocks", "rack", "racks", "pricing_category", "colour")


@st.composite
def cluster_toml(draw) -> HostileFile:
    if draw(st.integers(0, 9)) == 0:  # nesting deeper than any parser's recursion
        depth = draw(st.sampled_from([50, 5000, 100_000]))
        return HostileFile("cluster.toml", ("pool = " + "[" * depth + "]" * depth + "\n").encode())
    pools = []
    for _ in range(draw(st.integers(0, 3))):
        lines = ["[[pool]]"]
        plausible = {"name_prefix": '"n"', "count": draw(st.sampled_from(["2", "100000000000", "0"])),
                     "gpu_model": '"A100"', "gpus": "8"}
        for key in draw(st.lists(st.sampled_from(POOL_KEYS), max_size=6, unique=True)) + list(plausible):
            value = plausible.get(key) if draw(st.booleans()) and key in plausible else draw(_TOML_SCALAR)
            lines.append(f"{key} = {value}")
        pools.append("\n".join(dict.fromkeys(lines)))  # a key twice is invalid TOML anyway
    text = "\n\n".join(pools) + "\n"
    return HostileFile("cluster.toml", draw(_encoded(text)))


PRICE_COLUMNS = ("gpu_model", "list_usd_per_gpu_hour", "contracted_usd_per_gpu_hour",
                 "spot_usd_per_gpu_hour", "resource")


@st.composite
def price_book_csv(draw) -> HostileFile:
    price_cell = st.one_of(
        st.sampled_from(["A100", "H100", "A100", "gpu", "cpu", "memory", "disk", "2.5", "0", "-1",
                         "nan", "inf", "1e308", "1,000.50", ""]),
        NUMBER_TEXT, CELL,
    )
    header, rows = draw(_table(PRICE_COLUMNS, PRICE_COLUMNS[:4], price_cell, max_rows=6))
    data = draw(_encoded(_csv_bytes(header, rows)))
    if draw(st.integers(0, 14)) == 0:  # a Parquet file handed over as the price book
        sink = io.BytesIO()
        pq.write_table(pa.table({"gpu_model": ["A100"]}), sink)
        data = sink.getvalue()
    return HostileFile("prices.csv", data, csv_rows(data))


# ------------------------------------------------------------------------------ Kueue YAML

_API = st.sampled_from(["kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v9",
                        "config.kueue.x-k8s.io/v1beta1", "v1", None, 7])
_KINDS = st.sampled_from(["ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort",
                          "WorkloadPriorityClass", "Configuration", "Namespace", "", None])
_YAML_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["8", "500m", "64Gi", "1e3", "1e999999999", "-1", "x", "Never", "LowerPriority",
                     "BestEffortFIFO", "f", "cq", "nvidia.com/gpu", "cpu", "5m", "=cmd", "1e400",
                     "99999999999999999999Ei", "Hold"]),
    st.sampled_from(CONTROL_TEXT[:4]),
    st.text(max_size=8),
)
_YAML_VALUE = st.recursive(
    _YAML_SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(st.sampled_from(["name", "nominalQuota", "flavors", "resources",
                                                             "coveredResources", "weight", "x"]), inner, max_size=3)),
    max_leaves=8,
)


@st.composite
def _kueue_object(draw) -> dict:
    spec = {
        "resourceGroups": [{
            "coveredResources": draw(st.one_of(st.just(["nvidia.com/gpu"]), _YAML_VALUE)),
            "flavors": [{"name": draw(st.sampled_from(["f", "g", ""])),
                         "resources": [{"name": "nvidia.com/gpu", "nominalQuota": draw(_YAML_SCALAR)}]}],
        }],
        "cohort": draw(st.one_of(st.none(), st.just("c"), _YAML_VALUE)),
        "queueingStrategy": draw(st.one_of(st.just("StrictFIFO"), _YAML_SCALAR)),
        "clusterQueue": draw(st.sampled_from(["cq", "missing", ""])),
        "fairSharing": {"weight": draw(_YAML_SCALAR)},
        "nodeLabels": draw(st.one_of(st.just({"nvidia.com/gpu.product": "A100"}), _YAML_VALUE)),
        "preemption": draw(_YAML_VALUE),
    }
    keep = draw(st.lists(st.sampled_from(sorted(spec)), max_size=5, unique=True))
    document = {
        "apiVersion": draw(_API),
        "kind": draw(_KINDS),
        "metadata": draw(st.one_of(st.fixed_dictionaries({"name": st.sampled_from(["cq", "f", "lq", "x"])}),
                                   _YAML_VALUE)),
        "spec": {key: spec[key] for key in keep},
    }
    if draw(st.booleans()):
        document["value"] = draw(_YAML_SCALAR)
        document["description"] = draw(_YAML_VALUE)
    return document


def billion_laughs(levels: int = 9, width: int = 9) -> str:
    """Nested aliases that expand to width ** levels items if anything copied them."""
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, levels):
        refs = ", ".join(f"*a{level - 1}" for _ in range(width))
        lines.append(f"a{level}: &a{level} [{refs}]")
    return "\n".join(lines) + "\n"


def _bomb_in(field: str) -> str:
    """A Kueue object whose ``field`` is the biggest alias of a billion-laughs block."""
    return (billion_laughs() + f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\n"
            f"metadata: {{name: {'*a8' if field == 'name' else 'cq'}}}\n"
            f"spec: {{queueingStrategy: {'*a8' if field == 'strategy' else 'StrictFIFO'}}}\n")


HOSTILE_YAML = (
    billion_laughs(),
    _bomb_in("name"),
    _bomb_in("strategy"),
    "[" * 100_000 + "]" * 100_000,
    "a: " * 5000 + "1\n",
    "- " * 3000 + "x\n",
    "&a [*a]\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: &m {name: f, labels: *m}\n",
    "!!python/object/apply:os.system ['echo pwned']\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: p}\nvalue: 1\n"
    "description: !!binary aGVsbG8=\n",
    "base: &b {apiVersion: kueue.x-k8s.io/v1beta1, kind: Cohort}\n---\n<<: *b\nmetadata: {name: c}\n",
    "a:\n\tb: 1\n",
    "a: \x00\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\napiVersion: v1\nkind: Cohort\nmetadata: {name: c}\n",
    "? [1, 2]\n: 3\n",
    "---\n---\n---\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: p}\nvalue: " + "9" * 5000 + "\n",
    "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: a}\nspec: {parent: a}\n",
)


@st.composite
def kueue_yaml(draw) -> HostileFile:
    how = draw(st.sampled_from(["objects", "objects", "objects", "hostile", "spliced"]))
    if how == "hostile":
        text = draw(st.sampled_from(HOSTILE_YAML))
    else:
        documents = draw(st.lists(_kueue_object(), max_size=4))
        text = yaml.safe_dump_all(documents, allow_unicode=True, sort_keys=False)
        if how == "spliced":  # a hostile fragment appended as one more document
            text += "---\n" + draw(st.sampled_from(HOSTILE_YAML))
    return HostileFile("queues.yaml", draw(_encoded(text)))


# ------------------------------------------------------------------- issue 20 classes


@st.composite
def typo_of(draw, name: str) -> str:
    """``name`` one edit away: a letter dropped, doubled, swapped with the next, or replaced
    (``tennant``, ``tenat``, ``tneant``), as a hand-typed header has it."""
    at = draw(st.integers(0, len(name) - 2))
    how = draw(st.sampled_from(["drop", "double", "swap", "replace"]))
    if how == "drop":
        return name[:at] + name[at + 1:]
    if how == "double":
        return name[:at] + name[at] + name[at:]
    if how == "swap":
        return name[:at] + name[at + 1] + name[at] + name[at + 2:]
    other = draw(st.sampled_from([c for c in "aeinorstu" if c != name[at]]))
    return name[:at] + other + name[at + 1:]


_FLAVOR = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {{name: {name}}}\n"
           "spec: {{nodeLabels: {{nvidia.com/gpu.product: A100}}}}\n")
_COHORT = "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {{name: {name}}}\nspec: {spec}\n"
_QUEUE = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {{name: {name}}}\nspec:\n"
          "{cohort}{stop}  resourceGroups:\n  - coveredResources: [nvidia.com/gpu]\n    flavors:\n"
          "    - name: a100\n      resources: [{{name: nvidia.com/gpu, nominalQuota: {quota}}}]\n")
_LOCAL = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {{name: {name}, namespace: default}}\n"
          "spec: {{clusterQueue: {queue}}}\n")


@st.composite
def kueue_that_admits_nothing(draw) -> tuple[str, str]:
    """(manifests, why): a configuration under which no workload is ever admitted (item 12):
    nothing at all, flavors only, ClusterQueues whose cohorts form a cycle, ClusterQueues that
    are all stopped, or all without quota and without a cohort to borrow from."""
    why = draw(st.sampled_from(["empty", "flavors", "cycle", "stopped", "no-quota"]))
    if why == "empty":
        return draw(st.sampled_from(["", "---\n", "# nothing yet\n"])), why
    documents = [_FLAVOR.format(name="a100")]
    if why == "flavors":
        return "---\n".join(documents), why
    queues = draw(st.integers(1, 3))
    cohort, stop, quota = "", "", "8"
    if why == "cycle":
        length = draw(st.integers(1, 4))
        names = [f"c{i}" for i in range(length)]
        documents += [_COHORT.format(name=n, spec=f"{{parentName: {names[(i + 1) % length]}}}")
                      for i, n in enumerate(names)]
        cohort = f"  cohortName: {draw(st.sampled_from(names))}\n"
    elif why == "stopped":
        stop = f"  stopPolicy: {draw(st.sampled_from(['Hold', 'HoldAndDrain']))}\n"
    else:
        quota = "0"
    for i in range(queues):
        documents.append(_QUEUE.format(name=f"cq{i}", cohort=cohort, stop=stop, quota=quota))
        documents.append(_LOCAL.format(name=f"team-{i}", queue=f"cq{i}"))
    return "---\n".join(documents), why


RUN_FILE_NAMES = ("run.json", "events.parquet", "workloads.parquet", "cluster.parquet", "rejected.csv",
                  "cluster_queues.parquet")


@st.composite
def user_folder(draw) -> dict[str, bytes]:
    """What an ``--out`` folder may hold: some run files (a run.json that parses or not) and,
    often, files of the user's (``main.py``, ``src/lib.py``, a dot-file, a nested folder)."""
    files: dict[str, bytes] = {}
    for name in draw(st.lists(st.sampled_from(RUN_FILE_NAMES), max_size=4, unique=True)):
        files[name] = b"PAR1" if name.endswith(".parquet") else b"row,field\n"
    if "run.json" in files or draw(st.booleans()):
        files["run.json"] = draw(st.sampled_from([
            b'{"run_id": "r", "schema_version": "1.1"}', b"{not json", b'{"name": "my project"}', b"[]",
        ]))
    files.update(draw(st.dictionaries(
        st.sampled_from(["main.py", "src/lib.py", ".env", "notes.md", "data/events.parquet", "run.json.bak"]),
        st.binary(min_size=1, max_size=8), max_size=3,
    )))
    return files


def awkward_names() -> st.SearchStrategy[str]:
    """File and folder names SQL or a shell would misread: quotes, semicolons, comment
    markers, spaces, non-ASCII (never a separator, NUL or a dot-only name)."""
    pieces = st.sampled_from(["o'brien", "x') TO 'elsewhere", "; --", '"', "$(id)", " ", "é", "日本", "%s",
                              "\\", "{}", "export"])
    return st.lists(pieces, min_size=1, max_size=4).map("".join).filter(
        lambda n: n.strip(" .") != "" and "/" not in n)


def host_headers() -> st.SearchStrategy[str]:
    """Host header values: the dashboard's own names, lookalikes, other sites, IP literals,
    ports and garbage."""
    names = st.sampled_from([
        "127.0.0.1", "localhost", "LOCALHOST.", "[::1]", "127.0.0.2", "evil.example", "127.0.0.1.evil.example",
        "localhost.evil.example", "10.0.0.5", "[fe80::1]", "0.0.0.0", "", "dash.internal", "xn--e1afmkfd",
        "user@127.0.0.1", "127.0.0.1/x", "[::1", "%31%32%37.0.0.1",
    ])
    ports = st.sampled_from(["", ":8501", ":80", ":0", ":99999", ":x"])
    return st.builds(lambda name, port: name + port, names, ports)

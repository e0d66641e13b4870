"""`make bench`: peak memory of loading a 10-million-row trace, streamed.

A generic-schema trace of ``rows`` rows (about 60 bytes each: 10 million rows is ~0.6 GB of
CSV) is generated into a temporary folder with pyarrow, in seconds. Then, each in a fresh
Python process so that its peak RSS is its own:

- ``csv rows``: the CSV layer alone (`scheduler.trace.io.read_table_rows`), every row read
  and dropped. Its memory must not grow with the file.
- ``stream``: `scheduler.trace.generic.iter_generic_trace`, every row parsed and checked,
  the batches dropped after counting: what a caller that does not keep the workloads pays.
  It grows only by the duplicate-id index (one entry per distinct workload id).
- ``TraceLoad``: `read_generic_trace` on a tenth of the rows, keeping every workload, for
  the per-workload cost a replay pays on top.

Reported: peak RSS, its growth over the RSS after the imports, that growth per row, rows/s.
Linux only (the peak is read from /proc). Alone: ``python -m benchmarks.memory [--rows N]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

DEFAULT_ROWS = 10_000_000
CHUNK_ROWS = 1_000_000

# Each measurement: imports first, then the peak RSS is reset (Linux: clear_refs 5) so the
# peak is the load's own, on top of the RSS after the imports (the baseline).
_MEASURE = """
import json, sys, time
from datetime import UTC, datetime
from pathlib import Path
from scheduler.trace.generic import iter_generic_trace, read_generic_trace
from scheduler.trace.io import read_table_rows

def status_mib(key):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024

what, path = sys.argv[1], Path(sys.argv[2])
start = datetime(2026, 11, 2, tzinfo=UTC)
Path("/proc/self/clear_refs").write_text("5")
baseline = status_mib("VmRSS")
began = time.perf_counter()
if what == "csv rows":
    rows = sum(1 for _ in read_table_rows(path)[1])
elif what == "stream":
    rows = 0
    for batch in iter_generic_trace(path, start):
        rows += batch.input_rows
else:
    load = read_generic_trace(path, start)
    rows = len(load.workloads) + len(load.rejected)
seconds = time.perf_counter() - began
print(json.dumps({"rows": rows, "seconds": seconds, "baseline_mib": baseline, "peak_mib": status_mib("VmHWM")}))
"""


def write_trace(path: Path, rows: int) -> Path:
    """A generic trace of ``rows`` valid rows, a million at a time (vectorised, no Python loop
    per row). Submit times are out of order within each chunk, as exports often are."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pa_csv

    rng = np.random.default_rng(42)
    models = pa.array(["H100", "A100", "A100|H100", "L40S"])
    writer = None
    for first in range(0, rows, CHUNK_ROWS):
        index = np.arange(first, min(rows, first + CHUNK_ROWS))
        table = pa.table({
            "workload_id": pc.binary_join_element_wise("w", pc.cast(pa.array(index), pa.string()), ""),
            "submit_time": pa.array(np.round(index * 0.5 + rng.uniform(0, 3600, len(index)), 1)),
            "duration_s": pa.array(600 + index % 36_000),
            "pods": pa.array(1 + index % 4),
            "gpus_per_pod": pa.array(1 + index % 8),
            "gpu_model": pc.take(models, pa.array(index % 4)),
            "tenant": pc.binary_join_element_wise("team-", pc.cast(pa.array(index % 7), pa.string()), ""),
            "kind": pa.array(["training"] * len(index)),
        })
        if writer is None:
            writer = pa_csv.CSVWriter(str(path), table.schema)
        writer.write_table(table)
    if writer is not None:
        writer.close()
    return path


def _measure(what: str, path: Path) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _MEASURE, what, str(path)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"memory benchmark step {what!r} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def trace_memory_table(rows: int = DEFAULT_ROWS, console: Console | None = None) -> Table:
    """Generate the traces, measure each way of reading them, return the table."""
    table = Table(title=f"streaming trace load: peak memory ({rows:,} rows; one process per row)")
    for column in ("read", "rows", "file MiB", "s", "rows/s", "peak MiB", "growth MiB", "B/row"):
        table.add_column(column, justify="right")
    with tempfile.TemporaryDirectory(prefix="gpu-finops-memory-") as tmp:
        began = time.perf_counter()
        full = write_trace(Path(tmp) / "trace.csv", rows)
        tenth = write_trace(Path(tmp) / "tenth.csv", max(1, rows // 10))
        if console is not None:
            console.print(f"generated {rows:,} rows in {time.perf_counter() - began:.0f} s")
        for what, path in (("csv rows", full), ("stream", full), ("TraceLoad", tenth)):
            m = _measure(what, path)
            growth = m["peak_mib"] - m["baseline_mib"]
            table.add_row(what, _count(m["rows"]), f"{path.stat().st_size / 2**20:,.0f}", f"{m['seconds']:.0f}",
                          f"{m['rows'] / m['seconds']:,.0f}", f"{m['peak_mib']:,.0f}", f"{growth:,.0f}",
                          f"{growth * 2**20 / max(1, m['rows']):,.0f}")
    return table


def _count(rows: float) -> str:
    return f"{rows / 1e6:.1f} M" if rows >= 1e6 else f"{rows:,.0f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    parser.add_argument("--rows", type=int, default=DEFAULT_ROWS)
    args = parser.parse_args(argv)
    console = Console(width=None if sys.stdout.isatty() else 200)  # a log keeps whole tables
    console.print(trace_memory_table(args.rows, console))
    return 0


if __name__ == "__main__":
    sys.exit(main())

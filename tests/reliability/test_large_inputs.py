"""Large traces are read as a stream: memory does not grow with the file.

The 10-million-row measurement is `make bench` (`benchmarks/memory.py`); here the same
readers run on files small enough for a test, twice (N and 4N rows), each in a fresh process
whose peak RSS is reset after its imports, and the growth is compared.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.csv as pa_csv
import pyarrow.parquet as pq
import pytest

from benchmarks.memory import write_trace
from scheduler.errors import InputError
from scheduler.trace.generic import iter_generic_trace
from tests.reliability.killing import run_in_child

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads peak RSS from /proc")
START = datetime(2026, 11, 2, tzinfo=UTC)
MIB = 2**20


def _rss_kib(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise AssertionError(key)


def peak_growth(how: str, path: str, batch_rows: int) -> tuple[int, int]:
    """In a fresh child: (rows read, peak RSS growth in bytes) of reading ``path``."""
    from scheduler.trace.io import read_table_rows

    Path("/proc/self/clear_refs").write_text("5")  # reset the peak to the current RSS
    baseline = _rss_kib("VmRSS")
    if how == "rows":
        rows = sum(1 for _ in read_table_rows(Path(path), batch_rows)[1])
    else:
        rows = sum(batch.input_rows for batch in iter_generic_trace(Path(path), START, batch_rows))
    return rows, (_rss_kib("VmHWM") - baseline) * 1024


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("large")
    files = {}
    for name, rows in (("small", 20_000), ("large", 80_000), ("parse-small", 10_000), ("parse-large", 40_000)):
        files[f"{name}.csv"] = write_trace(folder / f"{name}.csv", rows)
        files[f"{name}.parquet"] = folder / f"{name}.parquet"
        pq.write_table(pa_csv.read_csv(files[f"{name}.csv"]), files[f"{name}.parquet"], row_group_size=10_000)
    return files


@pytest.mark.parametrize("kind", ["csv", "parquet"])
def test_reading_rows_takes_the_same_memory_for_a_file_four_times_larger(traces, kind):
    small_rows, small = run_in_child(peak_growth, "rows", str(traces[f"small.{kind}"]), 5_000)
    large_rows, large = run_in_child(peak_growth, "rows", str(traces[f"large.{kind}"]), 5_000)
    assert (small_rows, large_rows) == (20_000, 80_000)
    # Loading the file whole would grow with it: by its text (~20 MiB more here) or a dict a
    # row (~40 MiB more). Arrow's allocator holds a few MiB more or less from run to run.
    allowed = 4 * MIB if kind == "csv" else 16 * MIB
    assert large - small < allowed, f"memory grew {(large - small) / MIB:.1f} MiB for 60,000 more rows"
    if kind == "csv":  # (Arrow keeps a fixed working set of its own for Parquet pages)
        file_mib = traces["large.csv"].stat().st_size / MIB
        assert large < 4 * MIB, f"{large / MIB:.1f} MiB to stream a {file_mib:.1f} MiB file"


def test_parsing_a_trace_grows_only_by_the_duplicate_id_index(traces):
    """Every row parsed and checked, the batches dropped: what is left is one index entry per
    workload id (to find duplicates), about a hundred bytes, not the rows themselves."""
    small_rows, small = run_in_child(peak_growth, "trace", str(traces["parse-small.csv"]), 2_000)
    large_rows, large = run_in_child(peak_growth, "trace", str(traces["parse-large.csv"]), 2_000)
    per_row = (large - small) / (large_rows - small_rows)
    assert per_row < 250, f"{per_row:.0f} bytes per extra row: the rows are being kept"


def test_the_first_batch_arrives_before_the_rest_of_the_file_is_read(tmp_path):
    """A non-UTF-8 byte far down the file is only met after the first batches were handed
    over, and the error then names its line and byte."""
    rows = [f"w{i},{i},60,1,1\n" for i in range(6_000)]  # ~90 KB: more than a read-ahead
    data = ("workload_id,submit_time,duration_s,pods,gpus_per_pod\n" + "".join(rows)).encode()
    bad_line = 5_001  # header = line 1
    offset = data.index(rows[bad_line - 2].encode())
    path = tmp_path / "trace.csv"
    path.write_bytes(data[:offset] + b"\xff" + data[offset:])
    batches = iter_generic_trace(path, START, batch_rows=100)
    first = next(batches)
    assert (first.input_rows, len(first.workloads)) == (100, 100)
    with pytest.raises(InputError, match=rf"line {bad_line}, byte {offset}\b"):
        for _ in batches:
            pass

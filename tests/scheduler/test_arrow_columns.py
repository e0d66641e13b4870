"""The C kernel `arrow_columns.c` against `pa.array`: the same arrays, value for value.

Hypothesis draws columns of each kind a replay writes (int64, int32, float64, bool, string, a map
of strings),
with nulls, edge values and values the kernel leaves to `pa.array` (bools among ints, ints out
of range or beyond what a double holds exactly, strings that are not valid UTF-8): the kernel's
array must equal `pa.array`'s, or both must refuse the column with the same error. A table
written through the kernel must give a Parquet file byte for byte the same as through
`pa.array`.
"""

from __future__ import annotations

import io
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.eventlog import columns
from scheduler.eventlog.schema import EVENT_SCHEMA
from tests.scheduler.native_kernel import build_kernel

FUZZ = settings(max_examples=200, derandomize=True, database=None, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    return build_kernel(tmp_path_factory.mktemp("arrow-columns"), "arrow_columns")


@pytest.fixture
def through_kernel(kernel, monkeypatch):
    monkeypatch.setattr(columns, "KERNEL", kernel)
    return kernel


def _same(values: list[object], arrow_type: pa.DataType) -> None:
    try:
        expected = pa.array(values, type=arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as error:
        with pytest.raises(type(error)):
            columns.arrow_array(values, arrow_type)
        return
    got = columns.arrow_array(values, arrow_type)
    got.validate(full=True)
    assert got.type == expected.type
    assert got.null_count == expected.null_count
    # repr tells NaN and -0.0 apart, which == would not
    assert [repr(v) for v in got.to_pylist()] == [repr(v) for v in expected.to_pylist()]


def _nullable(values: st.SearchStrategy[object]) -> st.SearchStrategy[list[object]]:
    return st.lists(st.one_of(st.none(), values), max_size=40)


INT32 = st.one_of(st.integers(-(2**31), 2**31 - 1), st.sampled_from([-(2**31), 2**31 - 1, 2**31, -(2**31) - 1, True]))
INT64 = st.one_of(st.integers(-(2**63), 2**63 - 1), st.sampled_from([2**63, -(2**63) - 1, False]))
FLOATS = st.one_of(st.floats(), st.integers(-(2**60), 2**60), st.sampled_from([2**53, 2**53 + 1, -0.0, math.inf]))
STRINGS = st.one_of(st.text(max_size=12), st.sampled_from(["", "\u00e9\u20ac\U0001f600", "\ud800", "a\x00b"]))
BOOLS = st.one_of(st.booleans(), st.sampled_from([0, 1]))


@FUZZ
@given(values=_nullable(INT32))
def test_int32_columns_equal_pyarrows(through_kernel, values):
    _same(values, pa.int32())


@FUZZ
@given(values=_nullable(INT64))
def test_int64_columns_equal_pyarrows(through_kernel, values):
    _same(values, pa.int64())


@FUZZ
@given(values=_nullable(FLOATS))
def test_float64_columns_equal_pyarrows(through_kernel, values):
    _same(values, pa.float64())


@FUZZ
@given(values=_nullable(STRINGS))
def test_string_columns_equal_pyarrows(through_kernel, values):
    _same(values, pa.string())


@FUZZ
@given(values=_nullable(BOOLS))
def test_bool_columns_equal_pyarrows(through_kernel, values):
    _same(values, pa.bool_())


LABELS = st.lists(st.tuples(st.text(max_size=6), st.one_of(st.none(), st.text(max_size=6))), max_size=4)


@FUZZ
@given(values=_nullable(LABELS))
def test_label_maps_equal_pyarrows(through_kernel, values):
    _same(values, pa.map_(pa.string(), pa.string()))


def test_the_kernel_takes_plain_columns_and_leaves_the_rest(kernel):
    assert kernel.value_column([1, None, 2], "i") is not None
    assert kernel.value_column([1, True], "q") is None  # a bool: pyarrow decides
    assert kernel.value_column([2**31], "i") is None  # out of range: pyarrow's error
    assert kernel.value_column([1.0, 2**53 + 1], "d") is None  # no double holds it exactly
    assert kernel.string_column(["a", "\ud800"]) is None  # not valid UTF-8
    assert kernel.value_column([True, 1], "?") is None
    validity, offsets, data, nulls = kernel.string_column(["ab", None, "\u00e9"])
    assert (validity, data, nulls) == (bytes([0b101]), "ab\u00e9".encode(), 1)
    assert kernel.value_column([1, 2], "q")[0] is None  # no nulls: no validity bitmap, as pyarrow


def _parquet(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd")
    return sink.getvalue()


def test_an_event_table_through_the_kernel_writes_the_same_parquet_bytes(through_kernel):
    rows = [[i, i * 0.5, "started", f"w{i % 7}", i % 3 or None, f"n-\u00e9{i % 5}", 1.0 if i % 4 else None, "A100",
             "team-a", None, "cq", i % 3, None, "x" * (i % 9), None, None, i if i % 2 else None, 40]
            for i in range(5_000)]
    by_column = {field.name: [row[i] for row in rows] for i, field in enumerate(EVENT_SCHEMA)}
    through = columns.arrow_table(by_column, EVENT_SCHEMA)
    plain = pa.table(by_column, schema=EVENT_SCHEMA)
    assert through.equals(plain)
    assert _parquet(through) == _parquet(plain)


def test_without_the_kernel_every_column_goes_through_pyarrow(monkeypatch):
    monkeypatch.setattr(columns, "KERNEL", None)
    assert columns.arrow_array([1, None], pa.int32()).equals(pa.array([1, None], type=pa.int32()))

"""Arrow columns from lists of Python values, for the files a replay writes.

`pa.array(list)` asks pyarrow's pandas shim whether the list is a pandas object; the shim
imports pandas to answer, which costs a replay about a fifth of a CPU second although it
never uses pandas. In the compiled build the C kernel `arrow_columns.c` lays out the
buffers of the five kinds of column a replay writes (int64, int32, float64, bool, string,
each nullable; and maps of strings from them) and `pa.Array.from_buffers` wraps them without asking the shim. Any other type,
or a value the kernel does not take as plain (a bool, an int out of range, a string that is
not valid UTF-8), goes through `pa.array`, which accepts or rejects it as always: the
arrays are `pa.array`'s, value for value (tests/scheduler/test_arrow_columns.py compares
them under Hypothesis). The pure tree, which loads no C kernel, always uses `pa.array`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import ModuleType

import pyarrow as pa

_FORMATS = {"int32": "i", "int64": "q", "double": "d", "bool": "?"}  # the kernel's formats by Arrow type name


def load_kernel() -> ModuleType | None:
    """The C kernel where it is built and the build runs compiled, else None."""
    try:
        from scheduler.eventlog import arrow_columns
    except ImportError:
        return None
    return arrow_columns


KERNEL = load_kernel()  # read by every conversion (a test swaps it)


def arrow_array(values: list[object], type: pa.DataType) -> pa.Array:
    """`pa.array(values, type=type)`, through the kernel where it takes the column."""
    kernel = KERNEL
    if kernel is not None:
        built = _from_kernel(kernel, values, type)
        if built is not None:
            return built
    return pa.array(values, type=type)


def _from_kernel(kernel: ModuleType, values: list[object], type: pa.DataType) -> pa.Array | None:
    if isinstance(type, pa.MapType):
        return _map_of_strings(kernel, values, type)
    if type == pa.string():
        strings = kernel.string_column(values)
        if strings is None:
            return None
        validity, offsets, data, nulls = strings
        return pa.Array.from_buffers(type, len(values), [_buffer(validity), pa.py_buffer(offsets), pa.py_buffer(data)],
                                     null_count=nulls)
    value_format = _FORMATS.get(str(type))
    if value_format is None:
        return None
    numbers = kernel.value_column(values, value_format)
    if numbers is None:
        return None
    validity, data, nulls = numbers
    return pa.Array.from_buffers(type, len(values), [_buffer(validity), pa.py_buffer(data)], null_count=nulls)


def _map_of_strings(kernel: ModuleType, values: list[object], type: pa.MapType) -> pa.Array | None:
    """A map<string, string> column (workloads' labels) from lists of (key, value) pairs or None:
    its offsets and validity from the kernel, its keys and values as string columns."""
    if type.key_type != pa.string() or type.item_type != pa.string():
        return None
    offsets: list[object] = [0]
    present: list[object] = []
    keys: list[object] = []
    items: list[object] = []
    for entry in values:
        if entry is not None:
            if not isinstance(entry, list):
                return None  # a dict or another mapping: pyarrow's own rules
            for pair in entry:
                if not isinstance(pair, tuple) or len(pair) != 2 or pair[0] is None:
                    return None
                keys.append(pair[0])
                items.append(pair[1])
        offsets.append(len(keys))
        present.append(None if entry is None else 0)
    validity = kernel.value_column(present, "i")
    offset_values = kernel.value_column(offsets, "i")
    if validity is None or offset_values is None or len(keys) > 2**31 - 1:
        return None
    entries = pa.StructArray.from_arrays([arrow_array(keys, pa.string()), arrow_array(items, pa.string())],
                                         fields=[type.key_field, type.item_field])
    return pa.Array.from_buffers(type, len(values), [_buffer(validity[0]), pa.py_buffer(offset_values[1])],
                                 null_count=validity[2], children=[entries])


def _buffer(validity: bytes | None) -> pa.Buffer | None:
    return None if validity is None else pa.py_buffer(validity)


def arrow_table(columns: Mapping[str, Sequence[object]], schema: pa.Schema) -> pa.Table:
    """`pa.table(columns, schema=schema)`: one column per schema field, in its order."""
    return pa.Table.from_arrays([arrow_array(list(columns[field.name]), field.type) for field in schema],
                                schema=schema)

# The C kernel `arrow_columns.c`: Arrow buffers from lists of Python values (None: another kind).
def value_column(values: list[object], format: str, /) -> tuple[bytes | None, bytes, int] | None:
    """format: 'i' int32, 'q' int64, 'd' float64, '?' bool."""
def string_column(values: list[object], /) -> tuple[bytes | None, bytes, bytes, int] | None: ...

"""Small file helpers shared by the input readers and the generator.

Everything the project writes goes to a temporary file in the destination folder first and
is renamed into place, so that an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import csv
import io
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from scheduler.errors import InputError

FORMULA_PREFIXES = ("=", "+", "-", "@")
ROW_PROBLEM = "__row_problem__"
"""Key of the only entry of a record whose CSV line could not be split into columns."""


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary sibling file and ``os.replace``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """CSV with ``\\n`` line ends (byte-stable across platforms); None becomes empty."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if value is None else value for value in row])
    return buffer.getvalue()


def neutralise_formula(value: Any) -> Any:
    """Prefix text a spreadsheet would evaluate as a formula with a single quote."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def is_parquet(path: Path) -> bool:
    if path.suffix.lower() in (".parquet", ".pq"):
        return True
    try:
        with open(path, "rb") as handle:
            return handle.read(4) == b"PAR1"
    except OSError:
        return False


def read_table_rows(path: Path) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]]:
    """Read a CSV or Parquet file as (columns, iterator of (row number, {column: value})).

    Row numbers are spreadsheet lines: header = 1, first data row = 2. CSV values are
    strings (empty string = missing); Parquet values keep their Arrow-converted Python types
    (None = missing). Structural problems raise `InputError`; a CSV line with more values
    than the header comes back as ``{ROW_PROBLEM: message}``.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "is a folder, expected a CSV or Parquet file")
    if is_parquet(path):
        try:
            table = pq.read_table(path)
        except Exception as exc:  # pyarrow raises several types for a corrupt file
            raise InputError(path, f"not a readable Parquet file: {exc}") from None
        columns = [name.strip() for name in table.column_names]
        records = table.to_pylist()

        def parquet_rows() -> Iterator[tuple[int, dict[str, Any]]]:
            for index, record in enumerate(records):
                yield index + 2, {key.strip(): value for key, value in record.items()}

        return columns, parquet_rows()
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text (byte {exc.start}): save it as UTF-8 CSV") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise InputError(path, "empty file: expected a header row", row=1) from None
    except csv.Error as exc:
        raise InputError(path, f"not a CSV file: {exc}", row=1) from None
    columns = [name.strip() for name in header]
    duplicates = sorted({name for name in columns if name and columns.count(name) > 1})
    if duplicates:
        raise InputError(path, "column appears twice in the header", row=1, field=duplicates[0])

    def csv_rows() -> Iterator[tuple[int, dict[str, Any]]]:
        row_number = 1
        try:
            for values in reader:
                row_number += 1
                if not values or all(not value.strip() for value in values):
                    continue  # a blank line is not a row
                if len(values) > len(columns):
                    # A row problem, not a file problem: the caller quarantines or raises.
                    yield row_number, {
                        ROW_PROBLEM: f"{len(values)} values but the header has {len(columns)} columns"
                    }
                    continue
                padded = list(values) + [""] * (len(columns) - len(values))
                yield row_number, dict(zip(columns, padded, strict=True))
        except csv.Error as exc:
            raise InputError(path, f"malformed CSV: {exc}", row=row_number + 1) from None

    return columns, csv_rows()

"""Small file helpers shared by the input readers and the generator.

Everything the project writes goes to a temporary file in the destination folder first and
is renamed into place, so that an interrupted run never leaves a half-written file behind.
"""

from __future__ import annotations

import codecs
import csv
import io
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from scheduler.errors import InputError
from scheduler.eventlog.files import replace_folder  # noqa: F401 - re-exported for the commands

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
"""What makes a spreadsheet run a cell as a formula (OWASP CSV injection): the same list as
the report's CSV exports."""
ROW_PROBLEM = "__row_problem__"
"""Key of the only entry of a record whose CSV line could not be split into columns."""
DEFAULT_BATCH_ROWS = 65_536
"""Rows per Parquet batch: large enough to be fast, small enough to keep memory flat."""


class RowProblem(Exception):
    """Raised by a reader while parsing one row; becomes that row's `RejectedRow` (field,
    reason) in the reader's quarantine."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


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


def check_replaceable(out: Path, marker: str) -> None:
    """Refuse to replace ``out`` unless it is missing, empty, or a folder a previous run of
    the same command wrote (it holds ``marker``): ``--out .`` or ``--out ~/Documents`` by
    mistake must not delete everything in there."""
    out = Path(out)
    if not out.exists():
        return
    if not out.is_dir():
        raise InputError(out, "exists and is not a folder: --out names the folder to write")
    if any(out.iterdir()) and not (out / marker).exists():
        raise InputError(
            out, f"is a folder with other files (no {marker}): --out must be a new folder or a "
            "previous output, which is replaced as a whole"
        )


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
    """Prefix text a spreadsheet would evaluate as a formula with a single quote. A carriage
    return becomes a line feed first: the CSV writer quotes a value with a line feed, not one
    with a lone carriage return, which a spreadsheet reads as the start of a new row."""
    if isinstance(value, str):
        if "\r" in value:
            value = value.replace("\r\n", "\n").replace("\r", "\n")
        if value.startswith(FORMULA_PREFIXES):
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


def read_table_rows(
    path: Path, batch_rows: int = DEFAULT_BATCH_ROWS
) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]]:
    """Read a CSV or Parquet file as (columns, iterator of (row number, {column: value})).

    The rows are streamed: a CSV file is read line by line and a Parquet file
    ``batch_rows`` rows at a time, so memory does not grow with the file (only with what
    the caller keeps). Row numbers are spreadsheet lines: header = 1, first data row = 2.
    CSV values are strings (empty string = missing); Parquet values keep their
    Arrow-converted Python types (None = missing). Problems with the header raise
    `InputError` at once; problems further down (bytes that are not UTF-8, a malformed
    CSV line, an unreadable Parquet page) raise it while iterating. A CSV line with more
    values than the header comes back as ``{ROW_PROBLEM: message}``.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "is a folder, expected a CSV or Parquet file")
    if is_parquet(path):
        return _parquet_rows(path, batch_rows)
    return _csv_rows(path)


def _check_header(path: Path, columns: list[str]) -> None:
    duplicates = sorted({name for name in columns if name and columns.count(name) > 1})
    if duplicates:
        raise InputError(path, "column appears twice in the header", row=1, field=duplicates[0])


def _parquet_rows(
    path: Path, batch_rows: int
) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]]:
    try:
        parquet = pq.ParquetFile(path)
        names = parquet.schema_arrow.names
    except Exception as exc:  # pyarrow raises several types for a corrupt file
        raise InputError(path, f"not a readable Parquet file: {_one_line(exc)}") from None
    columns = [name.strip() for name in names]
    _check_header(path, columns)

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        row_number = 1
        batches = parquet.iter_batches(batch_size=batch_rows)
        while True:
            try:
                batch = next(batches, None)
                records = [] if batch is None else batch.to_pylist()
            except (pa.ArrowException, OSError, ValueError, OverflowError) as exc:
                # A corrupt page, or a value Python cannot hold (a timestamp past year 9999).
                raise InputError(
                    path, f"unreadable values from here on: {_one_line(exc)}", row=row_number + 1
                ) from None
            if batch is None:
                return
            for record in records:
                row_number += 1
                yield row_number, dict(zip(columns, record.values(), strict=True))

    return columns, rows()


def _csv_rows(path: Path) -> tuple[list[str], Iterator[tuple[int, dict[str, Any]]]]:
    try:
        # newline="" lets the csv module see quoted line breaks; utf-8-sig drops a BOM.
        handle = open(path, encoding="utf-8-sig", newline="")  # noqa: SIM115 - the generator closes it
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    reader = csv.reader(handle)
    try:
        header = next(reader)
    except StopIteration:
        handle.close()
        raise InputError(path, "empty file: expected a header row", row=1) from None
    except csv.Error as exc:
        handle.close()
        raise InputError(path, f"not a CSV file: {exc}", row=1) from None
    except UnicodeDecodeError:
        handle.close()
        raise _not_utf8(path) from None
    columns = [name.strip() for name in header]
    try:
        _check_header(path, columns)
    except InputError:
        handle.close()
        raise

    def rows() -> Iterator[tuple[int, dict[str, Any]]]:
        row_number = 1
        with handle:
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
            except UnicodeDecodeError:
                raise _not_utf8(path) from None

    return columns, rows()


def _not_utf8(path: Path) -> InputError:
    """The error for a file that is not UTF-8, naming the line and byte of the first bad byte.

    The text reader decodes ahead in chunks, so the row being parsed when decoding fails is
    not the row at fault: the position is found again from the bytes.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    lines = 1
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            try:
                decoder.decode(chunk)
            except UnicodeDecodeError as exc:
                # exc.start counts from the bytes the decoder held back plus this chunk.
                held = len(exc.object) - len(chunk)
                bad = offset - held + exc.start
                lines += chunk[: max(0, exc.start - held)].count(b"\n")
                return InputError(
                    path, f"not UTF-8 text: line {lines}, byte {bad}: save it as UTF-8 CSV"
                )
            lines += chunk.count(b"\n")
            offset += len(chunk)
    return InputError(path, "not UTF-8 text: save it as UTF-8 CSV")


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__

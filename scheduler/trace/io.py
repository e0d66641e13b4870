"""Small file helpers shared by the input readers and the generator.

Everything the project writes goes to a temporary file in the destination folder first and
is renamed into place, so that an interrupted run never leaves a half-written file behind.

Reading: text files may be gzip (recognised by their first bytes, never by the name) and are
decompressed as a stream, never whole in memory; a byte that is not UTF-8 is reported with
its line; an input that is not a regular file (a pipe, ``<(…)`` process substitution) is
copied once to a temporary file by `spooled`, so that format detection does not consume it.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import difflib
import gzip
import io
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import pyarrow as pa
import pyarrow.parquet as pq

from scheduler.errors import InputError
from scheduler.eventlog.files import (
    NotOurs,
    check_ours,
    replace_folder,  # noqa: F401 - re-exported for the commands
)
from scheduler.eventlog.text import CONTROL_CHARACTERS
from scheduler.eventlog.writes import (  # noqa: F401 - the shared rules, re-exported for the trace readers
    FORMULA_PREFIXES,
    neutralise_formula,
    write_file,
)
from scheduler.eventlog.writes import sha256_file as sha256_of  # noqa: F401

ROW_PROBLEM = "__row_problem__"
"""Key of the only entry of a record whose CSV line could not be split into columns."""
DEFAULT_BATCH_ROWS = 65_536
"""Rows per Parquet batch: large enough to be fast, small enough to keep memory flat."""
GZIP_MAGIC = b"\x1f\x8b"
MAX_GZIP_LINE = 1 << 20
"""Characters of one line of a gzip file, at most: a small file can expand a thousandfold, so
a line is never read whole before its length is known (a plain file's lines are bounded by
its size on disk)."""


class RowProblem(Exception):
    """Raised by a reader while parsing one row; becomes that row's `RejectedRow` (field,
    reason) in the reader's quarantine."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field
        self.reason = reason


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary sibling file and ``os.replace``
    (`scheduler.eventlog.writes.write_file`)."""
    write_file(Path(path), data)


def check_replaceable(
    out: Path, marker: str, known_files: Iterable[str], required_keys: Sequence[str] = ()
) -> None:
    """Refuse to replace ``out`` unless it is missing, empty, or exactly a folder a previous run
    of the same command wrote: ``marker`` (its JSON manifest) parses as an object with
    ``required_keys``, and every entry is a plain file named in ``known_files``. ``--out .``
    or ``--out ~/project`` by mistake must not delete a ``main.py`` that sits beside a
    ``run.json``."""
    known = frozenset(known_files)

    def recognise(document: dict) -> Iterable[str] | None:
        return known if all(key in document for key in required_keys) else None

    try:
        check_ours(Path(out), what="--out", manifest=marker, read_manifest=recognise)
    except NotOurs as refused:
        raise InputError(out, str(refused).removeprefix(f"{out}: ")) from None


def control_character_problem(text: str) -> str | None:
    """Why ``text`` cannot be a name (a control character: terminal escape sequences start
    with one, and none belongs in a name; shown by its code), else None."""
    if text.isprintable():  # the fast path: no control character (nor other unprintables)
        return None
    found = CONTROL_CHARACTERS.search(text)
    if found is None:
        return None
    return (f"holds the unprintable character U+{ord(found.group()):04X} at position {found.start() + 1} "
            "(a control character, e.g. of a terminal escape sequence): names must be printable text")


def header_typos(columns: Iterable[str], known: Sequence[str], source: Path, what: str) -> list[str]:
    """Warnings for header names that are not known columns but look like one (``tennant``
    for ``tenant``): such a column is ignored, so its values would silently become defaults."""
    warnings = []
    known_set = set(known)
    for name in columns:
        if not name or name in known_set:
            continue
        close = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.8)
        if close:
            warnings.append(
                f"{Path(source).name}: column '{name}' is not a {what} column; did you mean "
                f"'{close[0]}'? It is ignored, so every row gets the default {close[0]}"
            )
    return warnings


def is_gzip(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(2) == GZIP_MAGIC
    except OSError:
        return False


def open_bytes(path: Path) -> IO[bytes]:
    """The file's bytes, decompressed on the fly when it is gzip (by its magic bytes)."""
    handle = open(path, "rb")  # noqa: SIM115 - returned to the caller, who closes it
    try:
        if handle.read(2) == GZIP_MAGIC:
            handle.seek(0)
            return gzip.GzipFile(fileobj=handle, mode="rb")  # type: ignore[return-value]
        handle.seek(0)
    except BaseException:
        handle.close()
        raise
    return handle


def _gzip_lines(handle: IO[str], path: Path) -> Iterator[str]:
    """Lines of a decompressing text stream, refusing one longer than `MAX_GZIP_LINE`."""
    number = 0
    while True:
        line = handle.readline(MAX_GZIP_LINE)
        if not line:
            return
        number += 1
        if len(line) >= MAX_GZIP_LINE and line[-1] not in "\r\n":
            raise InputError(path, f"longer than {MAX_GZIP_LINE:,} characters: not a line of a CSV file", row=number)
        yield line


def open_csv_lines(path: Path) -> tuple[IO[str], Iterable[str]]:
    """(handle to close, lines to give ``csv.reader``) of a plain or gzip CSV file, UTF-8 with
    or without a BOM. Raises `InputError` when the file cannot be opened."""
    try:
        raw = open_bytes(path)
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    compressed = isinstance(raw, gzip.GzipFile)
    # newline="" lets the csv module see quoted line breaks; utf-8-sig drops a BOM.
    handle = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")  # type: ignore[type-var]
    return handle, (_gzip_lines(handle, path) if compressed else handle)


def read_utf8(path: Path) -> str:
    """A small text file (YAML, TOML, a node list) whole; a byte that is not UTF-8 is an
    `InputError` naming its line and byte."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "is a folder, expected a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(path, f"cannot read: {exc.strerror}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(path, f"not UTF-8 text: line {line}, byte {exc.start}: save it as UTF-8") from None


def is_regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


@contextlib.contextmanager
def spooled(paths: Sequence[Path | None]) -> Iterator[list[Path | None]]:
    """The given inputs, each readable as often as needed: a path that exists but is not a
    regular file (a pipe, a FIFO, ``<(…)``, ``/dev/stdin``) is read once into a temporary
    file of the same name, removed afterwards; other paths come back as they are. Format
    detection and checksums read an input several times, which would consume a pipe."""
    with contextlib.ExitStack() as stack:
        result: list[Path | None] = []
        for path in paths:
            if path is None or is_regular_file(path) or not Path(path).exists() or Path(path).is_dir():
                result.append(path)
                continue
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="gpu-finops-input-")))
            copy = folder / (Path(path).name or "input")
            try:
                with open(path, "rb") as source, open(copy, "wb") as target:
                    shutil.copyfileobj(source, target, 1 << 20)
            except OSError as exc:
                raise InputError(path, f"cannot read: {exc.strerror}") from None
            result.append(copy)
        yield result


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
    handle, lines = open_csv_lines(path)
    reader = csv.reader(lines)
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
        raise not_utf8_error(path) from None
    except (OSError, EOFError) as exc:  # a damaged or truncated gzip stream
        handle.close()
        raise InputError(path, f"not a readable gzip file: {_one_line(exc)}") from None
    except InputError:
        handle.close()
        raise
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
                width = len(columns)
                for values in reader:
                    row_number += 1
                    # A blank line is not a row (a first cell with text settles it at once).
                    if not values or (not values[0].strip() and all(not value.strip() for value in values)):
                        continue
                    if len(values) > width:
                        # A row problem, not a file problem: the caller quarantines or raises.
                        yield row_number, {
                            ROW_PROBLEM: f"{len(values)} values but the header has {len(columns)} columns"
                        }
                        continue
                    if len(values) < width:  # the reader's own list, one per row
                        values += [""] * (width - len(values))
                    yield row_number, dict(zip(columns, values, strict=True))
            except csv.Error as exc:
                raise InputError(path, f"malformed CSV: {exc}", row=row_number + 1) from None
            except UnicodeDecodeError:
                raise not_utf8_error(path) from None
            except (OSError, EOFError) as exc:  # a damaged or truncated gzip stream
                raise InputError(path, f"not a readable gzip file: {_one_line(exc)}", row=row_number + 1) from None

    return columns, rows()


def not_utf8_error(path: Path) -> InputError:
    """The error for a file (plain or gzip) that is not UTF-8, naming the line and the byte
    (counted in the decompressed text) of the first bad byte.

    The text reader decodes ahead in chunks, so the row being parsed when decoding fails is
    not the row at fault: the position is found again from the bytes.
    """
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0
    lines = 1
    with open_bytes(path) as handle:  # the decompressed bytes of a gzip file
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


def first_csv_line(path: Path, limit: int = 65_536) -> list[str] | None:
    """The header row of a CSV file (plain or gzip), reading at most ``limit`` characters:
    format detection must not read, let alone decompress, a whole file."""
    handle, _ = open_csv_lines(path)
    try:
        with handle:
            line = handle.readline(limit)
    except UnicodeDecodeError:
        raise not_utf8_error(path) from None
    except (OSError, EOFError) as exc:
        raise InputError(path, f"not a readable gzip file: {_one_line(exc)}") from None
    return next(csv.reader([line], skipinitialspace=True), None)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300] or type(exc).__name__

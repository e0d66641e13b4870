"""User-facing input errors: one line naming the file, the row (or document) and the field.

The CLI prints ``str(error)`` on stderr and exits non-zero, without a traceback. Row numbers
are spreadsheet line numbers: the header is row 1, the first data row is row 2.
"""

from __future__ import annotations

from pathlib import Path

MAX_MESSAGE = 400
"""Characters of an error message, at most (the file, row and field come on top)."""


class InputError(Exception):
    """An input file cannot be used as it is.

    ``file`` is shown by its base name only, to keep messages short. ``row`` is the 1-based
    line of a tabular file (1 = header), ``document`` the 1-based document of a YAML stream,
    ``field`` a column name or a dotted field path such as ``spec.resourceGroups[0].flavors``.
    """

    def __init__(
        self,
        file: str | Path,
        message: str,
        *,
        row: int | None = None,
        field: str | None = None,
        document: int | None = None,
    ) -> None:
        self.file = Path(file).name if str(file) else ""
        self.row = row
        self.field = field
        self.document = document
        message = " ".join(str(message).split())  # always one line
        # ...and a short one: a hostile cell quoted in full would make a megabyte "line".
        self.message = message if len(message) <= MAX_MESSAGE else message[: MAX_MESSAGE - 1] + "…"
        super().__init__(str(self))

    def __str__(self) -> str:
        parts = [self.file or "<input>"]
        if self.document is not None:
            parts.append(f"document {self.document}")
        if self.row is not None:
            parts.append(f"row {self.row}")
        if self.field is not None:
            parts.append(f"field '{self.field}'")
        parts.append(self.message)
        return ": ".join(parts)

    def __reduce__(self):  # keep the error picklable (multiprocessing, pytest-xdist)
        return (_rebuild, (self.file, self.message, self.row, self.field, self.document))


def _rebuild(file, message, row, field, document) -> InputError:
    return InputError(file, message, row=row, field=field, document=document)

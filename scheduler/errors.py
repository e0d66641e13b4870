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


NUL_IN_PATH = "holds a NUL byte, which no file name can"
"""The one line's reason for a path with a NUL in it (the system would refuse it with
``ValueError: embedded null byte``): command-line arguments and paths read from files."""


def checked_path_text(text: str, file: str | Path, *, field: str | None = None) -> str:
    """``text`` when it can name a file; InputError naming ``file`` and ``field`` otherwise."""
    if "\0" in text:
        raise InputError(file, f"{text!r} {NUL_IN_PATH}", field=field)
    return text


def nul_in_arguments(arguments: dict[str, object]) -> str | None:
    """The CLI's shared check of every argument (paths among them): ``--name: 'text' holds a
    NUL byte…`` for the first that holds one, None when none does."""
    for name, value in arguments.items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and "\0" in text:
                return f"--{name.replace('_', '-')}: {text!r} {NUL_IN_PATH}"
    return None

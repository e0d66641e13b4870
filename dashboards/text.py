"""User text made safe to show in a terminal or a file: control characters neutralised.

`printable` is ``scheduler.eventlog.text``'s, the one rule every stage shares (the dashboard
may import that module and no other part of the scheduler but the write discipline): ESC becomes ␛ (the Control Pictures block), NUL ␀, DEL ␡, and a
C1 control such as CSI the four characters ``\\x9b``. A terminal then shows a tenant named
``ESC[2J`` instead of clearing the screen, and vl-convert renders a chart of it instead of
aborting on a character XML does not allow.
"""

from __future__ import annotations

import re
from typing import Any

from scheduler.eventlog.text import CONTROL_CHARACTERS, printable  # noqa: F401 - re-exported

# Markdown punctuation that can start inline markup: links and images ([x](javascript:…),
# ![](http://…): escaping the brackets is enough), raw HTML and autolinks (<script>,
# <javascript:…>), emphasis, code spans, strikethrough, table cells, entities, and the backslash.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&])")


def markdown_text(text: str) -> str:
    """User text as literal Markdown (report.md, the dashboard's captions and messages): every
    character that could start markup is backslash-escaped, line breaks become spaces, and
    control characters are neutralised. A tenant named ``![](http://evil/?leak)`` is shown,
    not fetched."""
    flat = str(text).replace("\r", " ").replace("\n", " ")
    return _MARKDOWN_SPECIAL.sub(r"\\\1", printable(flat))


def printable_value(value: Any, keep: str = "") -> Any:
    """`printable` for text; any other value as it is."""
    return printable(value, keep) if isinstance(value, str) else value

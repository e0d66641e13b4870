"""User text made safe to show: control characters neutralised for terminals and files.

A tenant, workload id or file name can hold bytes a terminal runs (``ESC [2J`` clears the
screen, ``ESC ]`` sets the window title, C1 ``CSI`` does the same in one byte) or that break
a renderer (NUL). Inputs refuse them (`scheduler.trace.io.control_character_problem`), but a
database or a run folder may come from elsewhere, so every surface that shows user text
passes it through `printable` too. It sits beside the event-log schema so that the
pipeline, the commands and the scheduler share it; the dashboard keeps the same rule in
`dashboards.text` (it may not import the scheduler), and a test holds the two together.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

CONTROL_CHARACTERS = re.compile("[\x00-\x1f\x7f-\x9f\ufffe\uffff]")
"""C0 and C1 control characters, DEL, and the non-characters U+FFFE and U+FFFF."""


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x20:
        return chr(0x2400 + code)  # the Control Pictures block: ␀ … ␟, one column wide
    if code == 0x7F:
        return "\u2421"
    if code > 0xFFFD:  # the non-characters U+FFFE and U+FFFF, which XML (a chart's SVG) refuses
        return "\ufffd"  # ␡
    return f"\\x{code:02x}"  # C1 has no pictures: its escape, as text


def printable(text: str, keep: str = "") -> str:
    """``text`` with every control character (except those in ``keep``, e.g. ``"\\n"``)
    replaced by a visible stand-in: ESC becomes ␛, NUL ␀, C1 CSI the four characters
    ``\\x9b``. Text without one comes back as it is."""
    if text.isprintable():
        return text
    return CONTROL_CHARACTERS.sub(lambda m: m.group() if m.group() in keep else _shown(m), text)


def parse_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads``, where every way a TOML file can fail is its ``TOMLDecodeError``, so
    each reader's one line naming the file covers them all: tomllib parses nested arrays and
    inline tables recursively (500 levels of ``[[[…]]]`` raised RecursionError in the sweep,
    schedule and profile readers), and Python refuses an integer of more than 4,300 digits
    with a plain ValueError. Shared by every TOML reader of the scheduler, the commands and
    the dashboard."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except RecursionError:
        raise tomllib.TOMLDecodeError("arrays or tables nested too deeply") from None
    except (ValueError, OverflowError) as exc:
        raise tomllib.TOMLDecodeError(f"a value cannot be read ({exc})") from None

"""Kubernetes quantities ("8", "500m", "64Gi", "1.5", "1e3") as exact numbers, and the short
renderings of bad YAML values that keep every error on one line.

Numbers are bounded before any arithmetic: quantities at most `MAX_QUANTITY_MILLI`,
priorities and thresholds 32-bit integers (`MAX_INT32`), as in Kubernetes."""

from __future__ import annotations

import math
import re
import reprlib
from decimal import ROUND_CEILING, Decimal
from typing import Any

_SUFFIXES = {
    "": Decimal(1), "m": Decimal("0.001"), "k": Decimal(10) ** 3, "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9, "T": Decimal(10) ** 12, "P": Decimal(10) ** 15, "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10, "Mi": Decimal(2) ** 20, "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40, "Pi": Decimal(2) ** 50, "Ei": Decimal(2) ** 60,
}
MAX_QUANTITY_MILLI = (2**63 - 1) * 1000
"""A quota in milli-units, at most: a quantity whose value in units fits Kubernetes' int64
`Quantity.Value()` (8 EiB of memory, 9.2 × 10¹⁸ GPUs). Memory is counted in milli-bytes, so
a real cluster's memory quota (bench-1m's cohort: 4.2 PiB, 4.7 × 10¹⁸ milli-bytes) is past
64 bits in milli-units; sums are Python integers and stay exact. The bound is there to stop
hostile numbers (1e400, 5,000 digits) before they become huge integers."""
MAX_INT32 = 2**31 - 1  # a Kubernetes priority (and a priority threshold) is a 32-bit integer
_QUANTITY = re.compile(r"^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E)?)$")


def parse_quantity(value: Any) -> Decimal:
    """A Kubernetes quantity ("8", "500m", "64Gi", "1e3") as an exact Decimal.

    Raises ValueError for anything else (including booleans and negative signs are kept).
    """
    if isinstance(value, bool) or value is None:
        raise ValueError(f"not a quantity: {shown(value)}")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):  # YAML's .inf and .nan
            raise ValueError(f"not a finite quantity: {value!r}")
        return Decimal(repr(value))
    if not isinstance(value, str):
        raise ValueError(f"not a quantity: {shown(value)}")
    match = _QUANTITY.match(value.strip())
    if not match:
        raise ValueError(f"not a quantity: {shown(value)}")
    number, exponent, suffix = match.groups()
    try:
        base = Decimal(number)
        if exponent:
            return base * (Decimal(10) ** int(exponent[1:]))
    except ArithmeticError:  # InvalidOperation, or an exponent like 1e999999999 (Overflow)
        raise ValueError(f"not a quantity: {shown(value)}") from None
    return base * _SUFFIXES[suffix or ""]


def quantity_to_milli(value: Any) -> int:
    """A quantity in milli-units, rounded up like Kubernetes' MilliValue(); ValueError past
    `MAX_QUANTITY_MILLI` (checked on the exact Decimal, before it becomes an integer)."""
    milli = parse_quantity(value) * 1000
    if abs(milli) > MAX_QUANTITY_MILLI:
        raise ValueError(f"more than {MAX_QUANTITY_MILLI // 1000:,} units: {shown(value)}")
    return int(milli.to_integral_value(rounding=ROUND_CEILING))


def kind_of(value: Any) -> str:
    """What a YAML value is, for an error message: "a mapping", "text 'x'", "int 3"."""
    if value is None:
        return "nothing"
    names: dict[type, str] = {dict: "a mapping", list: "a list", str: f"text {shown(value)}"}
    return names.get(type(value), f"{type(value).__name__} {shown(value)}")


def shown(value: Any) -> str:
    """repr() cut short: an error stays one short line even for a YAML alias bomb, whose
    full repr would be billions of items (aliases are shared, not copied, when loaded)."""
    short = reprlib.Repr()
    short.maxlevel, short.maxlist, short.maxdict, short.maxstring, short.maxother = 2, 4, 4, 80, 80
    return short.repr(value)


def in_form_of(milli: int, given: Any) -> Any:
    """``milli`` milli-units written the way ``given`` (the user's own quantity) was: ``given``
    itself when it is the same amount, else a whole number of its suffix ("22938Gi" stays in
    Gi, "64" in units) where ``milli`` is one, else None (the caller keeps its own form).

    Quotas written back into a user's manifests keep the user's units, so a diff of the old
    and new manifests shows only the quotas that changed."""
    try:
        if quantity_to_milli(given) == milli:
            return given
    except ValueError:
        return None
    if isinstance(given, int) and milli % 1000 == 0:
        return milli // 1000
    match = _QUANTITY.match(given.strip()) if isinstance(given, str) else None
    if match is None or match.group(2):  # an exponent form is not kept
        return None
    suffix = match.group(3) or ""
    per_unit = _SUFFIXES[suffix] * 1000
    count = Decimal(milli) / per_unit
    if count != count.to_integral_value():
        return None
    return f"{int(count)}{suffix}" if suffix else int(count)

"""CEL device selectors, evaluated with cel-python (`celpy`), compiled once per expression and
decided once per (expression, device).

The variable is upstream's (`dynamic-resource-allocation/cel/compile.go`): `device` with
`driver`, `attributes[domain].name`, `capacity[domain].name` and `allowMultipleAllocations`.
Capacities are Kubernetes quantities with the Kubernetes CEL library's quantity functions
(`quantity("80Gi")`, `compareTo`, `isGreaterThan`, `isLessThan`, `asInteger`,
`asApproximateFloat`); `version` attributes are semvers (`semver("9.0.0")`, `compareTo`,
`isGreaterThan`, `isLessThan`, `major`, `minor`, `patch`). A runtime error (a missing attribute read without `in`) is an error of
the selector, as upstream's allocator returns it, not a mismatch.

Not compiled with mypyc (celpy's objects are plain Python): the allocator sees this module
only through `DeviceMatcher.matches`.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import celpy
from celpy import celtypes

from scheduler.dra.objects import Device, SelectorError, Version, parse_quantity


class _Quantity:
    """A Kubernetes quantity inside CEL: equal when the amounts are equal."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Quantity) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"quantity({self.value})"


def _quantity(text: Any) -> _Quantity:
    value = parse_quantity(str(text))
    if value is None:
        raise ValueError(f"invalid quantity {text!r}")
    return _Quantity(value)


class _Semver:
    """A semantic version inside CEL (the Kubernetes library's `semver`): major, minor, patch
    compared as numbers, a pre-release below its release."""

    __slots__ = ("text", "key")

    def __init__(self, text: str) -> None:
        match = _SEMVER.match(text.strip())
        if match is None:
            raise ValueError(f"invalid semver {text!r}")
        major, minor, patch, pre = match.groups()
        self.text = text
        pre_key = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split(".")) if pre else ()
        self.key = (int(major), int(minor), int(patch), 0 if pre else 1, pre_key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Semver) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


_SEMVER = re.compile(r"^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$")


def _semver(text: Any) -> _Semver:
    return _Semver(str(text))


def _cmp(left: Any, right: Any) -> int:
    if isinstance(left, _Quantity) and isinstance(right, _Quantity):
        return (left.value > right.value) - (left.value < right.value)
    if isinstance(left, _Semver) and isinstance(right, _Semver):
        return (left.key > right.key) - (left.key < right.key)
    raise TypeError("compareTo needs two quantities or two semvers")


FUNCTIONS: dict[str, Any] = {
    "quantity": _quantity,
    "semver": _semver,
    "isSemver": lambda text: celtypes.BoolType(_SEMVER.match(str(text).strip()) is not None),
    "major": lambda v: celtypes.IntType(v.key[0]),
    "minor": lambda v: celtypes.IntType(v.key[1]),
    "patch": lambda v: celtypes.IntType(v.key[2]),
    "compareTo": lambda a, b: celtypes.IntType(_cmp(a, b)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_cmp(a, b) > 0),
    "isLessThan": lambda a, b: celtypes.BoolType(_cmp(a, b) < 0),
    "asInteger": lambda a: celtypes.IntType(int(a.value)),
    "asApproximateFloat": lambda a: celtypes.DoubleType(float(a.value)),
    "isInteger": lambda a: celtypes.BoolType(a.value.denominator == 1),
}


def _cel_value(value: object) -> Any:
    if isinstance(value, Version):
        return _Semver(value.text)
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        return celtypes.IntType(value)
    return celtypes.StringType(str(value))


def device_variable(device: Device) -> Any:
    """The `device` variable of a selector, as upstream builds it."""
    attributes: dict[Any, Any] = {}
    for name, value in device.attributes:
        domain, _, short = name.rpartition("/")
        attributes.setdefault(celtypes.StringType(domain), celtypes.MapType())[celtypes.StringType(short)] = _cel_value(value)
    capacity: dict[Any, Any] = {}
    for name, amount in device.capacity:
        domain, _, short = name.rpartition("/")
        capacity.setdefault(celtypes.StringType(domain), celtypes.MapType())[celtypes.StringType(short)] = _Quantity(amount)
    return celtypes.MapType({
        celtypes.StringType("driver"): celtypes.StringType(device.driver),
        celtypes.StringType("attributes"): celtypes.MapType(attributes),
        celtypes.StringType("capacity"): celtypes.MapType(capacity),
        celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(device.allow_multiple_allocations),
    })


class DeviceMatcher:
    """Compiled selectors and their answers per device. One per replay (it holds no state
    of the cluster: a device's attributes never change)."""

    def __init__(self) -> None:
        with _cel_depth():
            self._env = celpy.Environment()
        self._programs: dict[str, Any] = {}
        self._answers: dict[tuple[str, tuple[str, str, str]], bool] = {}
        self._variables: dict[tuple[str, str, str], Any] = {}

    def compile(self, expression: str) -> str | None:
        """None when `expression` compiles, else the compiler's complaint (one line)."""
        try:
            self._program(expression)
        except SelectorError as error:
            return str(error)
        return None

    def _program(self, expression: str) -> Any:
        program = self._programs.get(expression)
        if program is None:
            try:
                with _cel_depth():
                    program = self._env.program(self._env.compile(expression), functions=FUNCTIONS)
            except Exception as error:  # celpy raises its parser's own exception types
                raise SelectorError(" ".join(str(error).split())) from None
            self._programs[expression] = program
        return program

    def matches(self, expression: str, device: Device) -> bool:
        """Whether `device` satisfies `expression`; `SelectorError` when it cannot be decided."""
        key = (expression, device.key)
        answer = self._answers.get(key)
        if answer is None:
            variable = self._variables.get(device.key)
            if variable is None:
                variable = self._variables[device.key] = device_variable(device)
            try:
                program = self._program(expression)
                with _cel_depth():
                    result = program.evaluate({"device": variable})
            except SelectorError:
                raise
            except Exception as error:
                raise SelectorError(f"CEL runtime error: {_first_line(error)}") from None
            if isinstance(result, Exception):  # celpy hands some errors back as values
                raise SelectorError(f"CEL runtime error: {_first_line(result)}")
            if not isinstance(result, bool | celtypes.BoolType):
                raise SelectorError(f"CEL runtime error: the expression gives {type(result).__name__}, not a bool")
            answer = self._answers[key] = bool(result)
        return answer


CEL_RECURSION_LIMIT = 2_500  # what celpy.Environment sets: CEL's minimum nesting, parsed and walked recursively


@contextmanager
def _cel_depth() -> Iterator[None]:
    """The recursion limit CEL needs, only while CEL runs. celpy raises the limit process-wide
    whenever an Environment is made; left raised, it changes what every other reader of the
    process accepts (a TOML file 500 levels deep parses instead of being refused as nested too
    deeply), so the limit is put back afterwards."""
    before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(before, CEL_RECURSION_LIMIT))
    try:
        yield
    finally:
        sys.setrecursionlimit(before)


def _first_line(error: BaseException) -> str:
    args = getattr(error, "args", ())
    text = str(args[0]) if args else str(error)
    return " ".join(text.split())[:200]

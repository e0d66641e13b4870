"""Reading the fields of Kubernetes objects out of YAML, with errors that name their place.

Every reader of a queues file (the Kueue kinds, resource groups, Kueue's Configuration) goes
through one `FieldReader`, so that every error is a one-line `InputError` naming the file,
the document (1-based position in the stream) and the field path
(``spec.resourceGroups[0].flavors[1].resources[0].nominalQuota``), and every field that is
ignored is listed in the warnings.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from scheduler.admission.manifests.quantities import (
    MAX_INT32,
    kind_of,
    parse_quantity,
    quantity_to_milli,
    shown,
)
from scheduler.errors import InputError
from scheduler.trace.io import control_character_problem

Policy = TypeVar("Policy", bound=StrEnum)
Default = TypeVar("Default")


class FieldReader:
    def __init__(self, source: Path) -> None:
        self.source = source
        self.number = 0  # the document being read
        self.warnings: list[str] = []
        # Kueue fields the replay accepts but does not model: what is ignored -> objects using it
        self.unmodelled: dict[str, list[str]] = {}

    def error(self, field_path: str | None, message: str, document: int | None = None) -> InputError:
        return InputError(self.source, message, document=document or self.number, field=field_path)

    def warn(self, message: str) -> None:
        self.warnings.append(f"{self.source.name}: document {self.number}: {message}")

    def not_modelled(self, what: str, where: str) -> None:
        """`where` (an object) uses a real Kueue field the replay ignores: one warning per
        field, naming every object that uses it (`unmodelled_warnings`)."""
        self.unmodelled.setdefault(what, []).append(where)

    def unmodelled_warnings(self) -> list[str]:
        lines = []
        for what, objects in self.unmodelled.items():
            shown_objects = ", ".join(objects[:5]) + (f" and {len(objects) - 5} more" if len(objects) > 5 else "")
            lines.append(f"{self.source.name}: {what} ({shown_objects})")
        return lines

    def unknown_fields(self, mapping: Mapping, known: set[str], path: str) -> None:
        for key in mapping:
            if key not in known:
                self.warn(f"field '{path}{key}' is not a known field; ignored")

    def mapping(self, value: Any, path: str, *, optional: bool = True) -> Mapping:
        if value is None and optional:
            return {}
        if not isinstance(value, Mapping):
            raise self.error(path, f"must be a mapping, got {kind_of(value)}")
        return value

    def sequence(self, value: Any, path: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(path, f"must be a list, got {kind_of(value)}")
        return value

    def name(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.error(path, f"must be a non-empty name, got {shown(value)}")
        problem = control_character_problem(value.strip())
        if problem is not None:
            raise self.error(path, problem)
        return value.strip()

    def choice(self, value: Any, path: str, allowed: Sequence[Policy], default: Default,
               aliases: Mapping[str, Policy] | None = None) -> Policy | Default:
        """One of `allowed` (enum members), or an old spelling listed in `aliases`."""
        if value is None:
            return default
        for policy in allowed:
            if value == policy.value:
                return policy
        if aliases and isinstance(value, str) and value in aliases:
            return aliases[value]
        spellings = [policy.value for policy in allowed] + list(aliases or ())
        raise self.error(path, f"must be one of {', '.join(spellings)}, got {shown(value)}")

    def quantity(self, value: Any, path: str) -> int:
        """A non-negative quantity in milli-units."""
        try:
            milli = quantity_to_milli(value)
        except ValueError as exc:  # the message says which: not a quantity, or past the bound
            raise self.error(path, str(exc)) from None
        if milli < 0:
            raise self.error(path, f"must be >= 0, got {shown(value)}")
        return milli

    def weight(self, spec: Mapping, path: str) -> float:
        """``fairSharing.weight`` of a ClusterQueue, Cohort or LocalQueue spec (default 1)."""
        fair = self.mapping(spec.get("fairSharing"), path + "fairSharing")
        self.unknown_fields(fair, {"weight"}, path + "fairSharing.")
        if "weight" not in fair:
            return 1.0
        try:
            weight = float(parse_quantity(fair["weight"]))
        except (ValueError, OverflowError):
            raise self.error(path + "fairSharing.weight", f"not a quantity: {shown(fair['weight'])}") from None
        if not math.isfinite(weight) or weight > MAX_INT32:
            raise self.error(path + "fairSharing.weight", f"must be at most {MAX_INT32:,}, got {shown(fair['weight'])}")
        if weight < 0:
            raise self.error(path + "fairSharing.weight", f"must be >= 0, got {shown(fair['weight'])}")
        return weight

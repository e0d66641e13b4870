"""Which pod labels and annotations an import carries into the trace's ``labels`` column: the
allocation keys showback can group by (docs/importers.md, "Labels and allocation keys").

A pod carries many labels that say nothing of who pays (``pod-template-hash``,
``controller-uid``, ``batch.kubernetes.io/job-name``); only keys on the allow-list are kept. An
entry is a key (``team``) or a prefix ending in ``*`` (``app.kubernetes.io/*``); ``default``
stands for `DEFAULT_ALLOCATION_KEYS`. A label and an annotation of the same key: the label
wins (labels are the object's identifying metadata). The members of one gang normally agree;
where they do not, the first member's value (in creation order) is kept and a note says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from scheduler.errors import InputError
from scheduler.trace.io import control_character_problem
from scheduler.trace.labels import (
    MAX_LABELS,
    MAX_VALUE_CHARS,
    RESERVED_VALUES,
    key_problem,
    labels_json,
)

DEFAULT_ALLOCATION_KEYS = ("team", "project", "cost-center", "cost_center", "app.kubernetes.io/*")


@dataclass(frozen=True)
class AllocationKeys:
    """The allow-list: exact keys and key prefixes."""

    keys: frozenset[str]
    prefixes: tuple[str, ...]

    @classmethod
    def parse(cls, text: str | None, option: str = "--label-keys") -> AllocationKeys:
        """``team,project,example.com/*`` (``default`` for the defaults; empty: none)."""
        entries: list[str] = []
        for entry in (DEFAULT_ALLOCATION_KEYS if text is None else text.split(",")):
            entry = entry.strip()
            if entry == "default":
                entries += DEFAULT_ALLOCATION_KEYS
            elif entry:
                entries.append(entry)
        keys, prefixes = set(), []
        for entry in entries:
            if entry.endswith("*"):
                prefix = entry[:-1]
                if "*" in prefix:
                    raise InputError(option, f"{entry!r}: '*' may only end an entry (a prefix)")
                prefixes.append(prefix)
                continue
            problem = key_problem(entry)
            if problem is not None or "*" in entry:
                raise InputError(option, f"{entry!r} {problem or 'holds a * that does not end it'}")
            keys.add(entry)
        return cls(frozenset(keys), tuple(prefixes))

    def allows(self, key: str) -> bool:
        return key in self.keys or any(key.startswith(prefix) for prefix in self.prefixes)

    def select(self, group_id: str, pods: Sequence[tuple[Mapping[str, str], Mapping[str, str]]],
               notes: list[str]) -> str:
        """The gang's allocation labels as the trace's canonical cell (pods: (labels,
        annotations) in creation order); keys left out for a reason get a note."""
        chosen: dict[str, str] = {}
        settled: set[str] = set()  # keys decided by an earlier member: kept, or left out with a note
        disagreed: set[str] = set()
        for pod_labels, pod_annotations in pods:
            for key, value in _merged(pod_labels, pod_annotations):
                if not self.allows(key):
                    continue
                if key in settled:
                    if key in chosen and chosen[key] != value and key not in disagreed:
                        disagreed.add(key)
                        notes.append(f"{group_id}: members disagree on {key!r} ({chosen[key]!r}, {value!r}); "
                                     f"the first member's {chosen[key]!r} is kept")
                    continue
                settled.add(key)
                problem = _value_problem(key, value)
                if problem:
                    notes.append(f"{group_id}: {key!r} left out of the labels: {problem}")
                else:
                    chosen[key] = value
        kept = dict(sorted(chosen.items()))
        if len(kept) > MAX_LABELS:
            notes.append(f"{group_id}: {len(kept)} allocation keys; the first {MAX_LABELS} by name are kept")
            kept = dict(list(kept.items())[:MAX_LABELS])
        return labels_json(kept)


def _merged(labels: Mapping[str, str], annotations: Mapping[str, str]) -> Iterable[tuple[str, str]]:
    yield from labels.items()
    yield from ((k, v) for k, v in annotations.items() if k not in labels)


def _value_problem(key: str, value: str) -> str | None:
    problem = key_problem(key)
    if problem:
        return f"the key {problem}"
    if not value:
        return "its value is empty"
    if len(value) > MAX_VALUE_CHARS:
        return f"its value is {len(value):,} characters long, at most {MAX_VALUE_CHARS:,}"
    if value in RESERVED_VALUES:
        return f"its value {value!r} is a name the cost records reserve"
    unprintable = control_character_problem(value)
    return f"its value {unprintable}" if unprintable else None

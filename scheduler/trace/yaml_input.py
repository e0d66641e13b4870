"""The one YAML reader of gpu-finops: safe tags only, and aliases bounded.

Every YAML input (Kueue manifests for `replay`, the importers' dumps, the queues file `advise`
searches, the ConfigMap text inside a dump) is read by `load_yaml_documents`, so one rule
holds everywhere:

- Only the safe tags (``yaml.CSafeLoader`` where PyYAML has libyaml, else ``SafeLoader``:
  the same values, ten times faster on large dumps). ``!!python/...`` is an error.
- **Aliases are bounded.** Loading shares an aliased value rather than copying it, so a
  "billion laughs" document loads in microseconds, but anything that then walks the values
  (a label map turned into text, a time search over every field, ``json.dumps``) visits each
  alias in full: 9 levels of 9 aliases is 387 million nodes (a probe of the importers ran
  18 minutes). The expanded size (every alias counted as the tree it stands for) is counted
  once over the distinct values, and a document whose expansion exceeds
  `MAX_ALIAS_GROWTH` times its distinct values plus `ALIAS_ALLOWANCE` is one line. A value
  holding itself through an alias (``&a [*a]``) is infinite when walked and is refused too.
  kubectl, Prometheus and the generator never write aliases: their files are never near it.
- Syntax errors name the line; nesting deeper than Python's stack, or an integer of more than
  4,300 digits, is one line as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from scheduler.errors import InputError

try:  # libyaml's loader is ~10x faster on big dumps; the pure-Python one reads the same
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Loader = yaml.SafeLoader

MAX_ALIAS_GROWTH = 10
"""How many times larger than its distinct values a document may become once aliases expand."""
ALIAS_ALLOWANCE = 100_000
"""Expanded nodes always allowed on top (a small file with a few shared anchors)."""


def load_yaml_documents(text: str, source: str | Path) -> list[Any]:
    """Every document of a YAML stream (``None`` for an empty one), or `InputError` naming
    ``source``: a syntax error (with its line), nesting too deep, or aliases past the bound."""
    try:
        documents = list(yaml.load_all(text, Loader=_Loader))
    except RecursionError:  # the composer recurses once per nesting level
        raise InputError(source, "not valid YAML: nested too deeply") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        raise InputError(source, f"not valid YAML: {where}{getattr(error, 'problem', None) or error}") from None
    except (ValueError, OverflowError) as error:  # e.g. an integer of more than 4,300 digits
        raise InputError(source, f"not valid YAML: a value cannot be read ({error})") from None
    for number, document in enumerate(documents, start=1):
        problem = alias_problem(document)
        if problem:
            where = f"document {number}: " if len(documents) > 1 else ""
            raise InputError(source, f"not valid YAML: {where}{problem}")
    return documents


def alias_problem(document: Any) -> str | None:
    """Why ``document`` (a loaded YAML value) is refused for its aliases, or None.

    Each distinct list or mapping is visited once (iteratively: a 100,000-deep document never
    reaches Python's stack limit); its expanded size is 1 plus its items' expanded sizes."""
    expanded: dict[int, int] = {}
    on_path: set[int] = set()
    distinct = 0
    stack: list[tuple[Any, bool]] = [(document, False)]
    while stack:
        value, done = stack.pop()
        key = id(value)
        items = _items(value)
        if done:
            on_path.discard(key)
            size = 1 + sum(expanded[id(item)] if type(item) in _CONTAINERS else 1 for item in items)
            expanded[key] = size
            limit = MAX_ALIAS_GROWTH * distinct + ALIAS_ALLOWANCE
            if size > limit:
                return (f"aliases expand it to more than {limit:,} values ({distinct:,} written): an alias "
                        "bomb? (aliases may add ten times the values written, plus 100,000)")
            continue
        if key in expanded:
            continue
        on_path.add(key)
        distinct += 1 + len(items)
        stack.append((value, True))
        for item in items:
            if type(item) in _CONTAINERS:
                if id(item) in on_path:
                    return "an alias refers to a value that holds it: the document is infinite"
                if id(item) not in expanded:
                    stack.append((item, False))
    return None


_CONTAINERS = (dict, list)  # what the safe loader builds for mappings and sequences


def _items(value: Any) -> list[Any]:
    if type(value) is dict:
        return [*value.keys(), *value.values()]
    return value if type(value) is list else []

"""Reading Kubernetes API dumps: JSON or YAML, one object, a ``List``, or many documents.

`read_objects(path)` returns every object of the file in order, ``List`` items flattened
(``kubectl get pods -A -o json`` writes one ``kind: List``; the raw API writes ``PodList``
whose items carry no ``kind``, which is then taken from the list's). A file may hold several
documents: YAML separated by ``---`` or JSON values one after another (``kubectl get -o json``
run twice into one file, or JSON Lines). Each object gets its position in the file (``row``,
1-based, counting objects after flattening) so that a rejected row points at it.

A file that is not UTF-8, not JSON or YAML, or holds no object raises `InputError` naming the
file and, for a syntax error, the line. A document that is not a mapping is returned as it is:
the importer rejects it as a row, like any other unusable object.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scheduler.errors import InputError
from scheduler.trace.yaml_input import load_yaml_documents


@dataclass(frozen=True, slots=True)
class SourceObject:
    """One object of a dump and where it came from."""

    source: str  # the file's base name, as messages show it
    row: int  # 1-based position among the file's objects (List items flattened)
    value: Any  # a mapping for a Kubernetes object; anything else is rejected by the caller

    @property
    def kind(self) -> str:
        return str(self.value.get("kind") or "") if isinstance(self.value, Mapping) else ""

    @property
    def metadata(self) -> Mapping[str, Any]:
        meta = self.value.get("metadata") if isinstance(self.value, Mapping) else None
        return meta if isinstance(meta, Mapping) else {}

    @property
    def namespace(self) -> str:
        return str(self.metadata.get("namespace") or "")

    @property
    def name(self) -> str:
        return str(self.metadata.get("name") or "")


def read_objects(path: Path) -> list[SourceObject]:
    """Every object of ``path`` in order; see the module docstring."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(path, f"not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror}") from None
    documents = list(_json_documents(text, path) if text.lstrip()[:1] in ("{", "[") else _yaml_documents(text, path))
    objects: list[SourceObject] = []
    for document in documents:
        for value in _flatten(document):
            objects.append(SourceObject(path.name, len(objects) + 1, value))
    if not objects:
        raise InputError(path, "holds no object (an empty dump?)")
    return objects


def _json_documents(text: str, path: Path) -> Iterator[Any]:
    """JSON values one after another (one value, or JSON Lines, or concatenated dumps)."""
    decoder = json.JSONDecoder()
    position, end = 0, len(text)
    while True:
        while position < end and text[position].isspace():
            position += 1
        if position >= end:
            return
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as error:
            raise InputError(path, f"not valid JSON: line {error.lineno} column {error.colno}: {error.msg}") from None
        except RecursionError:
            raise InputError(path, "not valid JSON: nested too deeply") from None
        except ValueError:  # an integer of more than 4,300 digits: Python will not read it
            line = text.count("\n", 0, position) + 1
            raise InputError(path, f"not valid JSON: the value starting at line {line} holds an integer of more "
                             "than 4,300 digits") from None
        yield value


def _yaml_documents(text: str, path: Path) -> Iterator[Any]:
    yield from (d for d in load_yaml_documents(text, path) if d is not None)  # aliases bounded


def _flatten(document: Any) -> Iterator[Any]:
    """A List (or PodList, NodeList, a bare JSON array) → its items; anything else as is."""
    if isinstance(document, list):
        for item in document:
            yield from _flatten(item)
        return
    if isinstance(document, Mapping) and isinstance(document.get("items"), list) and (
        str(document.get("kind") or "").endswith("List") or "kind" not in document
    ):
        item_kind = str(document.get("kind") or "").removesuffix("List")
        for item in document["items"]:
            if isinstance(item, Mapping) and not item.get("kind") and item_kind:
                # The raw API's PodList items carry no kind and apiVersion: the list's hold.
                item = {**item, "kind": item_kind, "apiVersion": document.get("apiVersion")}
            yield from _flatten(item)
        return
    yield document

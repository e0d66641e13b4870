"""Keying the price book by GPU model: which row prices a cluster's GPU product name.

A generated cluster names its GPUs as the price book does ("A100"); an imported one names them
by the node's product label, as the NVIDIA GPU feature discovery writes it
(``nvidia.com/gpu.product``: "NVIDIA-A100-SXM4-80GB", "NVIDIA-H100-80GB-HBM3",
"Tesla-V100-SXM2-16GB") or as a cloud writes it (GKE's ``cloud.google.com/gke-accelerator``:
"nvidia-tesla-a100"). A name resolves to a row of the book in this order (docs/cost-model.md,
"Keying the price book by GPU model"):

1. the row whose ``gpu_model`` is the name (letter case aside);
2. the row whose ``aliases`` column lists the name ("|" between names, letter case aside);
3. the built-in normaliser (`model_candidates`): the name read as a model and memory size
   ("NVIDIA-A100-SXM4-80GB" → "A100-80GB", then "A100"), the first a row's ``gpu_model`` names.

A name none of the three resolves is never priced at $0: the build stops with one line naming
it and how to key it (`missing_price_message`). A MIG slice ("…-MIG-1g.10gb") is not read as
its whole GPU: it resolves through the first two rules only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

ALIAS_SEPARATOR = "|"
_VENDOR_WORDS = frozenset({"NVIDIA", "TESLA", "GEFORCE", "QUADRO", "AMD", "INSTINCT"})
_MODEL = re.compile(r"[A-Z]{1,3}\d{1,4}[A-Z]{0,3}")  # A100, H100, L40S, A10G, GH200, T4, MI300X
_MEMORY = re.compile(r"\d+GB")


def split_aliases(text: str | None) -> tuple[str, ...]:
    """The names of an ``aliases`` cell: "|"-separated, blanks around them dropped."""
    return tuple(name.strip() for name in (text or "").split(ALIAS_SEPARATOR) if name.strip())


def model_candidates(product: str) -> tuple[str, ...]:
    """The models a GPU product name may be priced as, most specific first:
    "NVIDIA-A100-SXM4-80GB" → ("A100-80GB", "A100"); "nvidia-tesla-t4" → ("T4",);
    "NVIDIA-GeForce-RTX-4090" → ("RTX-4090",). A name that reads as no model, or a MIG slice,
    gives none."""
    words = [w for w in re.split(r"[-_\s]+", product.strip().upper()) if w]
    if "MIG" in words:
        return ()
    while words and words[0] in _VENDOR_WORDS:
        words = words[1:]
    if not words:
        return ()
    if words[0] == "RTX" and len(words) > 1:
        family, rest = f"RTX-{words[1]}", words[2:]
    elif _MODEL.fullmatch(words[0]):
        family, rest = words[0], words[1:]
    else:
        return ()
    memory = next((w for w in rest if _MEMORY.fullmatch(w)), None)
    return (f"{family}-{memory}", family) if memory else (family,)


def resolve_model(name: str, models: Iterable[str], aliases: Mapping[str, str]) -> str | None:
    """The book's model that prices ``name``: its own row, an alias, or the normaliser's reading
    (module docstring); ``models`` are the book's ``gpu_model`` values for one resource and
    ``aliases`` maps a lower-cased alias to its model. None when nothing prices it."""
    by_lower = {model.lower(): model for model in models}
    for candidate in (name, aliases.get(name.strip().lower()), *model_candidates(name)):
        if candidate and candidate.strip().lower() in by_lower:
            return by_lower[candidate.strip().lower()]
    return None


def suggested_key(product: str) -> str:
    """The model a starter price book keys ``product`` by: the normaliser's plainest reading
    ("NVIDIA-A100-SXM4-80GB" → "A100"), else the name as it is."""
    candidates = model_candidates(product)
    return candidates[-1] if candidates else product


def missing_price_message(names: Iterable[str], what: str = "used by the cluster's nodes") -> str:
    """One line: which names no row prices and the two ways to key them."""
    names = sorted(set(names))
    first = names[0]
    key = suggested_key(first)
    how = (f"add a row with gpu_model {key!r} and aliases {first!r}, or list {first!r} in the aliases "
           "column of the row that prices it" if key != first else
           f"add a row with gpu_model {first!r}, or list it in the aliases column of the row that prices it")
    return (f"no price for {', '.join(map(repr, names))} ({what}): {how} "
            "(docs/cost-model.md, \"Keying the price book by GPU model\")")

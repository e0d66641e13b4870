"""The starter price book an import writes beside cluster.csv (``prices.csv``).

An imported cluster names its GPUs by product ("NVIDIA-A100-SXM4-80GB"); the build needs a
price for each. The starter book keys every product the import saw by model
(`pipeline.gpu_models`): a model the demo's price book knows gets the demo's illustrative
prices, the products it was read from as its aliases, and a note saying to replace them; a
product the normaliser cannot read, or a model the demo does not price, gets a row whose
prices are `UNPRICED` and a note asking for them, so a build stops on it with one line
(never $0). The import writes the book through the write discipline, and never over a
``prices.csv`` of the user's (one edited since, or their own): that one is left as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gpu_finops.generator import load_preset
from pipeline.gpu_models import ALIAS_SEPARATOR, resolve_model, suggested_key
from pipeline.inputs import PRICE_COLUMNS, UNPRICED

PRICE_BOOK = "prices.csv"
STARTER_COLUMNS = ("gpu_model", *PRICE_COLUMNS, "aliases", "note")
DEMO_PRICE_NOTE = "the demo's illustrative price, not a quote: replace it with yours"
UNPRICED_NOTE = f"{UNPRICED}: no price known for this GPU; fill in your $ per GPU-hour"


@dataclass(frozen=True)
class StarterBook:
    rows: list[list[str]]  # STARTER_COLUMNS, one per model
    unpriced: list[str]  # the models left for the user to price

    def summary(self) -> dict[str, object]:
        return {"models": len(self.rows), "priced_at_demo_prices": len(self.rows) - len(self.unpriced),
                "unpriced": self.unpriced}


def demo_prices() -> dict[str, tuple[float, float, float]]:
    """The demo preset's price book: model -> (list, contracted, spot) $ per GPU-hour."""
    config, _ = load_preset("demo")
    return {m["name"]: tuple(float(m[c]) for c in PRICE_COLUMNS) for m in config["models"]}  # type: ignore[misc]


def starter_book(products: Iterable[str]) -> StarterBook:
    """One row per model the ``products`` resolve to (first the models the demo prices, in
    its order; then the unknown ones by name)."""
    known = demo_prices()
    aliases: dict[str, list[str]] = {}
    for product in sorted(set(products)):
        model = resolve_model(product, known, {}) or suggested_key(product)
        names = aliases.setdefault(model, [])
        if product != model:
            names.append(product)
    rows, unpriced = [], []
    for model in [m for m in known if m in aliases] + sorted(m for m in aliases if m not in known):
        alias_text = ALIAS_SEPARATOR.join(aliases[model])
        if model in known:
            rows.append([model, *(_price(p) for p in known[model]), alias_text, DEMO_PRICE_NOTE])
        else:
            rows.append([model, *([UNPRICED] * len(PRICE_COLUMNS)), alias_text, UNPRICED_NOTE])
            unpriced.append(model)
    return StarterBook(rows, unpriced)


def _price(value: float) -> str:
    return f"{value:g}"

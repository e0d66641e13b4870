"""``gpu-finops advise commitments``: per SKU, the commitment level of least expected cost.

A commitment of ``C`` GPUs of a SKU is paid every hour at the contracted price ``c``, used or
not; usage above it runs on demand at the list price ``L``. Over the replay's hours with
``u_h`` GPUs in use, the cost of ``C`` is::

    cost(C) = Σ_h  C·c + max(u_h − C, 0)·L

Each further committed GPU costs ``c`` an hour and saves ``L`` in the hours usage reaches it,
so the cost falls while ``P(u > C) > c / L`` and the best ``C`` is the ``1 − c/L`` quantile of
the per-hour distribution (the newsvendor rule); ``c / L`` is the **break-even utilisation**: a
committed GPU pays for itself when it is busy at least that share of the hours. The level is
searched over whole GPUs from 0 to the peak, the lowest of equal costs kept.

Usage: the GPUs held by workloads (every usage class but idle) on commitment-eligible nodes
(Committed and on-demand, not spot: spot-served usage already costs less than a commitment and is
not eligible) per hour of the **steady window** (`fct_usage_hourly`, ``phase = 'steady'``;
warm-up and drain are the trace's edges), hours without usage counted as 0, per GPU model (the
SKU ``gpu-<model>``). Coverage and utilisation are the marts' (`fct_commitment_utilization`):
covered ÷ eligible usage, covered ÷ committed hours.

Savings are against **today's bill**, not an all-on-demand one: today the eligible usage runs
under the cluster's own Committed GPUs of the model (``C0``, ``cost(C0)``), and the spot-served
usage costs what its records say in both; ``savings = cost(C0) − cost(C)``. With ``--all``, every
run of the database: under a sweep's scenarios (or ``advise quotas``' today and recommended
runs), what the commitment would be if that scenario were applied.

Outputs ``commitments.csv`` and ``commitments.md`` in ``--out`` (written beside, then renamed).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path

import polars as pl
from rich.console import Console
from rich.table import Table

from pipeline.connect import connect
from pipeline.gpu_models import missing_price_message, resolve_model, split_aliases
from scheduler.errors import InputError
from scheduler.eventlog.files import NotOurs
from scheduler.eventlog.writes import write_files


@dataclass(frozen=True)
class Commitment:
    run_id: str
    sku: str
    gpu_model: str
    hours: int
    mean_gpus: float  # eligible GPUs in use (spot-served usage is not eligible)
    peak_gpus: float
    list_price: float
    contracted_price: float
    break_even_utilisation: float
    committed_gpus: int
    coverage: float  # covered usage ÷ commitment-eligible usage (the marts' definition)
    utilisation: float  # share of the committed GPU-hours used
    spot_gpu_hours: float  # usage served by spot: not eligible, at its own cost in both bills
    today_committed_gpus: int  # the cluster's Committed GPUs of the model
    today_cost: float  # today's bill: the eligible usage under today's commitment, plus spot
    cost: float  # the bill with the advised commitment: the commitment, the on-demand rest, spot
    savings: float  # today_cost − cost


def best_commitment(usage: list[float], list_price: float, contracted_price: float) -> tuple[int, float]:
    """(committed GPUs, cost) of least cost over the hours ``usage`` (GPUs in use each hour)."""
    if not usage:
        return 0, 0.0
    best = (0, _cost(usage, 0, list_price, contracted_price))
    for level in range(1, math.ceil(max(usage)) + 1):
        cost = _cost(usage, level, list_price, contracted_price)
        if cost < best[1] - 1e-9:
            best = (level, cost)
    return best


def _cost(usage: list[float], level: int, list_price: float, contracted_price: float) -> float:
    return sum(level * contracted_price + max(u - level, 0.0) * list_price for u in usage)


def commitment_for(run_id: str, gpu_model: str, usage: list[float], list_price: float,
                   contracted_price: float, today_gpus: int = 0, spot: tuple[float, float] = (0.0, 0.0)) -> Commitment:
    """The advice for one SKU: ``usage`` the eligible GPUs in use per hour, ``today_gpus`` the
    cluster's Committed GPUs of the model, ``spot`` (GPU-hours, cost) of the spot-served usage."""
    level, cost = best_commitment(usage, list_price, contracted_price)
    today = _cost(usage, today_gpus, list_price, contracted_price)
    used = sum(usage)
    covered = sum(min(u, level) for u in usage)
    spot_gpu_hours, spot_cost = spot
    return Commitment(
        run_id, f"gpu-{gpu_model.lower()}", gpu_model, len(usage), round(used / len(usage), 4) if usage else 0.0,
        round(max(usage, default=0.0), 4), list_price, contracted_price,
        round(contracted_price / list_price, 4) if list_price else 0.0, level,
        round(covered / used, 4) if used else 0.0, round(covered / (level * len(usage)), 4) if level else 0.0,
        round(spot_gpu_hours, 4), today_gpus, round(today + spot_cost, 2), round(cost + spot_cost, 2),
        round(today - cost, 2))


_USAGE = """
WITH hours AS (
    SELECT r.run_id, unnest(range(r.steady_start_ts, r.drain_start_ts, INTERVAL 1 HOUR)) AS hour
    FROM dim_runs r WHERE r.run_id IN (SELECT unnest(?::VARCHAR[]))
), models AS (
    SELECT run_id, gpu_model,
           coalesce(sum(gpus) FILTER (WHERE pricing_category = 'Committed'), 0) AS committed_gpus
    FROM dim_nodes WHERE gpu_model IS NOT NULL AND gpus > 0
    GROUP BY ALL
), used AS (
    -- spot-served usage is not commitment-eligible: apart, at its own cost
    SELECT run_id, gpu_model, date_trunc('hour', charge_period_start) AS hour,
           coalesce(sum(gpu_hours) FILTER (WHERE pricing_category <> 'Dynamic'), 0) AS gpu_hours,
           coalesce(sum(gpu_hours) FILTER (WHERE pricing_category = 'Dynamic'), 0) AS spot_gpu_hours,
           coalesce(sum(effective_cost) FILTER (WHERE pricing_category = 'Dynamic'), 0) AS spot_cost
    FROM fct_usage_hourly
    WHERE usage_class <> 'idle' AND phase = 'steady' AND resource = 'gpu' AND gpu_model IS NOT NULL
    GROUP BY ALL
)
SELECT h.run_id, m.gpu_model, h.hour, coalesce(u.gpu_hours, 0) AS gpus, m.committed_gpus,
       coalesce(u.spot_gpu_hours, 0), coalesce(u.spot_cost, 0)
FROM hours h JOIN models m USING (run_id)
LEFT JOIN used u ON u.run_id = h.run_id AND u.gpu_model = m.gpu_model AND u.hour = h.hour
ORDER BY h.run_id, m.gpu_model, h.hour
"""


def read_prices(path: Path) -> tuple[dict[str, tuple[float, float]], dict[str, str]]:
    """gpu_model -> (list, contracted) price per GPU-hour from the price book's GPU rows, and
    its aliases (lower-cased alias -> gpu_model; `pipeline.gpu_models`)."""
    if not path.is_file():
        raise InputError(path, "file not found")
    try:
        book = pl.read_csv(path, infer_schema_length=0)
    except (pl.exceptions.ComputeError, pl.exceptions.NoDataError) as error:
        raise InputError(path, f"not a CSV price book: {' '.join(str(error).split())[:200]}") from None
    for column in ("gpu_model", "list_usd_per_gpu_hour", "contracted_usd_per_gpu_hour"):
        if column not in book.columns:
            raise InputError(path, f"missing column {column!r} (the price book's contracted price is the "
                             "commitment term)", field=column)
    prices = {}
    aliases: dict[str, str] = {}
    for row_number, row in enumerate(book.iter_rows(named=True), start=2):
        if not row["gpu_model"] or (row.get("resource") or "gpu").strip().lower() != "gpu":
            continue
        aliases.update({alias.lower(): row["gpu_model"] for alias in split_aliases(row.get("aliases"))})
        try:
            values = (float(row["list_usd_per_gpu_hour"]), float(row["contracted_usd_per_gpu_hour"] or "nan"))
        except ValueError:
            raise InputError(path, "prices must be numbers", row=row_number, field="contracted_usd_per_gpu_hour") \
                from None
        if not all(math.isfinite(v) and v >= 0 for v in values):
            raise InputError(path, "prices must be finite numbers >= 0", row=row_number,
                             field="contracted_usd_per_gpu_hour")
        prices[row["gpu_model"]] = values
    return prices, aliases


def advise_commitments(db: Path, prices: Path, out: Path, *, run_id: str | None = None,
                       all_runs: bool = False) -> list[Commitment]:
    book, aliases = read_prices(Path(prices))
    if not Path(db).is_file():
        raise InputError(db, "file not found")
    with connect(db, read_only=True) as con:
        runs = [r for (r,) in con.execute("SELECT run_id FROM dim_runs ORDER BY run_id").fetchall()]
        if run_id is not None:
            if run_id not in runs:
                raise InputError(db, f"no run {run_id!r}; runs: {', '.join(runs)}", field="--run-id")
            runs = [run_id]
        elif len(runs) > 1 and not all_runs:
            raise InputError(db, f"{len(runs)} runs: give --run-id or --all ({', '.join(runs[:5])}{'…' if len(runs) > 5 else ''})",
                             field="--run-id")
        rows = con.execute(_USAGE, [runs]).fetchall()
    usage: dict[tuple[str, str], list[float]] = {}
    today: dict[tuple[str, str], int] = {}
    spot: dict[tuple[str, str], tuple[float, float]] = {}
    for run, model, _, gpus, committed_gpus, spot_gpu_hours, spot_cost in rows:
        usage.setdefault((run, model), []).append(float(gpus))
        today[run, model] = int(committed_gpus)
        hours_so_far, cost_so_far = spot.get((run, model), (0.0, 0.0))
        spot[run, model] = (hours_so_far + float(spot_gpu_hours), cost_so_far + float(spot_cost))
    results = []
    for (run, model), hours in usage.items():
        priced_as = resolve_model(model, book, aliases)
        if priced_as is None:
            raise InputError(prices, missing_price_message([model], f"a GPU model of run {run}"), field="gpu_model")
        results.append(commitment_for(run, model, hours, *book[priced_as], today_gpus=today[run, model],
                                      spot=spot[run, model]))
    _write(Path(out), results, inputs=[Path(db), Path(prices)])
    return results


def _write(out: Path, results: list[Commitment], inputs: list[Path]) -> None:
    """Both files through the one write discipline (scheduler/eventlog/writes.py): under the
    folder's lock, never over a file of the user's or one of the command's inputs."""
    frame = pl.DataFrame([asdict(r) for r in results], infer_schema_length=None) if results else pl.DataFrame()
    csv_text = frame.write_csv()
    lines = ["# Commitment level per SKU", "",
             "Least expected cost over the steady window's hours, against today's bill (docs/advice.md). "
             "Spot-served usage is not commitment-eligible: it costs the same in both bills.", "",
             "| run | SKU | committed GPUs (today) | mean / peak eligible GPUs | spot GPU-h | break-even utilisation | "
             "coverage | utilisation | today's bill | with the advice | savings |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        lines.append(f"| {_md(r.run_id)} | {_md(r.sku)} | {r.committed_gpus} ({r.today_committed_gpus}) | "
                     f"{r.mean_gpus:,.1f} / {r.peak_gpus:,.1f} | {r.spot_gpu_hours:,.1f} | "
                     f"{r.break_even_utilisation:.0%} | {r.coverage:.0%} | {r.utilisation:.0%} | ${r.today_cost:,.2f} | "
                     f"${r.cost:,.2f} | ${r.savings:,.2f} |")
    try:
        write_files(out, {"commitments.csv": csv_text, "commitments.md": "\n".join(lines) + "\n"},
                    inputs=inputs, what="--out")
    except NotOurs as refused:
        raise InputError(out, str(refused).removeprefix(f"{out}: ")) from None


def _md(text: str) -> str:
    from dashboards.text import markdown_text

    return markdown_text(text)


def print_commitments(results: list[Commitment], console: Console) -> None:
    table = Table(title="commitment level per SKU (steady window), against today's bill")
    for column in ("run", "SKU", "commit GPUs", "today", "mean GPUs", "spot GPU-h", "break-even", "coverage",
                   "utilisation", "today's bill", "with advice", "savings"):
        table.add_column(column, justify="left" if column in ("run", "SKU") else "right")
    for r in results:
        table.add_row(r.run_id, r.sku, str(r.committed_gpus), str(r.today_committed_gpus), f"{r.mean_gpus:,.1f}",
                      f"{r.spot_gpu_hours:,.0f}", f"{r.break_even_utilisation:.0%}", f"{r.coverage:.0%}",
                      f"{r.utilisation:.0%}", f"${r.today_cost:,.0f}", f"${r.cost:,.0f}", f"${r.savings:,.0f}")
    console.print(table)

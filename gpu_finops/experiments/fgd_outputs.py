"""The FGD study's files: the curves of every run (CSV), each run's figures at the report
points (CSV), their mean ± spread per policy (CSV), the plot (PNG) and ``experiment.json``.

Every file is written to a temporary name and renamed into place. The plot is an Altair
chart (a pure function of the results) rendered to PNG by vl-convert, offline.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import altair as alt

from gpu_finops.experiments.fgd import SeedRun, StudyInputs
from gpu_finops.experiments.fgd_report import (
    ALLOCATION_AT,
    FRAGMENTATION_AT,
    CurvePoint,
    PolicyResult,
    PolicySummary,
    mean_curves,
    summarise,
)
from scheduler.eventlog.writes import sha256_file
from scheduler.trace.checks import write_rejected_csv
from scheduler.trace.io import atomic_write_bytes, atomic_write_text, csv_text

CURVE_COLUMNS = (
    "policy", "seed", "arrived_pct", "pods", "allocation_pct", "fragmentation_pct", "fragmented_gpus",
    "placed_pods", "failed_pods",
)


def write_outputs(
    inputs: StudyInputs,
    runs: Sequence[SeedRun],
    results: Sequence[PolicyResult],
    out: Path,
    *,
    plot: bool = True,
) -> dict[str, Path]:
    """Write curves.csv, seeds.csv, summary.csv, experiment.json, fgd.png (and rejected.csv)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / f"{name}.csv" for name in ("curves", "seeds", "summary")}
    paths["manifest"] = out / "experiment.json"
    summaries = summarise(results)
    atomic_write_text(paths["curves"], csv_text(CURVE_COLUMNS, (_curve_row(p) for r in results for p in r.points)))
    atomic_write_text(paths["seeds"], csv_text(*seed_table(results)))
    atomic_write_text(paths["summary"], csv_text(*summary_table(summaries)))
    if inputs.rejected:
        paths["rejected"] = out / "rejected.csv"
        write_rejected_csv(inputs.rejected, paths["rejected"])
    options = inputs.options
    manifest = {
        "experiment": "fgd",
        "inputs": {
            "pods": {"file": inputs.pods_path.name, "sha256": sha256_file(inputs.pods_path), "rows": inputs.pod_rows,
                     "rejected_rows": len(inputs.rejected)},
            "cluster": {"file": inputs.cluster_path.name, "sha256": sha256_file(inputs.cluster_path),
                        "nodes": len(inputs.cluster.nodes), "gpus": inputs.cluster.total_gpus},
        },
        "rules": options.rules,
        "tie_break": options.ties,
        "popularity": options.popularity_share,
        "target_share": options.target_share,
        "seeds": [run.seed for run in runs],
        "arrivals": {str(run.seed): len(run.arrivals) for run in runs},
        "task_types": {str(run.seed): run.task_types for run in runs},
        "policies": list(dict.fromkeys(r.policy for r in results)),
    }
    atomic_write_text(paths["manifest"], json.dumps(manifest, indent=2) + "\n")
    if plot:
        paths["plot"] = out / "fgd.png"
        seeds = [run.seed for run in runs]
        label = f"seed {seeds[0]}" if len(seeds) == 1 else f"{len(seeds)} seeds ({seeds[0]}–{seeds[-1]})"
        title = f"{inputs.pods_path.stem}, {options.rules} rules, {label}"
        atomic_write_bytes(paths["plot"], chart_png(study_chart(results, title=title)))
    return paths


def seed_table(results: Sequence[PolicyResult]) -> tuple[list[str], list[list[object]]]:
    """One row per policy and seed: the figures at the report points."""
    header = ["policy", "seed"]
    header += [f"allocation_at_{pct}_pct" for pct in ALLOCATION_AT]
    header += [f"fragmentation_at_{pct}_pct" for pct in FRAGMENTATION_AT]
    header += ["placed_pods", "failed_pods", "seconds", "cpu_seconds"]
    rows: list[list[object]] = []
    for result in results:
        row: list[object] = [result.policy, result.seed]
        row += [result.at(pct).allocation_pct for pct in ALLOCATION_AT]
        row += [round(result.at(pct).fragmentation_pct, 2) for pct in FRAGMENTATION_AT]
        row += [result.last.placed_pods, result.last.failed_pods, round(result.seconds, 2), round(result.cpu_seconds, 2)]
        rows.append(row)
    return header, rows


def summary_table(summaries: Sequence[PolicySummary]) -> tuple[list[str], list[list[object]]]:
    """One row per policy: mean and sample standard deviation over its seeds."""
    header = ["policy", "seeds"]
    for pct in ALLOCATION_AT:
        header += [f"allocation_at_{pct}_pct_mean", f"allocation_at_{pct}_pct_std"]
    for pct in FRAGMENTATION_AT:
        header += [f"fragmentation_at_{pct}_pct_mean", f"fragmentation_at_{pct}_pct_std"]
    header += ["seconds_mean", "cpu_seconds_mean"]
    rows: list[list[object]] = []
    for summary in summaries:
        row: list[object] = [summary.policy, len(summary.seeds)]
        for spread in [*summary.allocation.values(), *summary.fragmentation.values()]:
            row += [round(spread.mean, 2), round(spread.std, 2)]
        row += [round(summary.seconds.mean, 2), round(summary.cpu_seconds.mean, 2)]
        rows.append(row)
    return header, rows


def _curve_row(p: CurvePoint) -> list[object]:
    return [p.policy, p.seed, p.arrived_pct, p.pods, p.allocation_pct, round(p.fragmentation_pct, 4),
            round(p.fragmented_gpus, 3), p.placed_pods, p.failed_pods]


def study_chart(results: Sequence[PolicyResult], *, title: str) -> alt.HConcatChart:
    """Two panels against arrived GPU demand: the GPU allocation ratio and the
    fragmentation ratio, one line per policy at the mean over seeds, with a band of one
    standard deviation either side when there are several seeds. Pure: no file, no I/O."""
    points = mean_curves(results)
    rows = [
        {"policy": p.policy, "arrived_pct": p.arrived_pct, "seeds": p.allocation.runs,
         "allocation_mean": p.allocation.mean, "allocation_std": p.allocation.std,
         "allocation_low": p.allocation.mean - p.allocation.std, "allocation_high": p.allocation.mean + p.allocation.std,
         "fragmentation_mean": p.fragmentation.mean, "fragmentation_std": p.fragmentation.std,
         "fragmentation_low": p.fragmentation.mean - p.fragmentation.std,
         "fragmentation_high": p.fragmentation.mean + p.fragmentation.std}
        for p in points
    ]
    order = list(dict.fromkeys(r.policy for r in results))
    several = any(p.allocation.runs > 1 for p in points)
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("arrived_pct:Q", title="arrived GPU demand (% of capacity)"),
        color=alt.Color("policy:N", sort=order, title="policy"),
    )

    def panel(measure: str, axis: str, heading: str, zero: bool) -> alt.Chart | alt.LayerChart | alt.FacetChart:
        line = base.mark_line().encode(
            y=alt.Y(f"{measure}_mean:Q", title=axis, scale=alt.Scale(zero=zero)),
            tooltip=["policy:N", "arrived_pct:Q", alt.Tooltip(f"{measure}_mean:Q", format=".2f"),
                     alt.Tooltip(f"{measure}_std:Q", format=".2f"), "seeds:Q"],
        )
        if not several:
            return line.properties(width=360, height=260, title=heading)
        band = base.mark_area(opacity=0.2).encode(y=f"{measure}_low:Q", y2=f"{measure}_high:Q")
        return alt.layer(band, line).properties(width=360, height=260, title=heading)

    return alt.hconcat(
        panel("allocation", "GPU allocation ratio (%)", "GPU allocation", False),
        panel("fragmentation", "fragmentation ratio (% of idle GPUs)", "GPU fragmentation", True),
    ).properties(title=title).configure_legend(symbolOpacity=1, symbolType="stroke")


def chart_png(chart: alt.TopLevelMixin) -> bytes:
    import vl_convert as vlc

    return bytes(vlc.vegalite_to_png(chart.to_json(), scale=1.5))

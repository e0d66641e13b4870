"""Inputs and outputs of the FGD experiment: read the pod list and the cluster, write the
curves (CSV), the summary (CSV), the plot (PNG) and ``experiment.json``.

Every file is written to a temporary name and renamed into place. The plot is an Altair
chart rendered to PNG by vl-convert, offline (no network, no browser).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gpu_finops.experiments.fgd import (
    DEFAULT_STEP,
    DEFAULT_TARGET_SHARE,
    REPORT_SHARES,
    Arrival,
    CurvePoint,
    PolicyResult,
    resample_arrivals,
    target_workload,
)
from scheduler.errors import InputError
from scheduler.model import Cluster
from scheduler.plugins.fgd import DEFAULT_POPULARITY_THRESHOLD, TargetWorkload
from scheduler.trace.checks import write_rejected_csv
from scheduler.trace.generic import RejectedRow
from scheduler.trace.inventories import read_any_cluster
from scheduler.trace.io import atomic_write_bytes, atomic_write_text, csv_text
from scheduler.trace.openb import read_openb_pods

CURVE_COLUMNS = (
    "policy", "arrived_share_pct", "arrived_pods", "arrived_gpus", "allocated_gpus",
    "allocation_ratio_pct", "fragmented_gpus", "fragmentation_ratio_pct", "placed_pods", "failed_pods",
)


@dataclass(frozen=True)
class ExperimentInputs:
    pods_path: Path
    cluster_path: Path
    cluster: Cluster
    arrivals: list[Arrival]
    workload: TargetWorkload
    pod_rows: int
    rejected: tuple[RejectedRow, ...]
    seed: int
    target_share: float
    popularity_threshold: float


def prepare_experiment(
    pods_path: Path,
    cluster_path: Path,
    *,
    seed: int = 42,
    target_share: float = DEFAULT_TARGET_SHARE,
    popularity_threshold: float = DEFAULT_POPULARITY_THRESHOLD,
) -> ExperimentInputs:
    """Read an openb pod list and a cluster (any inventory format), resample and shuffle."""
    pods_path, cluster_path = Path(pods_path), Path(cluster_path)
    if not target_share > 0:
        raise InputError("--target", f"must be > 0 (a share of the GPU capacity), got {target_share}")
    if not 0 < popularity_threshold <= 1:
        raise InputError("--popularity", f"must be in (0, 1], got {popularity_threshold}")
    cluster = read_any_cluster(cluster_path)
    if cluster.total_gpus <= 0:
        raise InputError(cluster_path, "the cluster has no GPUs")
    parsed = read_openb_pods(pods_path)
    if not any(p.total_gpu_milli for p in parsed.pods):
        raise InputError(pods_path, "no usable pod asks for a GPU: the demand can never reach the target")
    arrivals = resample_arrivals(parsed.pods, cluster.total_gpus, target_share, seed)
    workload = target_workload(arrivals, popularity_threshold)
    return ExperimentInputs(pods_path, cluster_path, cluster, arrivals, workload, parsed.input_rows,
                            parsed.rejected, seed, target_share, popularity_threshold)


def write_outputs(
    inputs: ExperimentInputs,
    results: Sequence[PolicyResult],
    out: Path,
    *,
    tie_break: str,
    seconds: dict[str, float] | None = None,
    step: float = DEFAULT_STEP,
    plot: bool = True,
) -> dict[str, Path]:
    """Write curves.csv, summary.csv, experiment.json, fgd.png (and rejected.csv)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"curves": out / "curves.csv", "summary": out / "summary.csv", "manifest": out / "experiment.json"}
    atomic_write_text(paths["curves"], csv_text(CURVE_COLUMNS, (_curve_row(p) for r in results for p in r.points)))
    atomic_write_text(paths["summary"], csv_text(*summary_table(results, seconds)))
    if inputs.rejected:
        paths["rejected"] = out / "rejected.csv"
        write_rejected_csv(inputs.rejected, paths["rejected"])
    manifest = {
        "experiment": "fgd",
        "inputs": {
            "pods": {"file": inputs.pods_path.name, "sha256": _sha256(inputs.pods_path), "rows": inputs.pod_rows,
                     "rejected_rows": len(inputs.rejected)},
            "cluster": {"file": inputs.cluster_path.name, "sha256": _sha256(inputs.cluster_path),
                        "nodes": len(inputs.cluster.nodes), "gpus": inputs.cluster.total_gpus},
        },
        "seed": inputs.seed,
        "target_share": inputs.target_share,
        "popularity_threshold": inputs.popularity_threshold,
        "task_types": len(inputs.workload.types),
        "arrivals": len(inputs.arrivals),
        "tie_break": tie_break,
        "step": step,
        "policies": [r.policy for r in results],
    }
    atomic_write_text(paths["manifest"], json.dumps(manifest, indent=2) + "\n")
    if plot:
        paths["plot"] = out / "fgd.png"
        atomic_write_bytes(paths["plot"], curves_png(results, title=f"{inputs.pods_path.stem}, seed {inputs.seed}"))
    return paths


def summary_table(
    results: Sequence[PolicyResult], seconds: dict[str, float] | None = None
) -> tuple[list[str], list[list[object]]]:
    """One row per policy: allocation and fragmentation ratios at 100 % and 130 % of demand."""
    header = ["policy"]
    for share in REPORT_SHARES:
        header += [f"allocation_at_{share * 100:.0f}_pct", f"fragmentation_at_{share * 100:.0f}_pct"]
    header += ["placed_pods", "failed_pods"] + (["seconds"] if seconds is not None else [])
    rows: list[list[object]] = []
    for result in results:
        row: list[object] = [result.policy]
        for share in REPORT_SHARES:
            point = result.at(share)
            row += [round(point.allocation_ratio * 100, 2), round(point.fragmentation_ratio * 100, 2)]
        last = result.points[-1]
        row += [last.placed_pods, last.failed_pods]
        if seconds is not None:
            row.append(round(seconds.get(result.policy, 0.0), 1))
        rows.append(row)
    return header, rows


def _curve_row(p: CurvePoint) -> list[object]:
    return [
        p.policy, round(p.arrived_share * 100, 4), p.arrived_pods, round(p.arrived_gpus, 3),
        round(p.allocated_gpus, 3), round(p.allocation_ratio * 100, 4),
        round(p.fragmented_gpus, 3), round(p.fragmentation_ratio * 100, 4),
        p.placed_pods, p.failed_pods,
    ]


def curves_png(results: Sequence[PolicyResult], *, title: str) -> bytes:
    """Two line charts side by side against arrived demand: GPU allocation ratio and
    fragmentation ratio, one line per policy (Altair → PNG with vl-convert, offline)."""
    import altair as alt
    import vl_convert as vlc

    rows = [
        {"policy": r.policy, "arrived": round(p.arrived_share * 100, 2),
         "allocation": round(p.allocation_ratio * 100, 3), "fragmentation": round(p.fragmentation_ratio * 100, 3)}
        for r in results for p in r.points
    ]
    order = [r.policy for r in results]
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("arrived:Q", title="arrived GPU demand (% of capacity)"),
        color=alt.Color("policy:N", sort=order, title="policy"),
    )
    allocation = base.mark_line().encode(
        y=alt.Y("allocation:Q", title="GPU allocation ratio (%)", scale=alt.Scale(zero=False))
    ).properties(width=360, height=260, title="GPU allocation")
    fragmentation = base.mark_line().encode(
        y=alt.Y("fragmentation:Q", title="fragmentation ratio (% of unallocated GPUs)")
    ).properties(width=360, height=260, title="GPU fragmentation")
    chart = alt.hconcat(allocation, fragmentation).properties(title=title)
    return bytes(vlc.vegalite_to_png(chart.to_json(), scale=1.5))


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

"""`gpu-finops showback`: the bill of one run grouped by team or by a pod label
(``--group-by label:cost-center``), under an idle policy, in a table, CSV or JSON.

The numbers are the marts' (fct_chargeback by team, fct_label_allocation by label): this
module picks the grouping, names the groups in words (``Unlabelled`` for workloads without the
label, ``Unallocated (idle)`` for the platform line) and adds the total, which is the run's
FOCUS total (Σ EffectiveCost of the Usage rows) over the selected phase.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:  # pandas is imported where a table is written, not when the CLI builds its parser
    import pandas as pd

COLUMNS = ("group", "gpu_hours", "usage_cost", "idle_share_gpu_hours", "idle_share_cost", "charged_cost", "share")


def add_showback(sub: argparse._SubParsersAction) -> None:
    help_text = "cost per team or per pod label (--group-by label:KEY) under an idle policy"
    p = sub.add_parser("showback", help=help_text, description=help_text + "; docs/cost-model.md §6.3")
    p.set_defaults(handler=_cmd_showback, command="showback")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    p.add_argument("--db", required=True, help="the DuckDB database written by build (opened read-only)")
    p.add_argument("--run-id", help="which run (default: the newest)")
    p.add_argument("--group-by", default="team", metavar="team|label:KEY",
                   help="team (default), or a pod label or annotation the trace carries, e.g. label:cost-center")
    p.add_argument("--idle-policy", default="separate", choices=("separate", "window", "node", "cause"),
                   help="who carries idle capacity: nobody (separate, the default: showback), the users of "
                   "each period and GPU model (window), of each node (node), each cause's owner (cause)")
    p.add_argument("--phase", default="all", choices=("steady", "warmup", "drain", "all"),
                   help="run phase (x_Phase); all (default): the whole run. The window is named in the output")
    p.add_argument("--format", default="table", choices=("table", "csv", "json"), help="how to print the rows (default: %(default)s)")


def _cmd_showback(args: argparse.Namespace) -> int:
    from dashboards import data

    group_by = data.GroupBy.parse(args.group_by)
    con = data.connect_read_only(Path(args.db))
    try:
        runs = data.list_runs(con)
        if runs.empty:
            from dashboards.errors import DashboardError

            raise DashboardError(f"{args.db}: no run in the database")
        run_id = args.run_id or str(runs["run_id"].iloc[0])
        if run_id not in set(runs["run_id"]):
            from dashboards.errors import DashboardError

            raise DashboardError(f"no run {run_id!r} in {args.db} (runs: {', '.join(map(str, runs['run_id']))})")
        filters = data.with_phase(con, data.Filters(run_id=run_id), None if args.phase == "all" else args.phase)
        frame = data.showback(con, filters, group_by, args.idle_policy)
        total = float(data.headline_metrics(con, filters)["total_cost"])
        window = data.window_label(filters, data.run_phases(con, run_id))
    finally:
        con.close()
    try:
        write_showback(readable(frame), group_by.text, args.idle_policy, run_id, total, args.format, sys.stdout,
                       window)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has all it wanted; no traceback, nothing more to say
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def readable(frame: pd.DataFrame) -> pd.DataFrame:
    """The groups in words: a label value as written, the two reserved groups named."""
    from dashboards import labels

    return frame.assign(group=frame["group"].map(labels.allocation_name))


def write_showback(frame: pd.DataFrame, group_by: str, policy: str, run_id: str, total: float, fmt: str,
                   out: TextIO, window: str = "") -> None:
    rows = frame[list(COLUMNS)]
    if fmt == "json":
        json.dump({"run_id": run_id, "window": window, "group_by": group_by, "idle_policy": policy, "total_cost": total,
                   "rows": json.loads(rows.to_json(orient="records"))}, out, indent=2)
        out.write("\n")
        return
    if fmt == "csv":
        from scheduler.eventlog.writes import neutralise_formula

        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COLUMNS)
        for record in rows.itertuples(index=False):
            writer.writerow([neutralise_formula(v) if isinstance(v, str) else v for v in record])
        return
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"Showback of {run_id} by {group_by}, idle policy {policy}" + (f"; {window}" if window else ""),
                  title_justify="left")
    for name, header in zip(COLUMNS, ("group", "GPU-h", "usage $", "idle GPU-h", "idle share $", "charged $",
                                      "share"), strict=True):
        table.add_column(header, justify="left" if name == "group" else "right")
    for record in rows.itertuples(index=False):
        group, hours, usage, idle_hours, idle, charged, share = record
        table.add_row(str(group), f"{hours:,.1f}", f"{usage:,.2f}", f"{idle_hours:,.1f}", f"{idle:,.2f}",
                      f"{charged:,.2f}", "" if pd.isna(share) else f"{share:.1%}")
    charged_sum = float(rows["charged_cost"].sum())
    table.add_section()
    table.add_row("Total", f"{rows['gpu_hours'].sum():,.1f}", f"{rows['usage_cost'].sum():,.2f}",
                  f"{rows['idle_share_gpu_hours'].sum():,.1f}", f"{rows['idle_share_cost'].sum():,.2f}",
                  f"{charged_sum:,.2f}", "")
    console = Console(file=out, soft_wrap=True, width=None if out.isatty() else 160, highlight=False, emoji=False)
    console.print(table, markup=False)
    console.print(f"FOCUS total (Σ EffectiveCost of the Usage rows): ${total:,.2f}", markup=False)

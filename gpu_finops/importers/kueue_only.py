"""`gpu-finops import kueue`: Kueue objects alone → DIR/queues.yaml (for a cluster file written
by hand or by another importer). Objects that are not read are listed in
DIR/queues-rejected.csv and on stderr; with ``--nodes``, flavors are checked against them."""

from __future__ import annotations

import sys
from pathlib import Path

from gpu_finops.importers.kubectl import ImportOptions, read_nodes
from gpu_finops.importers.kueue import import_kueue, render_queues
from gpu_finops.importers.output import REJECTED_COLUMNS, csv_text, write_files


def import_kueue_only(kueue: Path, out: Path, nodes: list[Path], options: ImportOptions) -> Path:
    node_rows = read_nodes(nodes, options.labels)[0] if nodes else None
    result = import_kueue(kueue, node_rows, options.level_of)
    files = {"queues.yaml": render_queues(result)}
    if result.rejected:
        files["queues-rejected.csv"] = csv_text(REJECTED_COLUMNS, ([getattr(r, c) for c in REJECTED_COLUMNS]
                                                               for r in result.rejected))
    write_files(out, files, stale=("queues-rejected.csv",), inputs=[kueue, *nodes])
    for row in result.rejected:
        print(f"skipped {row.source} row {row.row} ({row.kind} {row.name}): {row.reason}", file=sys.stderr)
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    counts = ", ".join(f"{n} {kind}" for kind, n in result.counts().items()) or "no object"
    print(f"{counts} → {out / 'queues.yaml'}")
    return out / "queues.yaml"

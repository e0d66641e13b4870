"""`gpu-finops import kubectl|kueue|prometheus`: the command-line side (arguments, summary)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console

from gpu_finops.importers.output import ImportResult


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kueue", help="Kueue objects (kubectl get clusterqueues,localqueues,resourceflavors,"
                        "cohorts,workloadpriorityclasses -A -o yaml) → DIR/queues.yaml")
    parser.add_argument("--out", required=True, help="folder for trace.csv, cluster.csv, queues.yaml, rejected.csv, "
                        "pods.csv, import.json and a starter price book, prices.csv")
    parser.add_argument("--tenant-label", help="pod label naming the team (default: the namespace)")
    parser.add_argument("--observed-at", help="when the dumps were taken, ISO 8601 (default: the latest time in them); "
                        "pods still running are cut there")
    parser.add_argument("--pending-duration", type=float, metavar="SECONDS",
                        help="replay pods that never started with this run time (default: reject them)")
    parser.add_argument("--gpu-product-label", help="node label naming the GPU model, tried before "
                        "nvidia.com/gpu.product, cloud.google.com/gke-accelerator, …")
    parser.add_argument("--block-label", help="node label naming the network block (tried first)")
    parser.add_argument("--rack-label", help="node label naming the rack (tried first)")
    parser.add_argument("--label-keys", metavar="LIST",
                        help="pod labels and annotations carried into the trace's labels column, the keys "
                        "showback can group by: keys and prefixes ending in * (default: team, project, "
                        "cost-center, cost_center, app.kubernetes.io/*; 'default' stands for these, '' for none)")


def options_of(args: argparse.Namespace):
    from gpu_finops.importers.allocation_keys import AllocationKeys
    from gpu_finops.importers.kubectl import ImportOptions
    from scheduler.errors import InputError

    if args.pending_duration is not None and not args.pending_duration > 0:
        raise InputError("--pending-duration", f"must be > 0 seconds, got {args.pending_duration}")
    options = ImportOptions(args.tenant_label, args.observed_at, args.pending_duration, args.gpu_product_label,
                            args.block_label, args.rack_label, args.label_keys)
    AllocationKeys.parse(options.label_keys)  # a bad entry stops here, before any file is read
    return options


def run(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if args.source == "kubectl":
        from gpu_finops.importers.kubectl import import_kubectl

        result = import_kubectl([Path(p) for p in args.pods], [Path(p) for p in args.nodes], out,
                                kueue=Path(args.kueue) if args.kueue else None, options=options_of(args))
    elif args.source == "prometheus":
        from gpu_finops.importers.prometheus import import_prometheus

        result = import_prometheus([Path(p) for p in args.series], out,
                                   nodes=[Path(p) for p in args.nodes or ()],
                                   kueue=Path(args.kueue) if args.kueue else None, options=options_of(args))
    else:
        from gpu_finops.importers.kueue_only import import_kueue_only
        from scheduler.errors import InputError

        if not args.kueue:
            raise InputError("--kueue", "required: the Kueue objects to import")

        import_kueue_only(Path(args.kueue), out, [Path(p) for p in args.nodes or ()], options_of(args))
        return 0
    _summary(result, out, Console(file=sys.stdout, soft_wrap=True, emoji=False))
    return 0


def _summary(result: ImportResult, out: Path, console: Console) -> None:
    counts = result.summary()
    console.print(
        f"{counts['input_pods']:,} pods → {counts['workloads']:,} workloads "
        f"({counts['pods_as_workloads']:,} pods on their own, {counts['pods_as_members']:,} members of gangs, "
        f"{counts['pods_rejected']:,} rejected); {counts['nodes']:,} GPU nodes ({counts['gpus']:,} GPUs); "
        f"{counts['rejected_rows']:,} rejected rows in {out / 'rejected.csv'}",
        highlight=False, markup=False,
    )
    if counts["running_at_dump"]:
        running = counts["running_at_dump"]
        console.print(f"{running:,} pod{'s were' if running != 1 else ' was'} still running at "
                      f"{result.observed_at:%Y-%m-%dT%H:%M:%SZ}: the run time ends there", highlight=False,
                      markup=False)
    for warning in result.warnings + (result.kueue.warnings if result.kueue else []):
        console.print(f"warning: {warning}", highlight=False, markup=False)
    book = result.price_book
    if book is not None and not result.price_book_kept:
        unpriced = (f"; {len(book.unpriced)} to price before a build (marked PRICE-ME): {', '.join(book.unpriced)}"
                    if book.unpriced else "")
        console.print(f"starter price book: {out / 'prices.csv'}, {len(book.rows)} GPU model"
                      f"{'s' if len(book.rows) != 1 else ''} with the products seen as aliases; the demo's "
                      f"illustrative prices: replace them with yours{unpriced}", highlight=False, markup=False)
    queues = f" --queues {out / 'queues.yaml'}" if result.kueue else ""
    console.print(f"replay it: gpu-finops replay --trace {out / 'trace.csv'} --cluster {out / 'cluster.csv'}{queues} "
                  f"--start {result.start:%Y-%m-%dT%H:%M:%SZ} --out RUN_DIR", highlight=False, markup=False)

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


def add_live(parser: argparse.ArgumentParser) -> None:
    """The options of `import prometheus --url`."""
    live = parser.add_argument_group("a live Prometheus (--url)")
    live.add_argument("--start", help="start of the range, RFC 3339 (2026-03-02T00:00:00Z) or Unix seconds")
    live.add_argument("--end", help="end of the range, likewise")
    live.add_argument("--step", help="the query resolution: how precisely deletions are seen "
                      "(seconds or a duration: 30s, 5m; default 60s)")
    live.add_argument("--bearer-token-file", metavar="FILE",
                      help="a token sent as Authorization: Bearer (a service account's, in a cluster)")
    tls = live.add_mutually_exclusive_group()
    tls.add_argument("--ca-file", metavar="FILE", help="CA certificates the server's TLS certificate is checked against")
    tls.add_argument("--insecure", action="store_true", help="do not check the server's TLS certificate")


LIVE_OPTIONS = ("start", "end", "step", "bearer_token_file", "ca_file", "insecure")


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
        result = _prometheus(args, out)
    else:
        from gpu_finops.importers.kueue_only import import_kueue_only
        from scheduler.errors import InputError

        if not args.kueue:
            raise InputError("--kueue", "required: the Kueue objects to import")

        import_kueue_only(Path(args.kueue), out, [Path(p) for p in args.nodes or ()], options_of(args))
        return 0
    _summary(result, out, Console(file=sys.stdout, soft_wrap=True, emoji=False))
    return 0


def _prometheus(args: argparse.Namespace, out: Path) -> ImportResult:
    from gpu_finops.importers.prometheus import import_prometheus, import_prometheus_live
    from gpu_finops.importers.prometheus_http import live_range
    from scheduler.errors import InputError

    nodes, kueue = [Path(p) for p in args.nodes or ()], Path(args.kueue) if args.kueue else None
    if args.series:
        given = next((name for name in LIVE_OPTIONS if getattr(args, name)), None)
        if given:
            raise InputError(f"--{given.replace('_', '-')}", "only with --url (a live Prometheus); --series files "
                             "hold their range")
        return import_prometheus([Path(p) for p in args.series], out, nodes=nodes, kueue=kueue,
                                 options=options_of(args))
    live = live_range(args.url, args.start, args.end, args.step or "60s", bearer_token_file=args.bearer_token_file,
                      ca_file=args.ca_file, insecure=args.insecure)
    options = options_of(args)
    if live.insecure:
        print(f"warning: the TLS certificate of {live.shown_url} is not checked (--insecure)", file=sys.stderr)
    return import_prometheus_live(live, out, nodes=nodes, kueue=kueue, options=options)


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


def add_import_parser(sub: argparse._SubParsersAction) -> None:
    """`gpu-finops import SOURCE`: its parser, each source's handler `run`."""
    parser = sub.add_parser("import", help="a cluster's own history → trace, cluster, Kueue queues, rejected rows",
                            description="a cluster's own history (kubectl dumps, Kueue objects, Prometheus "
                            "range queries of kube-state-metrics) → the generic trace, cluster CSV and Kueue "
                            "manifests the replay reads, with every refused object in rejected.csv")
    sources = parser.add_subparsers(dest="source", required=True, metavar="SOURCE")

    def add(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sources.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=run, command=f"import {name}")
        p.add_argument("-q", "--quiet", action="store_true", help="no progress output")
        return p

    p = add("kubectl", "kubectl get pods -A -o json / kubectl get nodes -o json dumps → DIR/trace.csv, "
            "DIR/cluster.csv, DIR/rejected.csv (and DIR/queues.yaml with --kueue)")
    p.add_argument("--pods", nargs="+", required=True, metavar="PODS.json",
                   help="pod dumps (JSON or YAML, List or several documents; PodGroups, Jobs, Workloads, "
                   "ResourceClaims in them are read too)")
    p.add_argument("--nodes", nargs="+", required=True, metavar="NODES.json", help="node dumps")
    add_common(p)
    p = add("prometheus", "kube-state-metrics and DCGM series from a live Prometheus (--url) or its "
            "/api/v1/query_range answers saved as JSON (--series) → the same files")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--series", nargs="+", metavar="QUERY.json",
                        help="query_range responses: kube_pod_container_resource_requests, kube_pod_created, "
                        "kube_pod_start_time, kube_pod_completion_time, kube_pod_labels, kube_pod_owner, kube_node_*")
    source.add_argument("--url", help="a live Prometheus (http://prometheus:9090): its documented queries are run "
                        "over --start..--end")
    add_live(p)
    p.add_argument("--nodes", nargs="+", metavar="NODES.json",
                   help="node dumps (default: nodes from kube_node_status_allocatable and kube_node_labels)")
    add_common(p)
    p = add("kueue", "Kueue objects as the cluster holds them → DIR/queues.yaml")
    p.add_argument("--nodes", nargs="+", metavar="NODES.json", help="node dumps, to check what each flavor selects")
    add_common(p)

"""The FGD experiment as a benchmark: `python -m benchmarks.fgd [--seed 42] [--pods P] [--cluster P]`.

Runs the six policies on the openb default pod list and all openb nodes (from
``../shared/traces``), one after another in this process, and prints per policy the wall
and CPU seconds (the acceptance bound is 30 s a policy on a 2-core machine) and the GPU
allocation ratio at 100 % and 130 % of demand, then whether Random < BestFit < FGD holds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gpu_finops.experiments.fgd import POLICIES, run_policy
from gpu_finops.experiments.fgd_outputs import prepare_experiment

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces" / "alibaba-openb-2023"
LIMIT_S = 30.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.fgd")
    parser.add_argument("--pods", default=str(TRACES / "openb_pod_list_default.csv"))
    parser.add_argument("--cluster", default=str(TRACES / "openb_node_list_all_node.csv"))
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--tie-break", default="lowest-index", choices=("lowest-index", "random"))
    args = parser.parse_args(argv)
    inputs = prepare_experiment(Path(args.pods), Path(args.cluster), seed=args.seed)
    table = Table(title=f"FGD experiment: {len(inputs.arrivals):,} pods on {inputs.cluster.total_gpus:,} GPUs, "
                        f"seed {args.seed}, ties {args.tie_break}")
    for column in ("policy", "wall s", "CPU s", f"< {LIMIT_S:.0f} s", "alloc @100 %", "alloc @130 %", "frag @100 %"):
        table.add_column(column, justify="right")
    at_130 = {}
    for policy in POLICIES:
        wall, cpu = time.perf_counter(), time.process_time()
        result = run_policy(inputs.cluster, inputs.arrivals, policy, inputs.workload, seed=args.seed,
                            tie_break=args.tie_break)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        at_130[policy] = result.at(1.3).allocation_ratio
        table.add_row(policy, f"{wall:.1f}", f"{cpu:.1f}", "yes" if wall < LIMIT_S else "NO",
                      f"{result.at(1.0).allocation_ratio:.2%}", f"{at_130[policy]:.2%}",
                      f"{result.at(1.0).fragmentation_ratio:.1%}")
    console = Console(width=None if sys.stdout.isatty() else 200)  # a log keeps whole tables
    console.print(table)
    ordered = at_130["Random"] < at_130["BestFit"] < at_130["FGD"]
    console.print(f"Random < BestFit < FGD at 130 % of demand: {'holds' if ordered else 'DOES NOT HOLD'}")
    return 0 if ordered else 1


if __name__ == "__main__":
    sys.exit(main())

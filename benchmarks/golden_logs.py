"""Content hashes of the event logs that refactors and speed-ups must leave unchanged.

    python -m benchmarks.golden_logs [--aaic ../shared/traces/aaic-2017/aaicwl-2017Q4.csv.gz]
                                     [--only demo,bench-10k,aaic] [--json FILE] [--verify]

Replays, through the real CLI (so any version of the project can be measured the same way):

- the demo preset under every shipped profile, with and without its Kueue queues;
- the bench-10k preset under gang-v1.37 + Kueue (what `make bench` measures);
- the AAIC 2017Q4 log's three runs (`experiment aaic --no-build`; seconds are their mean),
  when `--aaic` names it.

Each log is hashed over the columns of event-log schema 1.1 only (seq … flavor), so a new
nullable column (schema 1.2's `preemptor`, `queue_position`, `queue_length`) does not
change the hash; the hash of the whole table is printed beside it. `--json` writes the
hashes, and `--compare FILE` fails (exit 1) on the first run whose 1.1 hash differs.
`--verify` passes `--verify` to every replay (fast paths checked against plain scans).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

COLUMNS_1_1 = ("seq", "time_s", "event", "workload_id", "pod_index", "node", "gpus", "gpu_model",
               "tenant", "queue", "cluster_queue", "priority", "reason", "message", "flavor")
PROFILES = ("kube-default", "coscheduling", "gang-v1.35", "gang-v1.37")
AAIC_RUNS = ("kube-default", "gang-v1.37", "gang-v1.37-kueue")  # `experiment aaic`'s runs


def table_hash(table: pa.Table) -> str:
    """sha256 of the table's content: one IPC stream of its single-chunk columns, no metadata."""
    table = table.replace_schema_metadata(None).combine_chunks()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def log_hashes(events: Path) -> tuple[str, str, int]:
    table = pq.read_table(events)
    return table_hash(table.select(list(COLUMNS_1_1))), table_hash(table), table.num_rows


def _cli(*args: str) -> bool:
    """Runs `gpu-finops ARGS -q` in this interpreter; False when it failed (its error is shown)."""
    command = [sys.executable, "-c", "import sys; from gpu_finops.cli import main; sys.exit(main())", *args, "-q"]
    return subprocess.run(command, check=False, stdout=subprocess.DEVNULL).returncode == 0


def _replay(inputs: Path, out: Path, profile: str, queues: bool, verify: bool) -> float | None:
    args = ["replay", "--trace", str(inputs / "trace.csv"), "--cluster", str(inputs / "cluster.csv"),
            "--profile", profile, "--out", str(out)]
    if queues:
        args += ["--queues", str(inputs / "queues.yaml")]
    if verify:
        args.append("--verify")
    began = time.perf_counter()
    return time.perf_counter() - began if _cli(*args) else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--aaic", type=Path, help="the AAIC 2017Q4 log (its three runs are replayed)")
    parser.add_argument("--only", default="demo,bench-10k,aaic", help="comma list of demo, bench-10k, aaic")
    parser.add_argument("--json", type=Path, help="write {run: {hash_1_1, hash_all, rows}} here")
    parser.add_argument("--compare", type=Path, help="a JSON written earlier: exit 1 on any 1.1 hash that differs")
    parser.add_argument("--profiles", default=",".join(PROFILES), help="demo: which profiles (%(default)s)")
    parser.add_argument("--verify", action="store_true", help="replay with --verify")
    parser.add_argument("--work", type=Path, help="keep the runs in this folder (default: a temporary one)")
    args = parser.parse_args(argv)
    only = {part.strip() for part in args.only.split(",")}
    results: dict[str, dict[str, object]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        work = args.work or Path(scratch)
        work.mkdir(parents=True, exist_ok=True)

        def record(name: str, run: Path, seconds: float | None) -> None:
            if seconds is None:
                results[name] = {"hash_1_1": "failed", "hash_all": "failed", "rows": 0, "seconds": None}
                print(f"{name:<34} FAILED (see the error above)", flush=True)
                return
            hash_1_1, hash_all, rows = log_hashes(run / "events.parquet")
            results[name] = {"hash_1_1": hash_1_1, "hash_all": hash_all, "rows": rows, "seconds": round(seconds, 1)}
            print(f"{name:<34} {rows:>9,} rows  {hash_1_1[:16]}  (all columns {hash_all[:16]})  {seconds:6.1f} s",
                  flush=True)

        if "demo" in only:
            demo = work / "demo-inputs"
            _cli("generate", "--preset", "demo", "--out", str(demo))
            for profile in args.profiles.split(","):
                for queues in (False, True):
                    name = f"demo/{profile}{'+kueue' if queues else ''}"
                    out = work / name.replace("/", "-")
                    record(name, out, _replay(demo, out, profile, queues, args.verify))
        if "bench-10k" in only:
            bench = work / "bench-10k-inputs"
            _cli("generate", "--preset", "bench-10k", "--out", str(bench))
            out = work / "bench-10k-run"
            record("bench-10k/gang-v1.37+kueue", out, _replay(bench, out, "gang-v1.37", True, args.verify))
        if "aaic" in only and args.aaic:
            folder = work / "aaic"
            began = time.perf_counter()
            ok = _cli("experiment", "aaic", "--trace", str(args.aaic), "--out", str(folder), "--no-build")
            seconds = (time.perf_counter() - began) if ok else None
            for label in AAIC_RUNS:
                record(f"aaic-2017Q4/{label}", folder / "runs" / label, seconds and seconds / len(AAIC_RUNS))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if args.compare:
        expected = json.loads(args.compare.read_text(encoding="utf-8"))
        differ = [name for name, got in results.items()
                  if name in expected and expected[name]["hash_1_1"] != got["hash_1_1"]]
        for name in differ:
            print(f"DIFFERS: {name}", file=sys.stderr)
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())

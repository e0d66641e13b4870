"""`gpu-finops validate --export DIR`: the FinOps Foundation's focus-validator over an export.

The export is Hive-partitioned Parquet (``DIR/focus_cost_records/BillingPeriodStart=…/*.parquet``);
the validator reads one file, so the partitions are combined into one temporary Parquet file
first (every file carries every column: the partition folders are for readers that prune).
The validator is the project's wrapper script ``focus-validate`` (offline FOCUS 1.2 rules, in its
own Python 3.12 environment), found by ``--validator``, ``$GPU_FINOPS_FOCUS_VALIDATOR``, or
``../shared/tools/focus-validate`` beside the checkout. Its findings are printed with what
they mean; a finding not known to be the validator's own artefact exits 1.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline.connect import connect
from pipeline.errors import PipelineError

VALIDATOR_ENV = "GPU_FINOPS_FOCUS_VALIDATOR"
CHECKOUT = Path(__file__).resolve().parents[1]

# Findings that are the validator's, not the data's (see docs/cost-model.md, "Validation").
KNOWN_FINDINGS = {
    "InvoiceId-C-004-C": "known validator artefact: InvoiceId is Recommended and nullable (null when a "
                         "charge has no invoice, as every simulated charge has none); the rule is an OR "
                         "of two branches and the validator fails the branch not taken, while the parent "
                         "rule passes",
    "InvoiceId-C-005-C": "known validator artefact: the second OR branch of the same InvoiceId rule",
}


@dataclass(frozen=True)
class ValidatorResult:
    totals: str
    findings: list[tuple[str, str]]  # (rule id, what it means)
    exit_code: int


def find_validator(given: Path | None = None) -> Path:
    """The focus-validate script: ``given``, else $GPU_FINOPS_FOCUS_VALIDATOR, else
    ../shared/tools/focus-validate beside the checkout."""
    candidates = [given] if given else []
    if os.environ.get(VALIDATOR_ENV, "").strip():
        candidates.append(Path(os.environ[VALIDATOR_ENV].strip()).expanduser())
    candidates.append(CHECKOUT.parent / "shared" / "tools" / "focus-validate")
    for candidate in candidates:
        if candidate is not None and candidate.is_file():
            return candidate
    raise PipelineError(f"focus-validate not found (tried {', '.join(str(c) for c in candidates if c)}): "
                        f"pass --validator PATH or set {VALIDATOR_ENV}")


def export_records(export: Path) -> Path:
    """The folder of the partitioned records: ``DIR/focus_cost_records`` or ``DIR`` itself."""
    for folder in (export / "focus_cost_records", export):
        if folder.is_dir() and any(folder.rglob("*.parquet")):
            return folder
    raise PipelineError(f"{export}: no FOCUS export here (expected focus_cost_records/**/*.parquet, "
                        "as `gpu-finops build --export DIR` writes)")


def run_validator(export: Path, validator: Path | None = None) -> ValidatorResult:
    records = export_records(Path(export))
    script = find_validator(validator)
    with tempfile.TemporaryDirectory(prefix="focus-validate-") as folder:
        single = Path(folder) / "focus_cost_records.parquet"
        con = connect()
        try:
            con.execute("COPY (SELECT * FROM read_parquet($files, hive_partitioning = false)) "
                        f"TO '{single}' (FORMAT parquet)", {"files": str(records / "**" / "*.parquet")})
        finally:
            con.close()
        done = subprocess.run([str(script), str(single)], capture_output=True, text=True, timeout=1800)
    lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
    if done.returncode == 2 or not lines or not lines[0].startswith("Total:"):
        message = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
        raise PipelineError(f"focus-validate could not run: {message}")
    findings = [(rule, KNOWN_FINDINGS.get(rule, "a real failure: the export breaks this FOCUS 1.2 rule"))
                for rule in lines[1:]]
    return ValidatorResult(lines[0], findings, 1 if done.returncode == 1 else 0)

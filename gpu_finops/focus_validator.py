"""`gpu-finops validate --export DIR`: the FinOps Foundation's focus-validator over an export.

The export is Hive-partitioned Parquet (``DIR/focus_cost_records/BillingPeriodStart=…/*.parquet``);
the validator reads one file, so the partitions are combined into one temporary Parquet file
first (every file carries every column: the partition folders are for readers that prune).

The validator (focus-validator 2.2.1, offline FOCUS 1.2 rules) needs Python >= 3.12 and
numpy < 2, so it is never a dependency of this environment: it is installed as its own tool
(``pipx install --python python3.12 focus-validator==2.2.1``) and found, in this order, at
``--validator PATH``, at ``$GPU_FINOPS_FOCUS_VALIDATOR``, or as ``focus-validator`` on PATH.
A path may name the ``focus-validator`` executable itself or a wrapper script that prints its
``Total:`` line and one failed rule a line (the project's ``focus-validate``). No path beside
a development checkout is tried. Its findings are printed with what they mean; a finding not
known to be the validator's own artefact exits 1.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pipeline.connect import connect
from pipeline.errors import PipelineError

VALIDATOR_ENV = "GPU_FINOPS_FOCUS_VALIDATOR"
EXECUTABLE = "focus-validator"
# The criteria a simulated cluster's charges meet: the rules they make applicable are checked.
CRITERIA = ("ACCOUNT_NAMING_SUPPORTED,AVAILABILITY_ZONE_SUPPORTED,MULTIPLE_PRICING_CATEGORIES_SUPPORTED,"
            "NEGOTIATED_PRICING_SUPPORTED,PUBLIC_PRICE_LIST_SUPPORTED,USAGE_MEASUREMENT_SUPPORTED,"
            "UNIT_PRICING_SUPPORTED,SUB_ACCOUNT_SUPPORTED,BILLING_BASED_ON_PROVISIONED_RESOURCES_SUPPORTED,"
            "RESOURCE_TYPE_ASSIGNMENT_SUPPORTED,REGION_SUPPORTED,TAGGING_SUPPORTED")

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
    """The validator: ``given``, else $GPU_FINOPS_FOCUS_VALIDATOR, else `focus-validator` on PATH."""
    candidates: list[Path] = [given] if given else []
    if os.environ.get(VALIDATOR_ENV, "").strip():
        candidates.append(Path(os.environ[VALIDATOR_ENV].strip()).expanduser())
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    installed = shutil.which(EXECUTABLE)
    if not candidates and installed:
        return Path(installed)
    tried = ", ".join([str(c) for c in candidates] + ([] if candidates else [f"{EXECUTABLE} on PATH"]))
    raise PipelineError(f"the FOCUS validator was not found (tried {tried}): install it with `pipx install "
                        f"--python python3.12 focus-validator==2.2.1`, pass --validator PATH or set {VALIDATOR_ENV}")


def _run_executable(executable: Path, data: Path) -> tuple[list[str], str]:
    """focus-validator itself: run from its site-packages folder (it opens its currency list
    relative to the working directory), offline (--block-download); it always exits 0, so its
    report is read: the ``Total:`` line, then the failed rule ids."""
    interpreter = executable.read_text(encoding="utf-8", errors="replace").splitlines()[0].removeprefix("#!").strip()
    where = subprocess.run([interpreter, "-c", "import focus_validator, os; "
                            "print(os.path.dirname(os.path.dirname(focus_validator.__file__)))"],
                           capture_output=True, text=True, timeout=120, check=False)
    if where.returncode != 0 or not where.stdout.strip():
        raise PipelineError(f"{executable}: not a focus-validator installation (its interpreter "
                            f"{interpreter} cannot import focus_validator)")
    done = subprocess.run([str(executable), "--data-file", str(data), "--validate-version", "1.2", "--block-download",
                           "--applicability-criteria", CRITERIA], cwd=where.stdout.strip(), capture_output=True,
                          text=True, timeout=1800, check=False)
    output = done.stdout + done.stderr
    totals = [line.strip() for line in output.splitlines() if line.startswith("Total:")]
    if not totals:
        return [], (output.strip() or "no output").splitlines()[-1]
    failures = output.partition("--- Failures ---")[2]
    rules = sorted({m.group(1) for m in re.finditer(r"^- ([^:\s]+):", failures, re.MULTILINE)})
    return [totals[0], *rules], ""


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
        if script.name == EXECUTABLE:
            lines, message = _run_executable(script, single)
        else:  # a wrapper script: its Total line and failed rules on stdout; exit 2 when it could not run
            done = subprocess.run([str(script), str(single)], capture_output=True, text=True, timeout=1800)
            lines = [line.strip() for line in done.stdout.splitlines() if line.strip()]
            message = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            if done.returncode == 2:
                lines = []
    if not lines or not lines[0].startswith("Total:"):
        raise PipelineError(f"the FOCUS validator could not run: {message}")
    findings = [(rule, KNOWN_FINDINGS.get(rule, "a real failure: the export breaks this FOCUS 1.2 rule"))
                for rule in lines[1:]]
    return ValidatorResult(lines[0], findings, 1 if any(rule not in KNOWN_FINDINGS for rule in lines[1:]) else 0)

"""The declared dependencies and the lock (issue 45): every dependency has a lower and an upper
bound, every module's third-party import is declared, and constraints.txt pins each declared
package to a release its bounds admit."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
REQUIREMENTS = [Requirement(r) for r in PROJECT["dependencies"]] + [
    Requirement(r) for extra in PROJECT["optional-dependencies"].values() for r in extra
]
# import name -> distribution, where they differ
DISTRIBUTIONS = {"yaml": "pyyaml", "vl_convert": "vl-convert-python", "tomli_w": "tomli-w", "celpy": "cel-python"}


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.partition("==")
            assert version, f"constraints.txt: {line!r} is not pinned with =="
            pins[canonicalize_name(name)] = version
    return pins


def test_every_dependency_has_both_bounds():
    for requirement in REQUIREMENTS:
        operators = {spec.operator for spec in requirement.specifier}
        assert ">=" in operators and "<" in operators, f"{requirement}: needs a lower and an upper bound"


def test_the_lock_pins_every_declared_package_within_its_bounds():
    pins = _pins()
    for requirement in REQUIREMENTS:
        name = canonicalize_name(requirement.name)
        assert name in pins, f"constraints.txt does not pin {requirement.name} (`make lock`)"
        assert requirement.specifier.contains(pins[name], prereleases=True), (requirement, pins[name])


def test_every_third_party_import_of_the_package_is_declared():
    declared = {canonicalize_name(r.name) for r in REQUIREMENTS}
    ours = {"scheduler", "pipeline", "dashboards", "gpu_finops"}
    for package in sorted(ours):
        for path in (REPO / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level
                         else [])
                for name in names:
                    top = name.split(".")[0]
                    if top in ours or top in sys.stdlib_module_names:
                        continue
                    distribution = canonicalize_name(DISTRIBUTIONS.get(top, top))
                    assert distribution in declared, f"{path.relative_to(REPO)}: imports {top}, not declared"

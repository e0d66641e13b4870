"""The container image's Dockerfile (issue 45) against what the chart expects of it: the final
stage installs the wheel the first stage built (never the source tree), within the lock, and
runs as the non-root uid the chart's pods run as. (`docker build` itself needs a daemon and the
base image's registry: not in the suite.)"""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def _stages() -> list[list[tuple[str, str]]]:
    """(instruction, arguments) per stage, continuation lines joined, comments dropped."""
    text = (REPO / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    stages: list[list[tuple[str, str]]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        instruction, _, arguments = line.strip().partition(" ")
        if instruction.upper() == "FROM":
            stages.append([])
        stages[-1].append((instruction.upper(), arguments.strip()))
    return stages


def test_the_image_installs_the_wheel_and_runs_as_the_charts_user():
    build, final = _stages()
    assert any(i == "RUN" and "pip wheel" in a and " -w /wheels ." in a for i, a in build)
    assert ("COPY", "--from=wheel /wheels /wheels") in final
    installs = [a for i, a in final if i == "RUN" and "pip install" in a]
    assert installs and "-c /wheels/constraints.txt /wheels/gpu_finops-*.whl" in installs[0]
    assert not any(i == "COPY" and not a.startswith("--from=") for i, a in final)  # no source in the image
    (user,) = [a for i, a in final if i == "USER"]
    uid, _, gid = user.partition(":")
    values = yaml.safe_load((REPO / "deploy" / "helm" / "gpu-finops" / "values.yaml").read_text(encoding="utf-8"))
    assert int(uid) == values["podSecurityContext"]["runAsUser"] != 0
    assert int(gid) == values["podSecurityContext"]["runAsGroup"]
    (entrypoint,) = [a for i, a in final if i == "ENTRYPOINT"]
    assert yaml.safe_load(entrypoint) == ["gpu-finops"]
    assert shlex.split(next(a for i, a in final if i == "RUN" and "useradd" in a)).count("--uid") == 1


def test_the_build_context_leaves_out_compiled_files_and_environments():
    ignored = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    for entry in (".git", ".venv", "build", "**/*.so", "scheduler/compiled.json"):
        assert entry in ignored  # not sources: the image compiles its own wheel

"""The Helm chart (deploy/helm/gpu-finops, issue 45): Helm's own engine (Helm v4's Go SDK,
helm-python-sdk) lints it and renders it, offline; every manifest it renders is valid against
the Kubernetes API schema (kubernetes-validate); the reports CronJob runs the command
docs/reports.md documents, and the README's and docs' `helm install` blocks render as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

helm = pytest.importorskip("helm_python", reason="helm-python-sdk (Helm's engine) is a dev dependency")
kubernetes_validate = pytest.importorskip("kubernetes_validate", reason="kubernetes-validate is a dev dependency")

REPO = Path(__file__).resolve().parents[2]
CHART = REPO / "deploy" / "helm" / "gpu-finops"
KUBERNETES = "1.33.0"  # CronJob timeZone is GA since 1.27
SCHEDULE = "gpu-finops schedule --config /etc/gpu-finops/reports.toml --state /data/reports.state.json"


def _render(values: dict | None = None) -> dict[str, dict]:
    """kind/name -> manifest, every manifest validated against the Kubernetes schema."""
    rendered = helm.Chart.load(CHART).render(values or {}, name="gpu-finops", namespace="finops")
    manifests = {}
    for path, text in rendered.items():
        if path.endswith("NOTES.txt"):
            continue
        for document in yaml.safe_load_all(text):
            if document:
                kubernetes_validate.validate(document, KUBERNETES, strict=True)
                manifests[f"{document['kind']}/{document['metadata']['name']}"] = document
    return manifests


def _container(manifest: dict) -> dict:
    (container,) = manifest["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    return container


def _helm_install_values(text: str) -> tuple[dict, list[str]]:
    """The values of the `helm install` block in a markdown file, as Helm parses its --set flags."""
    blocks = [b for b in re.findall(r"```sh\n(.*?)```", text, re.DOTALL) if "helm install" in b]
    assert len(blocks) == 1, "one `helm install` block"
    words = shlex.split(blocks[0].replace("\\\n", " "), comments=True)
    start = words.index("helm")
    assert words[start + 1:start + 4] == ["install", "gpu-finops", "deploy/helm/gpu-finops"], words
    values: dict = {}
    for flag, value in zip(words, words[1:], strict=False):
        if flag == "--set":
            _merge(values, helm.parse_set_string(value))
    return values, words


def _merge(into: dict, extra: dict) -> None:
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def test_the_chart_lints_clean():
    for values in ({}, {"prometheus": {"enabled": True}}):
        report = helm.lint(CHART, values, strict=True, kube_version=f"v{KUBERNETES}")
        assert report["errors"] == []
        assert [m for m in report["messages"] if m["severity"] > 1] == [], report["messages"]


def test_by_default_one_cronjob_runs_the_documented_schedule_command():
    manifests = _render()
    assert sorted(manifests) == ["ConfigMap/gpu-finops", "CronJob/gpu-finops-reports",
                                 "PersistentVolumeClaim/gpu-finops-data", "ServiceAccount/gpu-finops"]
    cronjob = manifests["CronJob/gpu-finops-reports"]
    assert cronjob["spec"]["schedule"] == "*/15 * * * *"
    assert _container(cronjob)["command"] == shlex.split(SCHEDULE)
    pod = cronjob["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] == 10001
    assert "db = \"/data/gpu-finops.duckdb\"" in manifests["ConfigMap/gpu-finops"]["data"]["reports.toml"]
    docs = (REPO / "docs" / "reports.md").read_text(encoding="utf-8")
    assert SCHEDULE in docs  # the command docs/reports.md shows is the one the CronJob runs


def test_an_existing_claim_is_used_and_none_created():
    manifests = _render({"persistence": {"existingClaim": "reports-nfs"}})
    assert "PersistentVolumeClaim/gpu-finops-data" not in manifests
    volumes = manifests["CronJob/gpu-finops-reports"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]["volumes"]
    assert {"name": "data", "persistentVolumeClaim": {"claimName": "reports-nfs"}} in volumes


@pytest.mark.parametrize("document", ["README.md", "docs/reports.md"])
def test_the_documented_helm_install_renders_the_import_from_prometheus(document):
    values, _ = _helm_install_values((REPO / document).read_text(encoding="utf-8"))
    manifests = _render(values)
    image = f"{values['image']['repository']}:{values['image']['tag']}"
    assert _container(manifests["CronJob/gpu-finops-reports"])["image"] == image
    script = _container(manifests["CronJob/gpu-finops-import"])["args"][0]
    lines = [line.strip() for line in script.strip().splitlines()]
    url = values["prometheus"]["url"]
    assert lines[2].startswith(f'gpu-finops import prometheus --url "{url}" --start "$start" --end "$end"')
    assert lines[3].startswith("gpu-finops replay --trace /data/import/trace.csv --cluster /data/import/cluster.csv")
    assert lines[4].startswith("gpu-finops build /data/run --prices ")
    assert lines[4].endswith("--db /data/gpu-finops.duckdb --export /data/export")


def test_a_service_account_token_that_would_not_be_mounted_is_refused():
    token = "/var/run/secrets/kubernetes.io/serviceaccount/token"
    with pytest.raises(helm.HelmError, match="automountToken=true"):
        _render({"prometheus": {"enabled": True, "bearerTokenFile": token}})
    script = _container(_render({"prometheus": {"enabled": True, "bearerTokenFile": token},
                                 "serviceAccount": {"automountToken": True}})["CronJob/gpu-finops-import"])
    assert f'--bearer-token-file "{token}"' in script["args"][0]


def test_the_schema_check_refuses_a_broken_cronjob():
    cronjob = _render()["CronJob/gpu-finops-reports"]
    cronjob["spec"]["schedule"] = 15  # a string in the API
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(cronjob, KUBERNETES, strict=True)
    del cronjob["spec"]["schedule"]
    cronjob["spec"]["scheduel"] = "*/15 * * * *"  # unknown field, and the required one missing
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(cronjob, KUBERNETES, strict=True)

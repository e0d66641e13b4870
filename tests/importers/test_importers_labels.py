"""Pod labels and annotations through an import: the allow-list decides which become the trace's
allocation labels; end to end, a kubectl export with labels → import → replay → build →
showback by label, whose groups add up to the FOCUS total."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cluster_dumps import H100, node, pod

from gpu_finops.cli import main
from gpu_finops.importers.allocation_keys import AllocationKeys
from pipeline.validate import validate_db
from scheduler.errors import InputError

PRICE = 6.98  # $ per H100 GPU-hour on demand (list = what a Standard node costs)


def dumps(folder: Path) -> tuple[Path, Path]:
    """Three 8-GPU H100 nodes; from 08:00 (all times UTC, 2026-03-02):
    - ``train`` (team-llm): a PodGroup of 2 × 8 GPUs for 2 h, labels cost-center=cc-research and
      app.kubernetes.io/part-of=chat, plus noise (pod-template-hash) that is not carried;
    - ``infer`` (team-web): 4 GPUs for 1 h, its cost centre only in an annotation;
    - ``nb`` (team-web): 2 GPUs for 1 h, an empty cost-center label (no value: unlabelled)."""
    folder.mkdir(parents=True, exist_ok=True)
    pg = {"scheduling.x-k8s.io/pod-group": "train", "cost-center": "cc-research",
          "app.kubernetes.io/part-of": "chat", "pod-template-hash": "5d8f7"}
    items = [
        pod("train-0", "team-llm", created="08:00:00", gpus=8, started="08:00:00", finished="10:00:00",
            node="h100-0", labels=pg),
        pod("train-1", "team-llm", created="08:00:00", gpus=8, started="08:00:00", finished="10:00:00",
            node="h100-1", labels=pg),
        {"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
         "metadata": {"name": "train", "namespace": "team-llm", "creationTimestamp": "2026-03-02T07:59:59Z"},
         "spec": {"minMember": 2}},
        pod("infer-0", "team-web", created="08:00:00", gpus=4, started="08:00:00", finished="09:00:00",
            node="h100-2", labels={"app": "infer"}, annotations={"cost-center": "cc-product"}),
        pod("nb-0", "team-web", created="08:00:00", gpus=2, started="08:00:00", finished="09:00:00",
            node="h100-2", labels={"cost-center": ""}),
    ]
    pods_path, nodes_path = folder / "pods.json", folder / "nodes.json"
    pods_path.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    nodes_path.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                      "items": [node(f"h100-{i}", H100, 8) for i in range(3)]}))
    return pods_path, nodes_path


def trace_labels(folder: Path) -> dict[str, dict[str, str]]:
    with (folder / "trace.csv").open(newline="", encoding="utf-8") as handle:
        return {row["workload_id"]: json.loads(row["labels"]) if row["labels"] else {}
                for row in csv.DictReader(handle)}


def test_the_default_allow_list_carries_cost_keys_and_leaves_noise_out(tmp_path):
    pods, nodes = dumps(tmp_path / "dumps")
    out = tmp_path / "imported"
    assert main(["import", "kubectl", "--pods", str(pods), "--nodes", str(nodes), "--out", str(out)]) == 0
    assert trace_labels(out) == {
        "team-llm/podgroup/train": {"app.kubernetes.io/part-of": "chat", "cost-center": "cc-research"},
        "team-web/infer-0": {"cost-center": "cc-product"},  # from the annotation
        "team-web/nb-0": {},  # an empty value is no value
    }
    notes = json.loads((out / "import.json").read_text())["notes"]
    assert any("nb-0" in note and "'cost-center' left out" in note and "empty" in note for note in notes)


def test_label_keys_option_replaces_or_extends_the_defaults(tmp_path):
    pods, nodes = dumps(tmp_path / "dumps")
    out = tmp_path / "only-app"
    assert main(["import", "kubectl", "--pods", str(pods), "--nodes", str(nodes), "--out", str(out),
                 "--label-keys", "app,pod-template-*"]) == 0
    assert trace_labels(out) == {"team-llm/podgroup/train": {"pod-template-hash": "5d8f7"},
                                 "team-web/infer-0": {"app": "infer"}, "team-web/nb-0": {}}
    out = tmp_path / "default-and-app"
    assert main(["import", "kubectl", "--pods", str(pods), "--nodes", str(nodes), "--out", str(out),
                 "--label-keys", "default,app"]) == 0
    assert trace_labels(out)["team-web/infer-0"] == {"app": "infer", "cost-center": "cc-product"}


@pytest.mark.parametrize("entry", ["-bad", "a*b", "Example.COM/x"])
def test_a_bad_allow_list_entry_is_a_one_line_error(entry, capsys, tmp_path):
    with pytest.raises(InputError):
        AllocationKeys.parse(entry)
    pods, nodes = dumps(tmp_path / "dumps")
    assert main(["import", "kubectl", "--pods", str(pods), "--nodes", str(nodes), "--out", str(tmp_path / "o"),
                 f"--label-keys={entry}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--label-keys" in err
    assert not (tmp_path / "o").exists()


def test_members_that_disagree_keep_the_first_value_with_a_note():
    notes: list[str] = []
    keys = AllocationKeys.parse(None)
    cell = keys.select("ns/pg", [({"team": "a"}, {}), ({"team": "b"}, {})], notes)
    assert cell == '{"team":"a"}' and notes == ["ns/pg: members disagree on 'team' ('a', 'b'); the first "
                                                "member's 'a' is kept"]


def test_kubectl_labels_to_showback_by_label_end_to_end(tmp_path, capsys, monkeypatch):
    pods, nodes = dumps(tmp_path / "dumps")
    imported, run, db = tmp_path / "imported", tmp_path / "run", tmp_path / "labels.duckdb"
    assert main(["import", "kubectl", "--pods", str(pods), "--nodes", str(nodes), "--out", str(imported)]) == 0
    start = json.loads((imported / "import.json").read_text())["start"]
    assert main(["replay", "-q", "--trace", str(imported / "trace.csv"), "--cluster", str(imported / "cluster.csv"),
                 "--start", start, "--run-id", "labels", "--out", str(run)]) == 0
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
                      f"{H100},{PRICE},4.40,2.95\n")
    assert main(["build", "-q", str(run), "--prices", str(prices), "--db", str(db)]) == 0
    assert validate_db(db) == []
    capsys.readouterr()

    for policy in ("separate", "window", "node", "cause"):
        assert main(["showback", "--db", str(db), "--group-by", "label:cost-center", "--idle-policy", policy,
                     "--format", "json"]) == 0
        result = json.loads(capsys.readouterr().out)
        groups = {row["group"]: row for row in result["rows"]}
        assert set(groups) <= {"cc-research", "cc-product", "Unlabelled", "Unallocated (idle)"}
        assert sum(row["charged_cost"] for row in groups.values()) == pytest.approx(result["total_cost"])
        if policy == "separate":  # each group's own GPU-hours: 2 × 8 × 2 h, 4 × 1 h, 2 × 1 h
            assert {g: round(r["gpu_hours"], 6) for g, r in groups.items() if g != "Unallocated (idle)"} == {
                "cc-research": 32.0, "cc-product": 4.0, "Unlabelled": 2.0}
            assert groups["cc-research"]["charged_cost"] == pytest.approx(32 * PRICE)
            assert groups["cc-product"]["charged_cost"] == pytest.approx(4 * PRICE)
            assert groups["Unlabelled"]["charged_cost"] == pytest.approx(2 * PRICE)
            idle_hours = groups["Unallocated (idle)"]["gpu_hours"] + groups["Unallocated (idle)"]["idle_share_gpu_hours"]
            assert groups["Unallocated (idle)"]["charged_cost"] == pytest.approx(idle_hours * PRICE)

    # the table names the groups in words and says the FOCUS total; by team, the same total
    assert main(["showback", "--db", str(db), "--group-by", "label:cost-center"]) == 0
    table = capsys.readouterr().out
    assert "Unlabelled" in table and "__unallocated__" not in table and "FOCUS total" in table
    assert main(["showback", "--db", str(db), "--format", "csv"]) == 0
    by_team = list(csv.DictReader(capsys.readouterr().out.splitlines()))
    assert {row["group"] for row in by_team} == {"team-llm", "team-web", "Unallocated (idle)"}
    assert sum(float(r["charged_cost"]) for r in by_team) == pytest.approx(result["total_cost"])

    # a reader that stops early (`| head -1`: the pipe breaks) ends nothing badly
    class ClosedPipe:
        def __init__(self, fileno: int) -> None:
            self._fileno = fileno

        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            raise BrokenPipeError(32, "Broken pipe")

        def fileno(self) -> int:
            return self._fileno

        def isatty(self) -> bool:
            return False

    with (tmp_path / "stdout").open("w") as sink:
        monkeypatch.setattr("sys.stdout", ClosedPipe(sink.fileno()))
        assert main(["showback", "--db", str(db), "--format", "csv"]) == 0
        monkeypatch.undo()
    assert "Traceback" not in capsys.readouterr().err

    # a key no workload carries: one line naming the keys there are
    assert main(["showback", "--db", str(db), "--group-by", "label:owner"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'owner'" in err and "app.kubernetes.io/part-of, cost-center" in err

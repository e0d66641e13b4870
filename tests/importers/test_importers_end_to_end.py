"""End to end: kubectl dumps → import → replay (with the imported Kueue queues) → build →
validate, through the command line. Every input pod is a workload, a member of one, or a
rejected row; every workload is in the marts and carries cost."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest
from cluster_dumps import A100, H100, input_pods, write_dumps

from gpu_finops.cli import main
from gpu_finops.importers.output import csv_text
from gpu_finops.importers.price_book import STARTER_COLUMNS, starter_book
from pipeline.errors import PipelineError
from pipeline.inputs import read_price_book
from pipeline.validate import validate_db


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_imported_dumps_replay_and_build_into_cost_records(tmp_path):
    dumps = write_dumps(tmp_path / "dumps")
    imported = tmp_path / "imported"
    assert main(["import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
                 "--kueue", str(dumps["kueue"]), "--out", str(imported)]) == 0
    start = json.loads((imported / "import.json").read_text())["start"]
    assert main(["replay", "-q", "--trace", str(imported / "trace.csv"), "--cluster", str(imported / "cluster.csv"),
                 "--queues", str(imported / "queues.yaml"), "--start", start, "--run-id", "imported",
                 "--out", str(tmp_path / "run")]) == 0
    prices = tmp_path / "prices.csv"
    prices.write_text("gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour\n"
                      f"{H100},6.98,4.40,2.95\n{A100},3.67,2.35,1.35\n")
    db = tmp_path / "imported.duckdb"
    assert main(["build", "-q", str(tmp_path / "run"), "--prices", str(prices), "--db", str(db)]) == 0
    assert validate_db(db) == []

    pods = rows(imported / "pods.csv")
    assert sorted((p["namespace"], p["pod"]) for p in pods) == sorted(input_pods())
    rejected = {(r["source"], r["row"]) for r in rows(imported / "rejected.csv")}
    with duckdb.connect(str(db), read_only=True) as con:
        built = dict(con.execute("SELECT workload_id, pods FROM fct_workloads WHERE run_id = 'imported'").fetchall())
        finished = {w for (w,) in con.execute(
            "SELECT workload_id FROM fct_workloads WHERE run_id = 'imported' AND final_state = 'finished'").fetchall()}
        cost = dict(con.execute("SELECT x_Tenant, sum(EffectiveCost) FROM focus_cost_records "
                                "WHERE x_RunId = 'imported' AND x_Tenant IS NOT NULL GROUP BY 1").fetchall())
        start_ts = con.execute("SELECT strftime(start_ts, '%Y-%m-%dT%H:%M:%SZ') FROM dim_runs").fetchone()[0]
    for pod in pods:
        if pod["role"] == "rejected":
            assert (pod["source"], pod["row"]) in rejected, pod
        else:
            assert pod["workload_id"] in built, pod  # a workload of the replay, priced in the marts
    members = {}
    for pod in pods:
        if pod["role"] != "rejected":
            members.setdefault(pod["workload_id"], set()).add(pod["member"])
    assert {w: len(m) for w, m in members.items()} == built  # one replayed pod per member
    assert finished == set(built)  # every imported workload fits the imported cluster and runs
    assert start_ts == start == "2026-03-02T07:00:00Z"  # the dump's own calendar
    assert all(cost[team] > 0 for team in ("team-llm", "team-vision", "team-web"))


def test_the_starter_price_book_prices_the_imported_products_and_stays_the_users_once_edited(tmp_path, capsys):
    dumps = write_dumps(tmp_path / "dumps")
    imported = tmp_path / "imported"
    command = ["import", "kubectl", "--pods", str(dumps["pods"]), "--nodes", str(dumps["nodes"]),
               "--out", str(imported)]
    assert main(command) == 0
    assert "starter price book" in capsys.readouterr().out
    book = {r["gpu_model"]: r for r in rows(imported / "prices.csv")}
    assert sorted(book) == ["A100", "H100"]  # keyed by model, the products as aliases
    assert (book["H100"]["aliases"], book["A100"]["aliases"]) == (H100, A100)
    assert book["H100"]["list_usd_per_gpu_hour"] == "6.98" and "illustrative" in book["H100"]["note"]
    assert json.loads((imported / "import.json").read_text())["price_book"]["unpriced"] == []

    start = json.loads((imported / "import.json").read_text())["start"]
    assert main(["replay", "-q", "--trace", str(imported / "trace.csv"), "--cluster", str(imported / "cluster.csv"),
                 "--start", start, "--run-id", "imported", "--out", str(tmp_path / "run")]) == 0
    db = tmp_path / "imported.duckdb"
    assert main(["build", "-q", str(tmp_path / "run"), "--prices", str(imported / "prices.csv"), "--db", str(db)]) == 0
    with duckdb.connect(str(db), read_only=True) as con:
        prices = dict(con.execute("SELECT DISTINCT x_GpuModel, ListUnitPrice FROM focus_cost_records "
                                  "WHERE x_Resource = 'gpu' AND ChargeCategory = 'Usage'").fetchall())
    assert prices == {H100: 6.98, A100: 3.67}

    edited = (imported / "prices.csv").read_text().replace("6.98", "5.10")
    (imported / "prices.csv").write_text(edited)
    assert main(command) == 0  # the user's edited book is theirs now: left as it is
    assert "prices.csv is yours" in capsys.readouterr().out
    assert (imported / "prices.csv").read_text() == edited


def test_a_product_the_demo_does_not_price_is_marked_for_the_user_and_stops_the_build(tmp_path):
    starter = starter_book(["Tesla-V100-SXM2-16GB", "NVIDIA-H100-80GB-HBM3", "H100"])
    assert starter.unpriced == ["V100"]
    path = tmp_path / "prices.csv"
    path.write_text(csv_text(STARTER_COLUMNS, starter.rows))
    assert [(r["gpu_model"], r["aliases"]) for r in rows(path)] == [("H100", "NVIDIA-H100-80GB-HBM3"),
                                                                     ("V100", "Tesla-V100-SXM2-16GB")]
    assert rows(path)[1]["list_usd_per_gpu_hour"] == "PRICE-ME"
    with pytest.raises(PipelineError, match=r"row 3: 'V100' is not priced yet"):
        read_price_book(path, {"Tesla-V100-SXM2-16GB"})

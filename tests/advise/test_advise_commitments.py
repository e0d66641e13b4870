"""`advise commitments`: the level of least cost per SKU matches a hand computation, and the
command reads it from a replay built in the test (one run, or every run with --all)."""

from __future__ import annotations

import polars as pl
import pytest

from gpu_finops.advise.commitments import best_commitment, commitment_for
from gpu_finops.cli import main
from tests.advise.cases import CLUSTER, PRICES

# Hours with 0, 2, 4, 4, 6, 8 GPUs in use; list $3, contracted $2 (break-even 2/3).
#   C: cost = 6·C·2 + 3·Σ max(u − C, 0)
#   0: 0 + 3·24 = 72     1: 12 + 3·19 = 69     2: 24 + 3·14 = 66     3: 36 + 3·10 = 66
#   4: 48 + 3·6 = 66     5: 60 + 3·3 = 69      6: 72 + 3·2 = 78      8: 96
# Costs 66 at 2, 3 and 4: the lowest level is kept. P(u > C) > 2/3 holds up to C = 1 and is
# exactly 4/6 at C = 2: more GPUs add no saving from there on (the newsvendor quantile).
USAGE = [0.0, 2.0, 4.0, 4.0, 6.0, 8.0]


@pytest.mark.parametrize(("list_price", "contracted", "level", "cost"), [
    (3.0, 2.0, 2, 66.0),
    (3.0, 1.0, 4, 42.0),     # break-even 1/3: C=3 48, C=4..6 42 (lowest kept), C=7 45
    (3.0, 3.0, 0, 72.0),     # no discount: never commit
    (3.0, 0.0, 8, 0.0),      # free commitment: cover the peak
])
def test_the_level_of_least_cost(list_price, contracted, level, cost):
    assert best_commitment(USAGE, list_price, contracted) == (level, pytest.approx(cost))


def test_coverage_utilisation_and_break_even():
    row = commitment_for("r", "A100", USAGE, 3.0, 2.0)
    assert (row.sku, row.committed_gpus, row.break_even_utilisation) == ("gpu-a100", 2, 0.6667)
    assert row.coverage == round(10 / 24, 4)  # min(u, 2) summed: 0+2+2+2+2+2
    assert row.utilisation == round(10 / 12, 4)  # of 2 GPUs x 6 hours
    assert (row.cost, row.on_demand_cost, row.savings) == (66.0, 72.0, 6.0)


def _built(tmp_path, name: str, trace: str) -> None:
    (tmp_path / f"{name}.csv").write_text(trace)
    assert main(["replay", "--trace", str(tmp_path / f"{name}.csv"), "--cluster", str(tmp_path / "cluster.csv"),
                 "--run-id", name, "--out", str(tmp_path / name), "-q"]) == 0
    assert main(["build", str(tmp_path / name), "--prices", str(tmp_path / "prices.csv"), "--db",
                 str(tmp_path / "db.duckdb"), "-q"]) == 0


def test_commitments_from_replayed_usage(tmp_path, capsys):
    (tmp_path / "cluster.csv").write_text(CLUSTER)
    (tmp_path / "prices.csv").write_text(PRICES)
    header = "workload_id,submit_time,duration_s,pods,gpus_per_pod,gpu_model\n"
    # Four GPUs busy for two days; a last small submission at 24 h ends the steady window.
    steady = header + "".join(f"w{i},0,172800,1,1,A100\n" for i in range(4)) + "last,86400,60,1,1,A100\n"
    _built(tmp_path, "steady", steady)
    assert main(["advise", "commitments", "--db", str(tmp_path / "db.duckdb"), "--prices",
                 str(tmp_path / "prices.csv"), "--out", str(tmp_path / "out")]) == 0
    table = pl.read_csv(tmp_path / "out" / "commitments.csv")
    assert table.select("run_id", "sku", "committed_gpus").rows() == [("steady", "gpu-a100", 4)]
    assert table["utilisation"][0] == 1.0 and table["break_even_utilisation"][0] == 0.6667
    assert "gpu-a100" in capsys.readouterr().out
    # A second scenario: two more GPUs busy all the time; --all advises each run.
    _built(tmp_path, "busier", steady + "".join(f"x{i},0,172800,1,1,A100\n" for i in range(2)))
    assert main(["advise", "commitments", "--db", str(tmp_path / "db.duckdb"), "--prices",
                 str(tmp_path / "prices.csv"), "--out", str(tmp_path / "out")]) == 2  # two runs: which?
    assert "give --run-id or --all" in capsys.readouterr().err
    assert main(["advise", "commitments", "--db", str(tmp_path / "db.duckdb"), "--prices",
                 str(tmp_path / "prices.csv"), "--all", "--out", str(tmp_path / "out")]) == 0
    table = pl.read_csv(tmp_path / "out" / "commitments.csv").sort("run_id")
    assert table.select("run_id", "committed_gpus").rows() == [("busier", 6), ("steady", 4)]


def test_a_price_book_without_contracted_prices_is_refused(tmp_path, capsys):
    (tmp_path / "prices.csv").write_text("gpu_model,list_usd_per_gpu_hour\nA100,3\n")
    (tmp_path / "db.duckdb").write_bytes(b"")
    assert main(["advise", "commitments", "--db", str(tmp_path / "db.duckdb"), "--prices",
                 str(tmp_path / "prices.csv"), "--out", str(tmp_path / "out")]) == 2
    assert "missing column 'contracted_usd_per_gpu_hour'" in capsys.readouterr().err

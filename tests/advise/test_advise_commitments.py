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
    assert row.coverage == round(10 / 24, 4)  # min(u, 2) summed: 0+2+2+2+2+2, over the 24 used
    assert row.utilisation == round(10 / 12, 4)  # of 2 GPUs x 6 hours
    # no commitment today: today's bill is all on demand, 72
    assert (row.today_committed_gpus, row.today_cost, row.cost, row.savings) == (0, 72.0, 66.0, 6.0)


@pytest.mark.parametrize(("today_gpus", "spot", "today_cost", "cost", "savings"), [
    # today 8 committed: 6·8·2 = 96 (every hour under the commitment); advised 2 at 66
    (8, (0.0, 0.0), 96.0, 66.0, 30.0),
    # today 2 committed: already the level of least cost, nothing to save
    (2, (0.0, 0.0), 66.0, 66.0, 0.0),
    # 10 spot-served GPU-hours at $1: not eligible, the same $10 in both bills
    (0, (10.0, 10.0), 82.0, 76.0, 6.0),
])
def test_savings_are_against_todays_bill(today_gpus, spot, today_cost, cost, savings):
    row = commitment_for("r", "A100", USAGE, 3.0, 2.0, today_gpus=today_gpus, spot=spot)
    assert (row.committed_gpus, row.spot_gpu_hours) == (2, spot[0])
    assert (row.today_cost, row.cost, row.savings) == (today_cost, cost, savings)


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


def test_a_spot_only_cluster_is_advised_no_commitment(tmp_path):
    # 8 spot A100s (list $3, contracted $2, spot $1) busy all of the steady window: spot-served
    # usage is not commitment-eligible. Before, it was: 8 GPUs committed at $2 where spot costs
    # $1, "savings" of (3 − 2) × 8 per hour while the bill doubled.
    (tmp_path / "cluster.csv").write_text("node,gpu_model,gpus,pricing_category\n"
                                          "node-0,A100,4,Dynamic\nnode-1,A100,4,Dynamic\n")
    (tmp_path / "prices.csv").write_text(PRICES)
    header = "workload_id,submit_time,duration_s,pods,gpus_per_pod,gpu_model\n"
    trace = header + "".join(f"w{i},0,172800,1,1,A100\n" for i in range(8)) + "last,86400,60,1,1,A100\n"
    _built(tmp_path, "spot", trace)
    assert main(["advise", "commitments", "--db", str(tmp_path / "db.duckdb"), "--prices",
                 str(tmp_path / "prices.csv"), "--out", str(tmp_path / "out")]) == 0
    row = pl.read_csv(tmp_path / "out" / "commitments.csv").row(0, named=True)
    hours = row["hours"]
    assert (row["committed_gpus"], row["today_committed_gpus"], row["mean_gpus"], row["coverage"]) == (0, 0, 0.0, 0.0)
    # every steady hour 8 GPUs on spot at $1 (the last submission waits: all 8 are held): the
    # same bill today and with the advice
    assert row["spot_gpu_hours"] == pytest.approx(8 * hours)
    assert row["today_cost"] == row["cost"] == pytest.approx(8 * hours * 1.0)
    assert row["savings"] == 0.0

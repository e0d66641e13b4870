"""The price book keyed by GPU model: a cluster's product names resolve to a row through the
row's own name, its aliases or the built-in normaliser (pipeline.gpu_models); a name nothing
prices stops the build with one line naming it and how to key it, never a $0 price."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.errors import PipelineError
from pipeline.gpu_models import model_candidates, resolve_model
from pipeline.inputs import read_price_book

HEADER = "gpu_model,list_usd_per_gpu_hour,contracted_usd_per_gpu_hour,spot_usd_per_gpu_hour"


def book(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "prices.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("product", "candidates"), [
    ("NVIDIA-A100-SXM4-80GB", ("A100-80GB", "A100")),       # nvidia.com/gpu.product (GPU feature discovery)
    ("NVIDIA-H100-80GB-HBM3", ("H100-80GB", "H100")),
    ("Tesla-V100-SXM2-16GB", ("V100-16GB", "V100")),
    ("nvidia-tesla-t4", ("T4",)),                            # cloud.google.com/gke-accelerator
    ("nvidia-l4", ("L4",)),
    ("NVIDIA-L40S", ("L40S",)),
    ("NVIDIA-GeForce-RTX-4090", ("RTX-4090",)),
    ("l40s", ("L40S",)),                                     # karpenter.k8s.aws/instance-gpu-name
    ("NVIDIA-A100-SXM4-40GB-MIG-1g.5gb", ()),                # a MIG slice is not its whole GPU
    ("something else", ()),
])
def test_the_normaliser_reads_common_product_spellings(product, candidates):
    assert model_candidates(product) == candidates


def test_a_product_resolves_by_name_then_alias_then_normaliser():
    models = ["H100", "A100", "A100-40GB"]
    assert resolve_model("h100", models, {}) == "H100"
    assert resolve_model("NVIDIA-A100-SXM4-80GB", models, {}) == "A100"
    assert resolve_model("NVIDIA-A100-PCIE-40GB", models, {}) == "A100-40GB"  # the most specific row first
    assert resolve_model("NVIDIA-A100-PCIE-40GB", models, {"nvidia-a100-pcie-40gb": "A100"}) == "A100"
    assert resolve_model("Tesla-V100-SXM2-16GB", models, {}) is None


def test_imported_product_names_are_priced_by_their_model_rows(tmp_path):
    path = book(tmp_path, f"{HEADER},resource,aliases\n"
                          "H100,6.98,4.4,2.95,gpu,\n"
                          "A100,3.67,2.35,1.35,gpu,\n"
                          "V100,1.5,1.0,0.5,gpu,Tesla-V100-SXM2-16GB | tesla-v100-pcie-32gb\n"
                          "A100,0.05,0.04,0.02,cpu,\n")
    rows = read_price_book(path, {"NVIDIA-H100-80GB-HBM3", "NVIDIA-A100-SXM4-80GB", "Tesla-V100-SXM2-16GB",
                                  "Tesla-V100-PCIE-32GB"},
                           {"cpu": {"NVIDIA-A100-SXM4-80GB"}})
    priced = {(r.gpu_model, r.resource): r.list_usd_per_gpu_hour for r in rows}
    assert priced[("NVIDIA-H100-80GB-HBM3", "gpu")] == 6.98
    assert priced[("NVIDIA-A100-SXM4-80GB", "gpu")] == 3.67
    assert priced[("NVIDIA-A100-SXM4-80GB", "cpu")] == 0.05
    assert priced[("Tesla-V100-SXM2-16GB", "gpu")] == priced[("Tesla-V100-PCIE-32GB", "gpu")] == 1.5
    assert priced[("H100", "gpu")] == 6.98  # the book's own rows stay


def test_an_unknown_product_is_one_line_naming_it_and_how_to_key_it(tmp_path):
    path = book(tmp_path, f"{HEADER}\nH100,6.98,4.4,2.95\n")
    with pytest.raises(PipelineError) as raised:
        read_price_book(path, {"NVIDIA-H100-80GB-HBM3", "Tesla-V100-SXM2-16GB"})
    message = str(raised.value)
    assert "\n" not in message
    assert "no price for 'Tesla-V100-SXM2-16GB'" in message
    assert "add a row with gpu_model 'V100' and aliases 'Tesla-V100-SXM2-16GB'" in message
    assert "Keying the price book by GPU model" in message


@pytest.mark.parametrize(("rows", "message"), [
    ("H100,6.98,4.4,2.95,X-1\nA100,3.67,2.35,1.35,x-1\n", r"row 3: field 'aliases': 'x-1' is already an alias of 'H100' \(row 2\)"),
    ("H100,6.98,4.4,2.95,A100\nA100,3.67,2.35,1.35,\n", r"row 2: field 'aliases': 'a100' is the gpu_model of another row"),
    ("H100,PRICE-ME,PRICE-ME,PRICE-ME,\n", r"row 2: 'H100' is not priced yet .*PRICE-ME.*fill in your \$ per GPU-hour"),
])
def test_a_contradictory_or_unpriced_book_names_the_row(tmp_path, rows, message):
    with pytest.raises(PipelineError, match=message):
        read_price_book(book(tmp_path, f"{HEADER},aliases\n{rows}"), set())


@pytest.mark.parametrize(("rows", "message"), [
    # a second row of a model in another letter case: models resolve letter case aside, so one would win silently
    ("A100,3.67,2.35,1.35\na100,1,1,1\n", "row 3: field 'gpu_model' 'a100' listed twice (as 'A100': letter case aside)"),
    ("A100,3.67,2.35,1.35\nA100,3.67,2.35,1.35\n", "row 3: field 'gpu_model' 'A100' listed twice"),
    ("A100,-3.67,2.35,1.35\n", "row 2: field 'list_usd_per_gpu_hour' must be a finite non-negative price, got '-3.67'"),
    ("A100,NaN,2.35,1.35\n", "row 2: field 'list_usd_per_gpu_hour' must be a finite non-negative price, got 'NaN'"),
    ("A100,1e400,2.35,1.35\n", "row 2: field 'list_usd_per_gpu_hour' must be a finite non-negative price"),
    ('A100,"1,000",2.35,1.35\n', "row 2: field 'list_usd_per_gpu_hour' is not a number (plain digits, no thousands "
                                 "separator): '1,000'"),
    ("A100,1,000.50,2.35,1.35\n", "row 2: 5 values but the header has 4 columns"),
    ("A100,1_000,2.35,1.35\n", "row 2: field 'list_usd_per_gpu_hour' is not a number"),
    ("A100,\uff13,2.35,1.35\n", "row 2: field 'list_usd_per_gpu_hour' is not a number"),  # a full-width 3
    ("A100,$3.67,2.35,1.35\n", "row 2: field 'list_usd_per_gpu_hour' is not a number"),
    ("A100\u200b,3.67,2.35,1.35\n", "row 2: field 'gpu_model': 'A100\\u200b' has an invisible or control character"),
    ("B200,3.67,2.35,1.35\n", "no price for 'A100' (used by the cluster's nodes)"),  # a model the book does not know
])
def test_a_hostile_price_book_is_one_line_naming_the_row_and_field(tmp_path, rows, message):
    with pytest.raises(PipelineError) as caught:
        read_price_book(book(tmp_path, f"{HEADER}\n{rows}"), {"A100"})
    assert message in str(caught.value) and "\n" not in str(caught.value)

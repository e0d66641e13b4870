"""GPU node inventories of public traces read as clusters: openb node lists, the PAI 2020
machine spec, the 2026 spot-GPU node list; detection; errors naming file, row, field;
and the real files under ../shared/traces, whose totals their READMEs state."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.errors import InputError
from scheduler.model import Node
from scheduler.trace.inventories import detect_cluster_format, read_any_cluster

TRACES = Path(__file__).resolve().parents[2].parent / "shared" / "traces"


def write(tmp_path: Path, text: str, name: str = "nodes.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "kind", "nodes"),
    [
        (
            "sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,32000,262144,0,\nopenb-node-0001,96000,786432,8,G2\n",
            "openb-nodes",
            [Node("openb-node-0000", "", 0, 32000, 262144), Node("openb-node-0001", "G2", 8, 96000, 786432)],
        ),
        (
            # PAI 2020: no header; CPU cores and GB become milli-CPU and MiB; type CPU has no GPU.
            "7399a758,CPU,96,512,0\n6b1e43f2,V100M32,96,384,8\n",
            "pai-machines",
            [Node("7399a758", "", 0, 96000, 524288), Node("6b1e43f2", "V100M32", 8, 96000, 393216)],
        ),
        (
            "machine,gpu_type,cap_cpu,cap_mem,cap_gpu\nm1,T4,96,512,2\n",
            "pai-machines",
            [Node("m1", "T4", 2, 96000, 524288)],
        ),
        (
            # Spot 2026: the file's own column order; no memory column (0: not modelled).
            "gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,1,128,0\nH800,8,192,17\n",
            "spot-nodes",
            [Node("spot-0", "A10", 1, 128000, 0), Node("spot-17", "H800", 8, 192000, 0)],
        ),
        (
            "node,gpu_model,gpus\nn1,H100,8\n",
            "nodes",
            [Node("n1", "H100", 8)],
        ),
    ],
)
def test_each_inventory_maps_its_columns_onto_nodes(tmp_path, text, kind, nodes):
    path = write(tmp_path, text)
    assert detect_cluster_format(path) == kind
    assert list(read_any_cluster(path).nodes) == nodes


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sn,cpu_milli,memory_mib,gpu,model\nn1,32000,1,eight,G2\n", "nodes.csv: row 2: field 'gpu': not a number: 'eight'"),
        ("sn,cpu_milli,memory_mib,gpu,model\nn1,32000,1,8,\n", "nodes.csv: row 2: node 'n1' has 8 GPUs of no model"),
        ("sn,cpu_milli,memory_mib,gpu,model\nn1,1,1,0,\nn1,1,1,0,\n", "nodes.csv: row 3: duplicate node name 'n1' (first on row 2)"),
        ("gpu_model,gpu_capacity_num,cpu_num,node_name\nA10,-1,128,0\n", "nodes.csv: row 2: field 'gpu_capacity_num': must be a whole number >= 0, got '-1'"),
        ("m1,T4,96,512,2\nm2,T4,96,512\n", "nodes.csv: row 2: field 'cap_gpu': missing: a value is required"),
        ("sn,cpu_milli,memory_mib,gpu,model\n", "nodes.csv: no nodes: the cluster needs at least one row"),
    ],
)
def test_a_bad_inventory_row_names_file_row_and_field(tmp_path, text, message):
    with pytest.raises(InputError) as error:
        read_any_cluster(write(tmp_path, text))
    assert str(error.value) == message


@pytest.mark.parametrize(
    ("path", "nodes", "gpus", "models"),
    [
        ("alibaba-openb-2023/openb_node_list_all_node.csv", 1523, 6212, 7),
        ("alibaba-openb-2023/openb_node_list_gpu_node.csv", 1213, 6212, 7),
        ("alibaba-pai-2020-machines/pai_machine_spec.csv", 1897, 6742, 5),
        ("alibaba-spot-gpu-2026-nodes/node_info_df.csv", 4278, 10412, 6),
    ],
)
def test_the_real_inventories_match_their_readmes(path, nodes, gpus, models):
    cluster = read_any_cluster(TRACES / path)
    assert (len(cluster.nodes), cluster.total_gpus, len(cluster.gpu_models)) == (nodes, gpus, models)


def test_the_real_inventories_keep_their_node_shapes():
    openb = read_any_cluster(TRACES / "alibaba-openb-2023/openb_node_list_gpu_node.csv")
    # README: G2 549 nodes x 8 = 4,392 GPUs.
    assert sum(n.gpus for n in openb.nodes if n.gpu_model == "G2") == 4392
    pai = read_any_cluster(TRACES / "alibaba-pai-2020-machines/pai_machine_spec.csv")
    assert sum(1 for n in pai.nodes if not n.gpus) == 83  # the CPU machines
    spot = read_any_cluster(TRACES / "alibaba-spot-gpu-2026-nodes/node_info_df.csv")
    assert sum(n.gpus for n in spot.nodes if n.gpu_model == "H800") == 1752

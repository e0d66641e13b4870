"""Cluster inputs: a node table or node pools in TOML become the same frozen Cluster."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.errors import InputError
from scheduler.eventlog.schema import CLUSTER_SCHEMA, WORKLOAD_SCHEMA
from scheduler.trace import cluster_to_arrow, read_cluster, workloads_to_arrow
from tests.builders import make_cluster, make_workload

HEADER = "node,gpu_model,gpus,cpu_milli,memory_mib,zone,block,rack,pricing_category"


def write(tmp_path: Path, text: str, name: str = "cluster.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_node_table_reads_every_column_and_defaults_the_optional_ones(tmp_path):
    path = write(tmp_path, "node,gpu_model,gpus\nn1,A100,8\n" )
    (node,) = read_cluster(path).nodes
    assert (node.name, node.gpu_model, node.gpus, node.cpu_milli, node.zone, node.rack, node.pricing_category) == (
        "n1", "A100", 8, 0, None, None, "Standard",
    )
    path = write(tmp_path, f"{HEADER}\nn1,H100,8,224000,2097152,z1,b1,r1,Committed\nn2,H100,8,224000,2097152,z1,b1,r2,Dynamic\n")
    cluster = read_cluster(path)
    assert [(n.rack, n.pricing_category) for n in cluster.nodes] == [("r1", "Committed"), ("r2", "Dynamic")]
    assert cluster.total_gpus == 16 and cluster.gpu_models == {"H100"}


def test_toml_pools_expand_to_named_nodes_spread_over_racks_and_blocks(tmp_path):
    path = write(
        tmp_path,
        """
[[pool]]
name_prefix = "h100"
count = 8
gpu_model = "H100"
gpus = 8
zone = "zone-a"
blocks = 2
racks = 4
[[pool]]
name_prefix = "l40s"
count = 2
gpu_model = "L40S"
gpus = 4
racks = ["shared-1"]
pricing_category = "Dynamic"
""",
        name="cluster.toml",
    )
    nodes = read_cluster(path).nodes
    assert [n.name for n in nodes][:3] == ["h100-000", "h100-001", "h100-002"]
    assert [n.rack for n in nodes[:8]] == ["h100-r00"] * 2 + ["h100-r01"] * 2 + ["h100-r02"] * 2 + ["h100-r03"] * 2
    assert [n.block for n in nodes[:8]] == ["h100-b0"] * 4 + ["h100-b1"] * 4  # a rack never spans blocks
    assert [(n.name, n.gpus, n.rack, n.pricing_category, n.zone) for n in nodes[8:]] == [
        ("l40s-000", 4, "shared-1", "Dynamic", None), ("l40s-001", 4, "shared-1", "Dynamic", None),
    ]


def test_the_same_cluster_from_csv_and_toml_is_equal(tmp_path):
    toml = write(tmp_path, '[[pool]]\nname_prefix = "n"\ncount = 2\ngpu_model = "A100"\ngpus = 8\nrack = "r1"\n', "c.toml")
    csv = write(tmp_path, "node,gpu_model,gpus,rack\nn-000,A100,8,r1\nn-001,A100,8,r1\n")
    assert read_cluster(toml) == read_cluster(csv)


@pytest.mark.parametrize(
    ("text", "row", "field", "message"),
    [
        (f"{HEADER}\nn1,A100,8,0,0,,,,\nn1,A100,8,0,0,,,,\n", 3, "node", "duplicate node name 'n1' (first on row 2)"),
        (f"{HEADER}\nn1,A100,-8,0,0,,,,\n", 2, "gpus", "must be >= 0"),
        (f"{HEADER}\nn1,A100,eight,0,0,,,,\n", 2, "gpus", "not a number"),
        (f"{HEADER}\nn1,A100,8,0,0,,,,Reserved\n", 2, "pricing_category", "Standard, Committed, Dynamic"),
        (f"{HEADER}\nn1,,8,0,0,,,,\n", 2, "gpu_model", "missing"),
        ("node,gpus\nn1,8\n", 1, "gpu_model", "required column missing"),
    ],
)
def test_node_table_errors_name_the_row_and_field(tmp_path, text, row, field, message):
    with pytest.raises(InputError) as caught:
        read_cluster(write(tmp_path, text))
    assert (caught.value.row, caught.value.field) == (row, field)
    assert message in str(caught.value) and str(caught.value).startswith("cluster.csv: ")


@pytest.mark.parametrize(
    ("pool", "field"),
    [
        ('name_prefix = "n"\ncount = 0\ngpu_model = "A100"\ngpus = 8', "pool[0].count"),
        ('name_prefix = "n"\ncount = 2\ngpu_model = "A100"\ngpus = -1', "pool[0].gpus"),
        ('name_prefix = "n"\ncount = 2\ngpu_model = "A100"\ngpus = 8\ncolour = "red"', "pool[0].colour"),
        ('name_prefix = "n"\ncount = 2\ngpu_model = "A100"\ngpus = 8\nracks = 3', "pool[0].racks"),
        ('name_prefix = "n"\ncount = 2\ngpu_model = "A100"\ngpus = 8\npricing_category = "Spot"', "pool[0].pricing_category"),
    ],
)
def test_pool_errors_name_the_pool_and_key(tmp_path, pool, field):
    with pytest.raises(InputError) as caught:
        read_cluster(write(tmp_path, f"[[pool]]\n{pool}\n", "cluster.toml"))
    assert caught.value.field == field


def test_arrow_tables_match_the_published_schemas():
    table = cluster_to_arrow(make_cluster(nodes=3, racks=1))
    assert table.schema == CLUSTER_SCHEMA and table.num_rows == 3
    workloads = [make_workload(workload_id="a", gpu_models=("H100", "A100")), make_workload(workload_id="b")]
    table = workloads_to_arrow(workloads)
    assert table.schema == WORKLOAD_SCHEMA
    assert table.column("gpu_model").to_pylist() == ["H100|A100", None]


def test_node_labels_come_from_a_labels_column_or_a_pool_table(tmp_path):
    """Kubernetes labels beyond the named columns: a ResourceFlavor's nodeLabels and a
    Topology's levels select nodes by them (`Node.label_value`)."""
    path = write(tmp_path, 'node,gpu_model,gpus,zone,labels\nn1,A100,8,z1,"pool=spot, karpenter.sh/capacity-type=spot"\nn2,A100,8,z1,\n')
    n1, n2 = read_cluster(path).nodes
    assert n1.labels == (("karpenter.sh/capacity-type", "spot"), ("pool", "spot")) and n2.labels == ()
    assert (n1.label_value("pool"), n1.label_value("topology.kubernetes.io/zone"), n1.label_value("nvidia.com/gpu.product"),
            n2.label_value("pool")) == ("spot", "z1", "A100", None)
    toml = write(tmp_path, '[[pool]]\nname_prefix = "s"\ncount = 2\ngpu_model = "A100"\ngpus = 8\n'
                           'labels = { "cloud.google.com/gke-spot" = "true" }\n', "pools.toml")
    assert {n.labels for n in read_cluster(toml).nodes} == {(("cloud.google.com/gke-spot", "true"),)}


@pytest.mark.parametrize(("labels", "field", "message"), [
    ("pool", "labels", "expected key=value"),
    ("topology.kubernetes.io/zone=z9", "labels", "is the node's zone: give it there"),
    ("pool=a;pool=b", "labels", "given twice"),
    ("pool=a b", "labels.pool", "not a label value"),
])
def test_bad_node_labels_name_the_row_and_field(tmp_path, labels, field, message):
    path = write(tmp_path, f"node,gpu_model,gpus,labels\nn1,A100,8,{labels}\n")
    with pytest.raises(InputError) as error:
        read_cluster(path)
    assert error.value.row == 2 and error.value.field == field and message in str(error.value)

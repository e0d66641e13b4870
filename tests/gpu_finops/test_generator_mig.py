"""The `mig` preset: a DRA cluster of partitionable H100s beside plain A100s, mixed whole-GPU and
MIG-slice demand; its dra.yaml is deterministic and replays (docs/dra.md)."""

from __future__ import annotations

import csv
from collections import Counter

import pyarrow.parquet as pq
import yaml

from gpu_finops.generator import generate
from scheduler.commands import replay


def test_the_mig_preset_writes_a_dra_file_that_is_the_same_for_the_same_seed(tmp_path):
    first, second = generate("mig", tmp_path / "a", seed=7), generate("mig", tmp_path / "b", seed=7)
    assert first.dra is not None and first.dra.read_bytes() == second.dra.read_bytes()
    objects = list(yaml.safe_load_all(first.dra.read_text()))
    kinds = Counter(o["kind"] for o in objects)
    assert kinds == {"DeviceClass": 2, "ResourceClaimTemplate": 2, "ResourceSlice": 4}  # the 4 H100 nodes
    devices = objects[-1]["spec"]["devices"]
    assert len(devices) == 8 * (1 + 7 + 2)  # per GPU: whole, seven 1g.10gb, two 3g.40gb
    with first.trace.open() as handle:
        claims = Counter(r["resource_claim_templates"] for r in csv.DictReader(handle))
    assert claims["mig-1g.10gb"] > 0 and claims["mig-3g.40gb"] > 0 and claims[""] > 0  # slices and whole GPUs


def test_the_mig_preset_replays_slices_and_whole_gpus_on_the_partitioned_pool(tmp_path):
    files = generate("mig", tmp_path / "in", seed=42)
    result = replay(files.trace, files.cluster, tmp_path / "run", profile="gang-v1.37", dra=files.dra)
    events = pq.read_table(result.run_dir / "events.parquet").to_pylist()
    started = Counter((e["node"].split("-")[0], e["gpus"]) for e in events if e["event"] == "started")
    assert started[("h100", 0.142)] > 0 and started[("h100", 0.5)] > 0  # 1g.10gb and 3g.40gb slices
    assert any(gpus >= 1 for (pool, gpus) in started if pool == "h100")  # whole GPUs on the same pool
    assert not [e for e in events if e["event"] == "rejected"]


def test_the_mig_presets_queues_map_its_device_classes_for_kueue(tmp_path):
    """Kueue's DRA gate is on by default: without the Configuration's deviceClassMappings every
    slice workload would be inadmissible (an unmapped DeviceClass)."""
    files = generate("mig", tmp_path / "in", seed=42)
    result = replay(files.trace, files.cluster, tmp_path / "run", profile="gang-v1.37", dra=files.dra,
                    queues=files.queues)
    events = pq.read_table(result.run_dir / "events.parquet").to_pylist()
    assert not [e for e in events if e["event"] == "rejected"]
    assert Counter(e["gpus"] for e in events if e["event"] == "started")[0.142] > 0  # 1g.10gb slices run
    assert any("nvidia.com/mig is not a resource the replay's quotas count" in w for w in result.warnings)

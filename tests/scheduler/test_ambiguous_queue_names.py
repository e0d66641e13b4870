"""A LocalQueue name used in two namespaces is ambiguous only for a trace row that names it bare:
`namespace/name`, what the importers write, says which one it means, and earns no warning (the
importer's own output warned about a queue name it wrote)."""

from __future__ import annotations

from scheduler.admission.admits_nothing import admission_warnings
from scheduler.admission.manifests import parse_queue_config

QUEUES = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: default
      resources: [{name: nvidia.com/gpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-b}
spec: {clusterQueue: cq}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: main, namespace: team-a}
spec: {clusterQueue: cq}
"""


def test_namespaced_queue_names_are_not_ambiguous():
    config = parse_queue_config(QUEUES)
    assert not [w for w in (*config.warnings, *admission_warnings(config, ["team-a/main", "team-b/main"]))
                if "namespaces" in w]


def test_a_bare_name_used_in_two_namespaces_is_one_warning_saying_which_it_is_read_as():
    config = parse_queue_config(QUEUES)
    warnings = [w for w in admission_warnings(config, ["main", "main", "team-b/main"]) if "namespaces" in w]
    assert warnings == ["2 workload(s) name queue 'main', a LocalQueue name used in namespaces team-a, team-b: "
                        "read as team-a/main (write namespace/name to choose)"]

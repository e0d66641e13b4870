"""Cross-references between the objects of one queues file, checked once all are read.

- every flavor a ClusterQueue lists is a ResourceFlavor of the file;
- every LocalQueue points at a ClusterQueue of the file;
- a LocalQueue name used in several namespaces is a warning (a trace row's bare queue name
  then means the first namespace in alphabetical order).
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.admission.manifests.fields import FieldReader
from scheduler.admission.objects import ClusterQueue, LocalQueue, ResourceFlavor


def check_references(reader: FieldReader, where: Mapping[tuple[str, str], int], flavors: Mapping[str, ResourceFlavor],
                     cluster_queues: Mapping[str, ClusterQueue], local_queues: Mapping[str, LocalQueue]) -> None:
    """`where` maps (kind, name) to the document that defined it, for the error."""

    for name, queue in cluster_queues.items():
        document = where[("ClusterQueue", name)]
        for g, group in enumerate(queue.resource_groups):
            for f, flavor in enumerate(group.flavors):
                if flavor.flavor not in flavors:
                    raise reader.error(
                        f"spec.resourceGroups[{g}].flavors[{f}].name",
                        f"ResourceFlavor {flavor.flavor!r} is not defined in this file",
                        document=document,
                    )
    for key, local_queue in local_queues.items():
        if local_queue.cluster_queue not in cluster_queues:
            raise reader.error(
                "spec.clusterQueue",
                f"ClusterQueue {local_queue.cluster_queue!r} is not defined in this file",
                document=where[("LocalQueue", key)],
            )

"""CEL needs a deeper recursion limit than Python's default, and celpy sets it process-wide
when an Environment is made: the replay raises it only while CEL runs."""

from __future__ import annotations

import sys

from scheduler.dra.cel import DeviceMatcher
from scheduler.dra.objects import Device


def test_cel_leaves_the_processs_recursion_limit_as_it_found_it():
    before = sys.getrecursionlimit()
    matcher = DeviceMatcher()
    device = Device("gpu-0", "gpu.nvidia.com", "pool", "node-0",
                    attributes=(("gpu.nvidia.com/productName", "H100"),))
    nested = "(" * 32 + 'device.driver == "gpu.nvidia.com"' + ")" * 32  # CEL's minimum: 32 levels of parentheses
    assert matcher.compile(nested) is None
    assert matcher.matches(nested + " && " + " && ".join(["true"] * 32), device)
    assert sys.getrecursionlimit() == before

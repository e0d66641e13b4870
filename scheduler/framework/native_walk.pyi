"""The node walk of `PartialSearch.run` and the heap's root of `heap_choice` in C (native_walk.c)."""

from array import array
from collections.abc import Container
from typing import Any

def walk(feasible: list[tuple[float, int]], whole_free: array[int], cpu_free: array[int], memory_free: array[int],
         used: array[int], gpus: array[int], has_cpu: array[int], has_memory: array[int], accepted: array[int] | None,
         excluded: Container[int] | None, start: int, count: int, i: int, processed: int,
         wanted: int, whole: int, cpu: int, memory: int, milli: int, least: bool, weight: float,
         unresolvable: list[int], plain_filters: bool, shared_free: list[dict[int, int]],
         root: list[Any] | None, gpu_first: bool) -> tuple[int, int, int, bool, tuple[int, int, int, int]]: ...

def heap_root(scored: list[tuple[float, int]]) -> int | None: ...

def gpus_run_out_first(whole_free: array[int], cpu_free: array[int], memory_free: array[int], has_cpu: array[int],
                       has_memory: array[int], accepted: array[int] | None, count: int, milli: int, cpu: int,
                       memory: int, shared_free: list[dict[int, int]]) -> bool: ...

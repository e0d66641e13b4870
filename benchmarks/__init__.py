"""Benchmarks (`make bench`): measured side by side in one run, never part of `make test`."""

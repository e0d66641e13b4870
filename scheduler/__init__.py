"""gpu-finops scheduler: replays a cluster trace under Kubernetes-style gang scheduling.

The scheduler reads a trace, a cluster and a profile, and writes a run directory whose
`events.parquet` follows `scheduler.eventlog.schema`. It never prices anything: money is
the pipeline's job. It never reads the wall clock: all time is simulated seconds.

Its modules run compiled (mypyc, `make install`) where the compiled files match their
sources, else as the pure Python tree, which is the reference (`scheduler/compiled.py`).
"""

from scheduler.compiled import choose_build as _choose_build

# "compiled", "pure" or "pure (stale)": chosen once, when the package is first imported.
BUILD = _choose_build()

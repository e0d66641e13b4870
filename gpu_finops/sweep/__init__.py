"""Sweeps: many replays of one cluster's inputs under different scenarios, one database.

`gpu_finops.sweep.spec` reads the sweep TOML (a grid of profiles x queue manifests x scoring
plugins x preemption settings x seeds, or an explicit list of scenarios);
`gpu_finops.sweep.task` is the one function every executor runs per scenario (the replay the
CLI's ``replay`` runs); `gpu_finops.sweep.executors` runs the tasks in local worker processes
or as Ray tasks; `gpu_finops.sweep.run` ties them together: skip what is finished, run the
rest, record each outcome, build one DuckDB file with every run that succeeded.
"""

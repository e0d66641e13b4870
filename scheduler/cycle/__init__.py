"""Scheduling cycles: one attempt per queued entity, written as named phases.

`attempt` (attempt.py) dispatches to the pod-group cycle (group.py, with composite.py,
planning.py and group_preemption.py) or the pod cycle (pod.py). Attempts read and act
through a `CycleContext` (context.py) and never import the replay.
"""

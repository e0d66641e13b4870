"""A tiny discrete-event kernel in the shape of SimPy. It knows nothing of GPUs or pods."""

from scheduler.sim.kernel import Environment, Handle, Phase

__all__ = ["Environment", "Handle", "Phase"]

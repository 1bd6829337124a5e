"""Registers the loops step library with behave (importing it defines the steps)."""

from jobconform.conformance.loops_steps import *  # noqa: F403

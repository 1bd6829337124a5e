"""Registers the scheduling step library with behave (importing it defines the steps)."""

from jobconform.conformance.scheduling.steps import *  # noqa: F403

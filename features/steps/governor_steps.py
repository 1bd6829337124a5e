"""Registers the governor step library with behave (importing it defines the steps)."""

from jobconform.conformance.governor_steps import *  # noqa: F403

"""Registers the reaper step library with behave (importing it defines the steps)."""

from jobconform.conformance.reaper_steps import *  # noqa: F403

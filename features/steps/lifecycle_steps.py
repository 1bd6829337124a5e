"""Registers the lifecycle step library with behave (importing it defines the steps)."""

from jobconform.conformance.behave_steps import *  # noqa: F403

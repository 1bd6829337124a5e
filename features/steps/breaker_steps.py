"""Registers the breaker step library with behave (importing it defines the steps)."""

from jobconform.conformance.breaker_steps import *  # noqa: F403

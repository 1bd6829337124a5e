"""Registers the admission step library with behave (importing it defines the steps)."""

from jobconform.conformance.admission_steps import *  # noqa: F403

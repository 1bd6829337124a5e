"""Registers the redelivery step library with behave (importing it defines the steps)."""

from jobconform.conformance.redelivery_steps import *  # noqa: F403

"""Registers the idempotency step library with behave (importing it defines the steps)."""

from jobconform.conformance.idempotency_steps import *  # noqa: F403

"""Registers the step that replays a recorded trace command (generated regressions)."""

from jobconform.conformance.trace_steps import *  # noqa: F403

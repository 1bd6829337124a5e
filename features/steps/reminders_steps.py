"""Registers the reminders step library with behave (importing it defines the steps)."""

from jobconform.conformance.reminders_steps import *  # noqa: F403

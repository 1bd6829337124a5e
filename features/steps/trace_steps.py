"""Registers the steps that replay recorded trace commands (generated regressions): the
lifecycle machine's and every other area machine's."""

from jobconform.conformance.area_trace_steps import *  # noqa: F403
from jobconform.conformance.trace_steps import *  # noqa: F403

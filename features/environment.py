"""Behave hooks: a fresh harness per scenario, from `-D backend=NAME -D profile=NAME`.

The logic lives in jobconform.conformance.lifecycle.steps; see its docstring.
"""

from jobconform.conformance.lifecycle.steps import after_scenario, before_all, before_scenario

__all__ = ["after_scenario", "before_all", "before_scenario"]

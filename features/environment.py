"""Behave hooks: a fresh harness per scenario, from `-D backend=NAME -D profile=NAME`.

The logic lives in jobconform.conformance.behave_hooks; see its docstring.
"""

from jobconform.conformance.behave_hooks import after_scenario, before_all, before_scenario

__all__ = ["after_scenario", "before_all", "before_scenario"]

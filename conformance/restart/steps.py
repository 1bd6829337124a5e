"""Behave steps for a restart over the same store (features/restart.feature, RS-001..RS-008).

A restart is one more command of the lifecycle harness (`Restart`): the backend stops its
runtime and opens a new one over the same store, the oracle keeps every record, and the
harness compares the whole state after it as after any command. The steps are derived
from the commands' declarations (declarations.py); every other step of a restart scenario
is a lifecycle or redelivery step. Register it from features/steps/ (every area's library
is imported there):

    from jobconform.conformance.restart.steps import *  # noqa: F403
"""

from __future__ import annotations

from jobconform.conformance.restart.declarations import DECLARATIONS
from jobconform.conformance.scenario import state_of
from jobconform.conformance.vocabulary import derive_steps

__all__: list[str] = []

derive_steps(DECLARATIONS, state_of)

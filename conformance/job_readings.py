"""Readings of what the job runtime shows, for every area checked through it.

The lifecycle, retry and stuck-job checks, and those of the areas that are parts of the
job runtime (reaper, re-delivery, restart), read the same things: a job's record, the
answer to the latest command, the answer to a command sent now. Each reads through the
scenario's state or the Robot library, which share `harness`, `answers`, `last_command`
and `run`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from functools import partial
from typing import Any

from jobconform.backends.protocol import JobView
from jobconform.conformance.vocabulary import Reading

# The Robot library the job runtime's keywords are in, which the areas that are parts of
# the job runtime (reaper, re-delivery, restart) run through.
JOB_RUNTIME_LIBRARY = "jobconform.conformance.lifecycle.keywords.JobconformLibrary"


def job_record(through: Any, alias: str) -> JobView:
    """The backend's current record of an accepted job.

    Raises:
        AssertionError: it was never accepted, or the backend holds no record of it.
    """
    job_id = through.harness.ids.get(alias)
    if job_id is None:
        raise AssertionError(f"job {alias!r} was never accepted, so it has no record"
                             f" (submission answer: {through.answers.get(alias)!r})")
    view: JobView | None = through.harness.runtime.get(job_id)
    if view is None:
        raise AssertionError(f"the backend holds no record of job {alias!r}")
    return view


def answer_to(kind: type, through: Any) -> object:
    """The answer to the latest command, which must be a `kind`.

    Raises:
        AssertionError: the latest command was of another kind.
    """
    if not isinstance(through.last_command, kind):
        raise AssertionError(f"the check reads the answer to a {kind.__name__} command, but"
                             f" the latest command was {through.last_command!r}")
    return through.harness.last_answer


def answered(kind: type, what: str, wanted: object,
             agrees: Callable[[object, object], bool] = operator.eq,
             shown: Callable[[object], object] | None = None) -> Reading:
    """The answer to the latest command, a `kind`, is `wanted`."""
    return Reading(what, partial(answer_to, kind), wanted, agrees, shown=shown)


def sent_answers(command: Any, what: str, wanted: object,
                 agrees: Callable[[object, object], bool] = operator.eq) -> Reading:
    """`command` sent through the harness (compared with the oracle) answers `wanted`."""
    return Reading(what, lambda through: through.run(command), wanted, agrees)

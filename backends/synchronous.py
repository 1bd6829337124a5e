"""Queued execution switched off (LC-037, seed 000's async.enabled false): the shipped
runtimes run a job's body inside the submit call, in the caller's thread, instead of
queueing it for a worker.

The job goes into the store already running (so the task cap is checked before the body
runs, and a refused submission runs nothing), under a delivery of the caller's own; the
body runs with the job's arguments (LC-036) and execution options (LC-035); the outcome is
then written as any owner's is (`ownership.finish`), at the same instant, since no time
passes inside a call.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from jobconform.backends import ownership
from jobconform.backends.protocol import TaskScript
from jobconform.backends.store import FAILED, RUNNING, SUCCEEDED, JobStore, StoredJob
from jobconform.reference.lifecycle import JsonValue

# The fencing token of the caller's delivery: the first claim's, as no claim comes before.
SUBMITTER_TOKEN = 1


def run_in_submit(store: JobStore, job: StoredJob, max_tasks: int | None, worker_id: str,
                  script: TaskScript) -> str:
    """Add `job` (new, at its submitted_at) started, run its body to its end, record how
    it ended; returns the terminal status, for the caller's counters.

    Raises:
        CapacityExceeded: the task cap is reached; nothing was added and nothing ran.
    """
    now = job.submitted_at
    store.add(replace(job, status=RUNNING, started_at=now, worker_id=worker_id,
                      last_heartbeat=now, fencing_token=SUBMITTER_TOKEN), max_tasks)
    result: JsonValue = None
    error: str | None = None
    try:
        # A copy of the options, as a queued run is handed (LC-035): the body cannot change
        # the record.
        result = script.run(job.arguments, copy.deepcopy(job.options))
    except Exception as raised:  # the body's own failure, recorded as LC-007 says
        status, error = FAILED, f"{type(raised).__name__}: {raised}"
    else:
        status = SUCCEEDED
    ownership.finish(store, job.job_id, SUBMITTER_TOKEN, status, now, result, error)
    return status

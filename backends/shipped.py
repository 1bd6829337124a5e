"""What the shipped backends (memory, sql, threaded, threaded+sql) share: the capabilities
they all claim, in groups, and a base with the profile and the composite runtime, which
each wires from its own area runtimes (backends/composite/wiring.py).

A third-party adapter needs none of this: the adapter protocol is structural
(backends/protocol.py).
"""

from __future__ import annotations

from jobconform.backends.breaker.protocol import BREAKER
from jobconform.backends.capabilities import (
    AUDIT_EVENTS,
    CONCURRENT_SUBMIT,
    HEALTH_REPORT,
    every_shipped,
    store_faults,
)
from jobconform.backends.composite.protocol import COMPOSITE
from jobconform.backends.composite.wiring import SharedAdmission, open_shared_admission
from jobconform.backends.governor.protocol import GOVERNOR
from jobconform.backends.loops.protocol import LOOPS
from jobconform.backends.protocol import (
    ADMISSION,
    IDEMPOTENCY,
    LIFECYCLE,
    REAPER,
    REDELIVERY,
    REMINDERS,
    RETRY,
    STUCK,
    Clock,
)
from jobconform.backends.scheduling.protocol import SCHEDULING
from jobconform.backends.task_store.protocol import STORE
from jobconform.reference.composite.oracle import CompositeConfig

# Every area but restart and self-running, planned store faults in reminders and
# idempotency, and every capability declared as claimed by every shipped backend
# (jobconform.backends.capabilities): claimed by every shipped backend.
EVERY_SHIPPED_BACKEND = frozenset({
    LIFECYCLE, RETRY, STUCK, REAPER, REDELIVERY, IDEMPOTENCY, BREAKER, GOVERNOR, REMINDERS,
    ADMISSION, LOOPS, SCHEDULING, STORE, COMPOSITE,
    store_faults(REMINDERS), store_faults(IDEMPOTENCY)}) | every_shipped()
# The loggers the shipped runtimes log on with the standard `logging` module, which the
# harness captures (log-records; jobconform.backends.log_records).
SHIPPED_LOGGERS = ("jobconform.reaper", "jobconform.admission", "jobconform.lifecycle")
# The health report, submissions from threads at once and the audit events: claimed by
# memory, sql and threaded (not threaded+sql).
HEALTH_AND_AUDIT = frozenset({HEALTH_REPORT, CONCURRENT_SUBMIT, AUDIT_EVENTS})
# Planned store faults in lease passes and sweeps: claimed by the step runtimes (memory,
# sql), whose job store sees no write but the command's (see the threaded backend's note).
JOB_STORE_FAULTS = frozenset({store_faults(REDELIVERY), store_faults(REAPER)})


class ShippedBackend:
    """The base of the shipped backends: the canonical profile, and a composite runtime
    from the backend's own area runtimes."""

    profile = "canonical"
    log_loggers = SHIPPED_LOGGERS

    def open_composite(self, clock: Clock, config: CompositeConfig) -> SharedAdmission:
        """Its own area runtimes wired to one admission (backends/composite/wiring.py)."""
        return open_shared_admission(self, clock, config)

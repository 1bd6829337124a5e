"""Dramatiq on its own clockwork: the self-running area (SR-001, SR-004), composed onto
`dramatiq_jobs`. Nothing dispatches: the Worker's consumers poll Redis by themselves, each
idle poll backing off up to its `worker_timeout` (the clockwork's poll interval), and a body
begins as a worker thread takes its message (the gate lets it in on arrival). A failed
attempt waits in the delay queue; the delay queue's consumer moves it back to its queue
once its eta has passed, and a consumer fetches it. Dramatiq has no heartbeat-based job
timeout and no lease (TimeLimit counts from the start and interrupts a thread only when it
runs Python code), so SR-002 and SR-003 are not claimed, and no reaper (SR-005).
"""

from dramatiq_jobs import DramatiqBackend, DramatiqRuntime

from jobconform.backends.protocol import Clock, RuntimeSettings
from jobconform.backends.self_running import SELF_RUNNING, Clockwork


class SelfRunningDramatiq(DramatiqRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock, clockwork: Clockwork) -> None:
        super().__init__(settings, clock, clockwork)
        self.settle()  # its consumers' first polls, before any submission can race them


class DramatiqSelfRunningBackend(DramatiqBackend):
    # jobconform run --backend dramatiq_self_running:DramatiqSelfRunningBackend
    capabilities = DramatiqBackend.capabilities | {SELF_RUNNING}

    def open_self_running(self, settings: RuntimeSettings, clock: Clock,
                          clockwork: Clockwork) -> SelfRunningDramatiq:
        return SelfRunningDramatiq(settings, clock, clockwork)

"""A restart's commands (RS-001..RS-008), declared once (conformance/vocabulary.py).

A restart is one more command of the job runtime's harness: the area opens none of its
own, its vocabulary `runs_through` the lifecycle library's (in Behave, the scenario's job
runtime). Its Behave steps and Robot keywords (conformance/restart/keywords.py) are
derived from this list; the wordings are the feature file's and the Robot suite's own.
Every other step or keyword of a restart test is a lifecycle or redelivery one.
"""

from __future__ import annotations

from jobconform.conformance.harness import GracePeriodEnds, GracePeriodOpened
from jobconform.conformance.job_readings import JOB_RUNTIME_LIBRARY
from jobconform.conformance.vocabulary import Declaration, Phrase, Vocabulary, command_worded
from jobconform.reference import commands as cmd

# -- builders: each is a Robot keyword's signature and documentation ---------------------


def restart_runtime_over_the_same_store() -> cmd.Restart:
    """The process stops without a shutdown and a new one opens over its store; the
    harness then compares every record, the listing and the health with the oracle."""
    return cmd.Restart()


def send_sigterm_to_the_runtime(grace_seconds: float = 10.0) -> cmd.StopBySignal:
    """SIGTERM to the runtime's process, SIGKILL if it is still there when the grace
    period ends, and a new runtime over the same store (RS-004); the harness compares
    how it stopped, every record, the listing and the health with the oracle."""
    return cmd.StopBySignal(float(grace_seconds))


def send_stop_signal(signal: str = "SIGTERM", grace_seconds: float = 10.0) -> cmd.StopBySignal:
    """SIGTERM or SIGINT to the runtime's process, with nothing happening in the grace
    period but what the runtime does itself (RS-004..RS-008; SIGINT: RS-007)."""
    return cmd.StopBySignal(float(grace_seconds), signal)


def send_stop_signal_during_which(signal: str = "SIGTERM",
                                  grace_seconds: float = 10.0) -> GracePeriodOpened:
    """SIGTERM or SIGINT to the runtime's process; the steps that follow (bodies ending,
    time passing) happen in the grace period, until `End The Grace Period` (RS-006)."""
    return GracePeriodOpened(signal, float(grace_seconds))


def end_the_grace_period() -> GracePeriodEnds:
    """The grace period ends: the clock stands its length after the signal, a process
    still holding work is killed, and a new runtime opens over the same store; the
    harness compares how it stopped, every record, the listing and the health."""
    return GracePeriodEnds()


DECLARATIONS = (
    command_worded("Restart Runtime Over The Same Store", restart_runtime_over_the_same_store,
                   "the runtime restarts over the same store"),
    command_worded("Send SIGTERM To The Runtime", send_sigterm_to_the_runtime,
                   "the runtime is sent SIGTERM with a grace period of {grace_seconds:g}"
                   " seconds"),
    Declaration("Send Stop Signal", send_stop_signal, (
        Phrase("the runtime is sent SIGINT with a grace period of {seconds:g} seconds",
               lambda seconds: send_stop_signal("SIGINT", seconds)),
    )),
    command_worded("Send Stop Signal During Which", send_stop_signal_during_which,
                   "the runtime is sent {signal:w} with a grace period of {grace_seconds:g}"
                   " seconds, during which"),
    command_worded("End The Grace Period", end_the_grace_period, "the grace period ends"),
)

VOCABULARY = Vocabulary(area="restart", noun="restart", start=None, commands=DECLARATIONS,
                        runs_through=JOB_RUNTIME_LIBRARY)

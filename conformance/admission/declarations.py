"""The admission area's commands, declared once (conformance/vocabulary.py).

Each declaration names the Robot keyword that sends a command, builds the command from
the keyword's arguments, and lists the Gherkin wordings that send it. The Behave steps
(conformance/admission/steps.py) and the Robot keywords
(conformance/admission/keywords.py) are derived from this list; the wordings are the
feature file's and Robot suite's own. A keyword returns the backend's answer (the last
one, for a keyword that sends several commands); a Then-step reads the harness's.
"""

from __future__ import annotations

from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.vocabulary import Declaration, Phrase
from jobconform.reference import admission as ad


def fail_settings_reads(failing: bool = True) -> ad.FailSettingsReads:
    """Every read of the settings store fails from now on (``False``: reads succeed
    again); the runtime must take the default ceiling meanwhile (AD-020)."""
    return ad.FailSettingsReads(bool(failing))


def admit_execution(execution: str, owner: str) -> ad.Admit:
    return ad.Admit(execution, owner)


def admit_execution_with_timeout(execution: str, owner: str,
                                 timeout_seconds: int) -> ad.Admit:
    """New work naming its own timeout, overriding its owner's (AD-016)."""
    return ad.Admit(execution, owner, timeout_seconds=timeout_seconds)


def admit_execution_on_behalf_of(execution: str, owner: str, identity: str) -> ad.Admit:
    """New work acting for `identity`, captured now and used at its start (AD-019)."""
    return ad.Admit(execution, owner, identity=identity)


def admit_scheduled_execution(execution: str, owner: str, schedule: str) -> ad.Admit:
    """Work the owner's `schedule` dispatched: it runs under the schedule's timeout
    clamped to its owner's (AD-021)."""
    return ad.Admit(execution, owner, schedule=schedule)


def admit_executions(owner: str, *executions: str) -> list[ad.Admit]:
    return [ad.Admit(execution, owner) for execution in executions]


def admit_execution_on_peer(execution: str, owner: str) -> ad.Admit:
    """New work arriving through the second runtime over the same store (AD-027)."""
    return ad.Admit(execution, owner, peer=True)


def admit_executions_on_peer(owner: str, *executions: str) -> list[ad.Admit]:
    return [ad.Admit(execution, owner, peer=True) for execution in executions]


def complete_execution_on_peer(execution: str) -> ad.FinishExecution:
    """The execution ends through the second runtime, whichever started it (AD-027)."""
    return ad.FinishExecution(execution, peer=True)


def cancel_execution_on_peer(execution: str) -> ad.CancelExecution:
    return ad.CancelExecution(execution, peer=True)


PEER = " through the second runtime"
OWNER = 'owner "{owner}"'
ARRIVES = 'execution "{execution}" arrives for owner "{owner}"'
SCHEDULE = 'schedule "{schedule}" of owner "{owner}" is'
DECLARATIONS = (
    # A command whose fields are the keyword's arguments is its own builder.
    Declaration("Add Owner", ad.AddOwner, (
        Phrase(OWNER + " is added", ad.AddOwner),
        Phrase('owners "{owners}" are added',
               lambda owners: [ad.AddOwner(owner) for owner in alias_list(owners)]),
    )),
    Declaration("Set Fleet Ceiling", ad.SetCeiling, (
        Phrase("the fleet ceiling is set to {value:d}", ad.SetCeiling),
        Phrase("the fleet ceiling is set to {value:d} by {by:w}", ad.SetCeiling),
    )),
    Declaration("Read Fleet Ceiling Changes", ad.ReadCeilingChanges, (
        Phrase("the fleet ceiling's changes are read", ad.ReadCeilingChanges),
    )),
    Declaration("Store Raw Fleet Ceiling", ad.StoreRawCeiling, (
        Phrase("the settings store holds a fleet ceiling of {value:d}", ad.StoreRawCeiling),
    )),
    Declaration("Fail Settings Reads", fail_settings_reads, (
        Phrase("reads of the settings store fail", fail_settings_reads),
        Phrase("reads of the settings store succeed again", lambda: fail_settings_reads(False)),
    )),
    Declaration("Read Fleet Ceiling", ad.ReadCeiling, (
        Phrase("the fleet ceiling is read", ad.ReadCeiling),
    )),
    Declaration("Set Parallel Cap", ad.SetParallelCap, (
        Phrase(OWNER + " parallel cap is set to {value:d}", ad.SetParallelCap),
    )),
    Declaration("Set Backlog Depth", ad.SetBacklogDepth, (
        Phrase(OWNER + " backlog depth is set to {value:d}", ad.SetBacklogDepth),
    )),
    Declaration("Set Execution Timeout", ad.SetExecutionTimeout, (
        Phrase(OWNER + " execution timeout is set to {seconds:d} seconds",
               ad.SetExecutionTimeout),
    )),
    Declaration("Read Owner", ad.ReadOwner, (
        Phrase(OWNER + " is read", ad.ReadOwner),
    )),
    Declaration("Delete Owner", ad.DeleteOwner, (
        Phrase(OWNER + " is deleted", ad.DeleteOwner),
    )),
    Declaration("Admit Execution", admit_execution, (
        Phrase(ARRIVES, admit_execution),
    )),
    Declaration("Admit Execution With Timeout", admit_execution_with_timeout, (
        Phrase(ARRIVES + " with its own timeout of {seconds:d} seconds",
               lambda execution, owner, seconds: admit_execution_with_timeout(
                   execution, owner, seconds)),
    )),
    Declaration("Admit Execution On Behalf Of", admit_execution_on_behalf_of, (
        Phrase(ARRIVES + " on behalf of {identity:w}", admit_execution_on_behalf_of),
    )),
    Declaration("Admit Scheduled Execution", admit_scheduled_execution, (
        Phrase('schedule "{schedule}" of owner "{owner}" dispatches execution "{execution}"',
               admit_scheduled_execution),
    )),
    Declaration("Restart Admission Runtime", ad.Restart, (
        Phrase("the admission runtime restarts", ad.Restart),
    )),
    Declaration("Admit Executions", admit_executions, (
        Phrase('executions "{executions}" arrive for owner "{owner}"',
               lambda executions, owner: admit_executions(owner, *alias_list(executions))),
    )),
    Declaration("Complete Execution", ad.FinishExecution, (
        Phrase('execution "{execution}" completes', ad.FinishExecution),
    )),
    Declaration("Cancel Execution", ad.CancelExecution, (
        Phrase('execution "{execution}" is cancelled', ad.CancelExecution),
    )),
    Declaration("Admit Execution On Second Runtime", admit_execution_on_peer, (
        Phrase(ARRIVES + PEER, admit_execution_on_peer),
    )),
    Declaration("Admit Executions On Second Runtime", admit_executions_on_peer, (
        Phrase('executions "{executions}" arrive for owner "{owner}"' + PEER,
               lambda executions, owner: admit_executions_on_peer(
                   owner, *alias_list(executions))),
    )),
    Declaration("Complete Execution On Second Runtime", complete_execution_on_peer, (
        Phrase('execution "{execution}" completes' + PEER, complete_execution_on_peer),
    )),
    Declaration("Cancel Execution On Second Runtime", cancel_execution_on_peer, (
        Phrase('execution "{execution}" is cancelled' + PEER, cancel_execution_on_peer),
    )),
    Declaration("Run Admission Maintenance", ad.Maintain, (
        Phrase("an admission maintenance pass runs", ad.Maintain),
    )),
    Declaration("Pass Admission Time", ad.PassTime, (
        Phrase("{seconds:g} seconds pass on the admission clock", ad.PassTime),
    )),
    Declaration("Start Call", ad.StartCall, (
        Phrase('execution "{execution}" calls owner "{target}" as call "{call}"',
               ad.StartCall),
    )),
    Declaration("End Call", ad.EndCall, (
        Phrase('call "{call}" returns', ad.EndCall),
    )),
    Declaration("Create Schedule", ad.AddSchedule, (
        Phrase(SCHEDULE + " created with a timeout of {seconds:d} seconds",
               lambda schedule, owner, seconds: ad.AddSchedule(owner, schedule, seconds)),
    )),
    Declaration("Change Schedule", ad.ChangeSchedule, (
        Phrase(SCHEDULE + " changed to a timeout of {seconds:d} seconds",
               lambda schedule, owner, seconds: ad.ChangeSchedule(owner, schedule, seconds)),
    )),
    Declaration("Remove Schedule", ad.RemoveSchedule, (
        Phrase(SCHEDULE + " removed", ad.RemoveSchedule),
    )),
    Declaration("Store Raw Schedule", ad.StoreRawSchedule, (
        Phrase('the store holds schedule "{schedule}" of owner "{owner}" with a timeout of'
               " {seconds:d} seconds",
               lambda schedule, owner, seconds: ad.StoreRawSchedule(owner, schedule,
                                                                     seconds)),
    )),
)

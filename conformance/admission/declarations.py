"""What the admission area's suites say (AD-001..AD-027), declared once
(conformance/vocabulary.py): the commands, checks and settings from which its Behave steps
and Robot keywords are derived, in the feature file's and the Robot suite's own words.

A keyword returns the backend's answer (the last one, for a keyword that sends several
commands), which the test hands to a check; a Then-step checks the harness's last answer.
The other checks read the BACKEND's admission runtime. The steps speak of owners,
executions, calls, schedules and the fleet ceiling, words the lifecycle steps never use.
Values a Robot test gives as text are read as JSON where a keyword says so (``11``,
``"o"``, ``true``), and kept as text where they are not JSON.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

from jobconform.conformance.admission.harness import AdmissionHarness
from jobconform.conformance.area_steps import alias_list
from jobconform.conformance.clock import EPOCH
from jobconform.conformance.scenario import same_value
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    Phrase,
    Reading,
    Setting,
    Vocabulary,
    check_worded,
    command_worded,
    json_value,
)
from jobconform.reference import admission as ad
from jobconform.spec import Profile, Registry


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
    command_worded("Set Fleet Ceiling", ad.SetCeiling,
                   "the fleet ceiling is set to {value:d}",
                   "the fleet ceiling is set to {value:d} by {by:w}"),
    command_worded("Read Fleet Ceiling Changes", ad.ReadCeilingChanges,
                   "the fleet ceiling's changes are read"),
    command_worded("Store Raw Fleet Ceiling", ad.StoreRawCeiling,
                   "the settings store holds a fleet ceiling of {value:d}"),
    Declaration("Fail Settings Reads", fail_settings_reads, (
        Phrase("reads of the settings store fail", fail_settings_reads),
        Phrase("reads of the settings store succeed again", lambda: fail_settings_reads(False)),
    )),
    command_worded("Read Fleet Ceiling", ad.ReadCeiling, "the fleet ceiling is read"),
    command_worded("Set Parallel Cap", ad.SetParallelCap,
                   OWNER + " parallel cap is set to {value:d}"),
    command_worded("Set Backlog Depth", ad.SetBacklogDepth,
                   OWNER + " backlog depth is set to {value:d}"),
    command_worded("Set Execution Timeout", ad.SetExecutionTimeout,
                   OWNER + " execution timeout is set to {seconds:d} seconds"),
    command_worded("Read Owner", ad.ReadOwner, OWNER + " is read"),
    command_worded("Delete Owner", ad.DeleteOwner, OWNER + " is deleted"),
    command_worded("Admit Execution", admit_execution, ARRIVES),
    Declaration("Admit Execution With Timeout", admit_execution_with_timeout, (
        Phrase(ARRIVES + " with its own timeout of {seconds:d} seconds",
               lambda execution, owner, seconds: admit_execution_with_timeout(
                   execution, owner, seconds)),
    )),
    command_worded("Admit Execution On Behalf Of", admit_execution_on_behalf_of,
                   ARRIVES + " on behalf of {identity:w}"),
    command_worded("Admit Scheduled Execution", admit_scheduled_execution,
                   'schedule "{schedule}" of owner "{owner}" dispatches execution "{execution}"'),
    command_worded("Restart Admission Runtime", ad.Restart, "the admission runtime restarts"),
    Declaration("Admit Executions", admit_executions, (
        Phrase('executions "{executions}" arrive for owner "{owner}"',
               lambda executions, owner: admit_executions(owner, *alias_list(executions))),
    )),
    command_worded("Complete Execution", ad.FinishExecution, 'execution "{execution}" completes'),
    command_worded("Cancel Execution", ad.CancelExecution, 'execution "{execution}" is cancelled'),
    command_worded("Admit Execution On Second Runtime", admit_execution_on_peer, ARRIVES + PEER),
    Declaration("Admit Executions On Second Runtime", admit_executions_on_peer, (
        Phrase('executions "{executions}" arrive for owner "{owner}"' + PEER,
               lambda executions, owner: admit_executions_on_peer(
                   owner, *alias_list(executions))),
    )),
    command_worded("Complete Execution On Second Runtime", complete_execution_on_peer,
                   'execution "{execution}" completes' + PEER),
    command_worded("Cancel Execution On Second Runtime", cancel_execution_on_peer,
                   'execution "{execution}" is cancelled' + PEER),
    command_worded("Run Admission Maintenance", ad.Maintain, "an admission maintenance pass runs"),
    command_worded("Pass Admission Time", ad.PassTime,
                   "{seconds:g} seconds pass on the admission clock"),
    command_worded("Start Call", ad.StartCall,
                   'execution "{execution}" calls owner "{target}" as call "{call}"'),
    command_worded("End Call", ad.EndCall, 'call "{call}" returns'),
    Declaration("Create Schedule", ad.AddSchedule, (
        Phrase(SCHEDULE + " created with a timeout of {seconds:d} seconds",
               lambda schedule, owner, seconds: ad.AddSchedule(owner, schedule, seconds)),
    )),
    Declaration("Change Schedule", ad.ChangeSchedule, (
        Phrase(SCHEDULE + " changed to a timeout of {seconds:d} seconds",
               lambda schedule, owner, seconds: ad.ChangeSchedule(owner, schedule, seconds)),
    )),
    command_worded("Remove Schedule", ad.RemoveSchedule, SCHEDULE + " removed"),
    command_worded("Store Raw Schedule", ad.StoreRawSchedule,
                   'the store holds schedule "{schedule}" of owner "{owner}" with a timeout of'
                   " {timeout_seconds:d} seconds"),
)

# -- checks: the answer a test got, and what the backend's admission runtime shows ----------


def _json(text: object) -> Any:
    """A value from a Robot test: JSON where it parses, else the text itself."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _last_answer(through: Any) -> object:
    return through.harness.last_answer


def admission_answer_should_be(answer: object, expected: str) -> Reading:
    """``expected`` is JSON (``"running"``, ``true``, ``2``) or plain text."""
    return Reading("the answer", lambda through: answer, _json(expected), same_value)


def _last_answer_is(expected: str) -> Reading:
    """`expected` is JSON: "running", "queued", true, 2, ..."""
    return Reading("the answer to the last admission command", _last_answer,
                   json_value(expected), same_value)


def _refusal(answered: Any, error: str, details: dict[str, object]) -> Reading:
    wanted = {"error": error, **details}
    return Reading("the refusal", lambda through: (
        {key: shown.get(key) for key in wanted} if isinstance(shown := answered(through), dict)
        else shown), wanted)


def refusal_should_be(answer: object, error: str, **details: str) -> Reading:
    """The answer is the refusal ``error``, carrying ``details`` (values as JSON)."""
    return _refusal(lambda through: answer, error,
                    {key: _json(value) for key, value in details.items()})


def _execution(through: Any, execution: str, field: str) -> object:
    view = through.harness.runtime.execution(execution)
    return "<no record>" if view is None else getattr(view, field)


def _execution_field(execution: str, field: str, wanted: object) -> Reading:
    return Reading(f"execution {execution!r} {field}",
                   lambda through: _execution(through, execution, field), wanted)


def execution_state_should_be(execution: str, state: str) -> Reading:
    return _execution_field(execution, "state", state)


def executions_should_be(state: str, *executions: str) -> Reading:
    return Reading(f"the state of executions {', '.join(map(repr, executions))}",
                   lambda through: tuple(_execution(through, execution, "state")
                                         for execution in executions),
                   tuple(state for _ in executions))


def _second(seconds: float) -> object:
    return EPOCH + timedelta(seconds=seconds)


def execution_should_have_started_at_second(execution: str, seconds: float) -> Reading:
    return _execution_field(execution, "started_at", _second(seconds))


def execution_should_have_ended_at_second(execution: str, seconds: float) -> Reading:
    return _execution_field(execution, "ended_at", _second(seconds))


def execution_timeout_should_be(execution: str, seconds: int) -> Reading:
    return _execution_field(execution, "timeout_seconds", seconds)


def execution_should_act_on_behalf_of(execution: str, identity: str) -> Reading:
    return _execution_field(execution, "identity", identity)


def execution_should_never_have_started(execution: str) -> Reading:
    return _execution_field(execution, "started_at", None)


def backlog_should_be(owner: str, *executions: str) -> Reading:
    """The owner's queued executions, oldest first (none given: empty)."""
    return Reading(f"owner {owner!r} backlog, oldest first",
                   lambda through: list(through.harness.runtime.backlog(owner)),
                   list(executions))


def _owner_shows(owner: str, wanted: dict[str, object]) -> Reading:
    def shown(through: Any) -> object:
        view = through.harness.runtime.owner(owner)
        return None if view is None else {key: getattr(view, key, "<missing>")
                                          for key in wanted}
    return Reading(f"owner {owner!r}", shown, wanted)


def owner_should_show(owner: str, **fields: str) -> Reading:
    """Fields of the owner's view (``effective_cap=2``), values as JSON."""
    return _owner_shows(owner, {key: _json(value) for key, value in fields.items()})


def owner_should_not_exist(owner: str) -> Reading:
    return Reading(f"owner {owner!r}", lambda through: through.harness.runtime.owner(owner),
                   None)


def _ceiling(through: Any) -> tuple[object, object]:
    view = through.harness.runtime.ceiling()
    return view.stored, view.in_force


def fleet_ceiling_should_be(stored: int, in_force: int) -> Reading:
    return Reading("the fleet ceiling (stored, in force)", _ceiling, (stored, in_force))


def fleet_ceiling_should_be_unreadable_and_in_force(in_force: int) -> Reading:
    """The stored ceiling is unknown (its read fails) and `in_force` applies."""
    return Reading("the fleet ceiling (stored, in force)", _ceiling, (None, in_force))


def _ceiling_changes(wanted: object) -> Reading:
    return Reading("the fleet ceiling's changes", lambda through: [
        {"value": c.value, "by": c.by, "second": (c.at - EPOCH).total_seconds()}
        for c in through.harness.runtime.ceiling_changes()], wanted)


def fleet_ceiling_changes_should_be(expected: str) -> Reading:
    """``expected`` is JSON: ``[{"value": 5, "by": "ann", "second": 0}]``, oldest
    first, "second" counted from the check's start (AD-022)."""
    return _ceiling_changes(_json(expected))


def call_state_should_be(call: str, state: str) -> Reading:
    return Reading(f"call {call!r} state",
                   lambda through: through.harness.runtime.call_state(call), state)


def _schedules(owner: str, wanted: object) -> Reading:
    return Reading(f"owner {owner!r} schedules", lambda through: [
        list(s) for s in through.harness.runtime.schedules(owner)], wanted)


def schedules_should_be(owner: str, expected: str) -> Reading:
    """``expected`` is JSON: ``[["nightly", 600]]`` in creation order."""
    return _schedules(owner, _json(expected))


CHECKS = (
    Check("Admission Answer Should Be", admission_answer_should_be, (
        Phrase("the admission answer is {expected}", _last_answer_is),
    )),
    Check("Refusal Should Be", refusal_should_be, (
        Phrase('the admission refusal is "{error}"',
               lambda error: _refusal(_last_answer, error, {})),
        Phrase('the admission refusal is "{error}" with {details}',
               lambda error, details: _refusal(_last_answer, error, _object(details))),
    )),
    check_worded("Execution State Should Be", execution_state_should_be,
                 'execution "{execution}" is {state:w}'),
    Check("Executions Should Be", executions_should_be, (
        Phrase('executions "{executions}" are {state:w}',
               lambda executions, state: executions_should_be(state, *alias_list(executions))),
    )),
    check_worded("Execution Should Have Started At Second", execution_should_have_started_at_second,
                 'execution "{execution}" started at second {seconds:g}'),
    check_worded("Execution Should Have Ended At Second", execution_should_have_ended_at_second,
                 'execution "{execution}" ended at second {seconds:g}'),
    check_worded("Execution Timeout Should Be", execution_timeout_should_be,
                 'execution "{execution}" has a timeout of {seconds:d} seconds'),
    check_worded("Execution Should Act On Behalf Of", execution_should_act_on_behalf_of,
                 'execution "{execution}" acts on behalf of {identity:w}'),
    check_worded("Execution Should Never Have Started", execution_should_never_have_started,
                 'execution "{execution}" never started'),
    Check("Backlog Should Be", backlog_should_be, (
        Phrase('the backlog of owner "{owner}" is "{executions}"',
               lambda owner, executions: backlog_should_be(owner, *alias_list(executions))),
        Phrase('the backlog of owner "{owner}" is empty', backlog_should_be),
    )),
    Check("Owner Should Show", owner_should_show, (
        Phrase('owner "{owner}" shows {fields}',
               lambda owner, fields: _owner_shows(owner, _object(fields))),
    )),
    check_worded("Owner Should Not Exist", owner_should_not_exist,
                 'owner "{owner}" no longer exists'),
    check_worded("Fleet Ceiling Should Be", fleet_ceiling_should_be,
                 "the stored fleet ceiling is {stored:d} and the ceiling in force is"
                 " {in_force:d}"),
    check_worded("Fleet Ceiling Should Be Unreadable And In Force",
                 fleet_ceiling_should_be_unreadable_and_in_force,
                 "the stored fleet ceiling is unknown and the ceiling in force is"
                 " {in_force:d}"),
    Check("Fleet Ceiling Changes Should Be", fleet_ceiling_changes_should_be, (
        Phrase("the fleet ceiling's changes are {changes}",
               lambda changes: _ceiling_changes(json_value(changes))),
    )),
    check_worded("Call State Should Be", call_state_should_be,
                 'outbound call "{call}" is {state:w}'),
    Check("Schedules Should Be", schedules_should_be, (
        Phrase('the schedules of owner "{owner}" are {schedules}',
               lambda owner, schedules: _schedules(owner, json_value(schedules))),
    )),
)


def _object(text: str) -> dict[str, object]:
    """A feature's JSON object of fields.

    Raises:
        ValueError: not a JSON object.
    """
    value = json_value(text)
    if not isinstance(value, dict):
        raise ValueError(f"write the fields as a JSON object, not {text!r}")
    return dict(value)


# -- settings: the parameters a feature fixes before its first command ----------------------


def _settings(settings: str) -> dict[str, object]:
    """`settings` is `name=value, ...` of jobconform.reference.admission.AdmissionConfig,
    values as JSON."""
    pairs = (pair.partition("=") for pair in alias_list(settings))
    return {name.strip(): json_value(value.strip()) for name, _, value in pairs}


SETTINGS = (
    Setting("an admission runtime", dict),
    Setting("an admission runtime with {settings}", _settings),
)


def open_admission(backend: Any, profile: Profile, registry: Registry,
                   overrides: dict[str, Any]) -> AdmissionHarness:
    """The admission harness, the profile's defaults overridden by AdmissionConfig
    settings (a Robot test's values read as JSON)."""
    return AdmissionHarness(backend, profile, registry,
                            {name: _json(value) for name, value in overrides.items()})


VOCABULARY = Vocabulary(area="admission", noun="admission", start="Start Admission Runtime",
                        commands=DECLARATIONS, checks=CHECKS, settings=SETTINGS,
                        open=open_admission)

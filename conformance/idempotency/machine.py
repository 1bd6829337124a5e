"""The Hypothesis machine for idempotency keys: random interleavings of claims,
completions, failures, releases, duplicates, purges, clock steps and failed store writes
over a few keys.

The harness compares every answer with the oracle. Each example draws the parameters on
which designs differ (failures stored or released, mismatch status 422 or 409). Two
scopes, two keys and two payloads make duplicates and mismatches common; the clock's
steps sit on the stale-lock boundary (90 s, and half a second past it) and add up to the
24-hour TTL within a short sequence, so takeovers and expiry come up often.

Whether executions may be re-delivered is not drawn: a drawn parameter moved every rule's
draws, and seed 0 then missed two gallery entries. Each sequence opens with the same
fixed effects on two runtimes of their own, re-delivery disabled and then enabled:
effects without an execution id go out unguarded (IK-014), then are refused (IK-018),
while effects naming one are guarded as ever.

Where the backend claims audit-events, the harness also checks after every command that
the audit sink holds exactly the `idempotent_replay` events the oracle expects (IK-017):
every duplicate the rules draw after a completion is a replay with one event, every
claim, conflict and mismatch none. No rule of its own is drawn for it, so the sequences
(and the gallery's first failures) stay those of the rules above.
"""

from __future__ import annotations

from functools import partial

from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    precondition,
    rule,
)

from jobconform.backends.protocol import IDEMPOTENCY, Backend
from jobconform.conformance.aim import fine_steps, steps_to_edge
from jobconform.conformance.command_engine import AreaMachine, time_rule
from jobconform.conformance.idempotency.harness import IdempotencyHarness
from jobconform.conformance.machine_runner import (
    MachineRun,
    machine_runner,
    run_on_a_runtime_of_its_own,
)
from jobconform.reference import commands as cmd
from jobconform.reference.faults import FaultKind, StoreFault
from jobconform.reference.idempotency import commands as ic
from jobconform.reference.lifecycle import JsonValue
from jobconform.spec import Profile, Registry

SCOPES = ("alice", "bob")
EDGE_SCOPE = "edges"  # the aimed rules' own scope, so their keys start with no record
KEYS = ("k1", "k2")
PAYLOADS: tuple[JsonValue, ...] = ({"qty": 1}, {"qty": 2})
WEBHOOK_TOKENS = ("hook-1", "hook-2")
BODIES = ('{"event": 1}', '{"event": 2}')
EXECUTIONS = ("e1", "e2")
TOOLS = ("chat_with_agent", "fan_out")
# A transport retry may encode the same arguments with their members in another order.
CALL_ARGUMENTS: tuple[JsonValue, ...] = (
    {"agent": "ops", "message": "hi"}, {"message": "hi", "agent": "ops"},
    {"agent": "ops", "message": "bye"})
EFFECT_TYPES = ("message", "call")
IDENTITIES = ((("to", "bob"),), (("channel", "sms"), ("to", "bob")),
              (("to", "bob"), ("channel", "sms")))
# Around the 90 s stale-lock timeout and summing to the 24 h TTL in a few steps.
TIME_STEPS = (0.0, 0.5, 30.0, 90.0, 3600.0, 43_200.0, 86_400.0)
STEPS_PER_EXAMPLE = 40
FAILURE_POLICIES = ("store", "release")
MISMATCH_STATUSES = (422, 409)

FaultableCommand = ic.ClaimKey | ic.CompleteClaim | ic.ReleaseClaim | ic.PurgeKeys
# Effects with and without an execution id, run with re-delivery disabled (IK-014: the
# ones without go out unguarded) and enabled (IK-018: they are refused); either way
# nothing they leave blocks or replays the guarded ones after them.
FIXED_EFFECTS: tuple[ic.IdempotencyCommand, ...] = (
    ic.ClaimEffect("unscoped-1", None, "message", (("to", "bob"),), "Hi"),
    ic.ClaimEffect("unscoped-2", None, "message", (("to", "bob"),), "Hi again"),
    ic.ClaimEffect("scoped-1", "e1", "message", (("to", "bob"),), "Hi"),
    ic.ClaimEffect("scoped-2", "e1", "message", (("to", "bob"),), "Hi"),
    ic.CompleteClaim("scoped-1", cmd.Succeed({"message_id": "m-1"})),
    ic.ClaimEffect("unscoped-3", None, "message", (("to", "bob"),), "Hi"),
    ic.ClaimEffect("scoped-3", "e1", "message", (("to", "bob"),), "Hello"),
)

outcomes = st.one_of(
    st.builds(cmd.Succeed, st.sampled_from([None, 1, True, "done", {"id": 1}])),
    st.builds(cmd.Raise, st.sampled_from(["ValueError", "PaymentDeclined"]),
              st.sampled_from(["boom", ""])),
)


def make_idempotency_machine(backend: Backend, profile: Profile, registry: Registry | None,
                             run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""

    class IdempotencyMachine(AreaMachine[IdempotencyHarness | None]):
        claims = Bundle("claims")

        def __init__(self) -> None:
            super().__init__(run)
            # First, before the sequence's own runtime opens (run_on_a_runtime_of_its_own
            # says why); it draws nothing.
            for redelivery in ("disabled", "enabled"):
                run_on_a_runtime_of_its_own(partial(
                    IdempotencyHarness, backend, profile, registry,
                    overrides={"redelivery": redelivery}), FIXED_EFFECTS, run)
            self.harness = None
            self.edges = 0  # fresh keys for the aimed rules

        # Each example runs under one choice of the parameters on which designs differ.
        @initialize(failure_policy=st.sampled_from(FAILURE_POLICIES),
                    mismatch_status=st.sampled_from(MISMATCH_STATUSES))
        def open_keys(self, failure_policy: str, mismatch_status: int) -> None:
            self.harness = IdempotencyHarness(
                backend, profile, registry,
                overrides={"failure_policy": failure_policy, "mismatch_status": mismatch_status})

        @property
        def keys(self) -> IdempotencyHarness:
            assert self.harness is not None, "open_keys runs before every rule"
            return self.harness

        def _drawn_setup(self) -> dict[str, object]:
            """What this example drew for its harness, for its trace's replay."""
            config = self.keys.oracle.config
            return {"failure_policy": config.failure_policy,
                    "mismatch_status": config.mismatch_status}

        def _holders(self) -> list[str]:
            """Handles holding an in-flight record in the oracle: the claims a completion
            or release can still change."""
            if self.harness is None:
                return []
            return sorted(record.holder for record in self.harness.oracle.records.values()
                          if record.in_flight)

        @rule(target=claims, scope=st.sampled_from(SCOPES),
              key=st.one_of(st.none(), st.sampled_from(KEYS)),
              payload=st.sampled_from(PAYLOADS))
        def claim(self, scope: str, key: str | None, payload: JsonValue) -> str:
            handle = self._name("c")
            self._run(ic.ClaimKey(handle, scope, key, payload))
            return handle

        @rule(target=claims, token=st.sampled_from(WEBHOOK_TOKENS),
              body=st.sampled_from(BODIES), key=st.one_of(st.none(), st.just("evt-1")))
        def claim_webhook(self, token: str, body: str, key: str | None) -> str:
            handle = self._name("c")
            self._run(ic.ClaimWebhook(handle, token, body, key))
            return handle

        @rule(target=claims, tool=st.sampled_from(TOOLS),
              arguments=st.sampled_from(CALL_ARGUMENTS))
        def claim_tool_call(self, tool: str, arguments: JsonValue) -> str:
            handle = self._name("c")
            self._run(ic.ClaimCall(handle, tool, arguments))
            return handle

        @rule(target=claims, tool=st.sampled_from(TOOLS),
              arguments=st.sampled_from(CALL_ARGUMENTS), reordered=st.booleans())
        def tool_call_retried(self, tool: str, arguments: JsonValue, reordered: bool) -> str:
            """IK-016: a transport retry of a tool call, sent at once (its members
            re-encoded in another order, or not), meets the first call's claim."""
            first = self._name("c")
            self._run(ic.ClaimCall(first, tool, arguments))
            assert isinstance(arguments, dict)
            again = dict(reversed(arguments.items())) if reordered else dict(arguments)
            self._run(ic.ClaimCall(self._name("c"), tool, again))
            return first

        @rule(target=claims, execution=st.sampled_from(EXECUTIONS))
        def scheduler_send(self, execution: str) -> str:
            handle = self._name("c")
            key = self._run(ic.AskSchedulerKey(execution))
            assert isinstance(key, str)  # the harness compared it with the oracle's
            self._run(ic.ClaimKey(handle, "scheduler", key, {"execution": execution}))
            return handle

        @rule(target=claims, execution=st.sampled_from((*EXECUTIONS, None)),
              effect_type=st.sampled_from(EFFECT_TYPES),
              identity=st.sampled_from(IDENTITIES),
              content=st.sampled_from(["Hi", "Hello!", None]),
              label=st.one_of(st.none(), st.just("again")))
        def claim_effect(self, execution: str | None, effect_type: str,
                         identity: tuple[tuple[str, str], ...], content: str | None,
                         label: str | None) -> str:
            handle = self._name("c")
            self._run(ic.ClaimEffect(handle, execution, effect_type, identity, content, label))
            return handle

        @rule(handle=claims, outcome=outcomes)
        def complete(self, handle: str, outcome: cmd.Outcome) -> None:
            self._run(ic.CompleteClaim(handle, outcome))

        @rule(handle=claims)
        def release(self, handle: str) -> None:
            self._run(ic.ReleaseClaim(handle))

        # Most handles in the bundle no longer hold anything; these aim at live holders.
        @precondition(lambda self: bool(self._holders()))
        @rule(data=st.data(), outcome=outcomes)
        def complete_holder(self, data: st.DataObject, outcome: cmd.Outcome) -> None:
            handle = data.draw(st.sampled_from(self._holders()))
            self._run(ic.CompleteClaim(handle, outcome))

        @precondition(lambda self: bool(self._holders()))
        @rule(data=st.data())
        def release_holder(self, data: st.DataObject) -> None:
            self._run(ic.ReleaseClaim(data.draw(st.sampled_from(self._holders()))))

        advance_time = time_rule("advance_time", TIME_STEPS, cmd.AdvanceTime)

        # Time finer than a second anywhere in a sequence (issue 33, LC-005): the steps
        # above keep every record's creation within half a second of a whole one. After
        # one of these a key is created between whole seconds, and ttl_edge's claim a
        # microsecond before its TTL shows a store keeping creation times in whole seconds
        # (or a runtime comparing ages in them) starting the work afresh early (IK-007).
        time_passes_finely = time_rule(
            "time_passes_finely", fine_steps(profile.time_precision_seconds), cmd.AdvanceTime)

        # -- aimed at the boundaries (conformance/aim.py) ------------------------------

        @rule(payload=st.sampled_from(PAYLOADS))
        def stale_lock_edge(self, payload: JsonValue) -> None:
            """IK-010: a fresh key's claim stays in flight one tick short of the stale-lock
            timeout, exactly the timeout (a second claim still conflicts) and one tick
            past it (the second claim takes it over)."""
            timeout = self.keys.oracle.config.stale_lock_timeout_seconds
            self.edges += 1
            key = f"edge{self.edges}"
            self._run(ic.ClaimKey(self._name("c"), EDGE_SCOPE, key, payload))
            for step in steps_to_edge(0.0, timeout, profile.time_precision_seconds):
                self._run(cmd.AdvanceTime(step))
                self._run(ic.ClaimKey(self._name("c"), EDGE_SCOPE, key, payload))

        @rule(payload=st.sampled_from(PAYLOADS))
        def ttl_edge(self, payload: JsonValue) -> None:
            """IK-007: a completed fresh key is replayed one tick short of the TTL and
            exactly at it, and starts afresh one tick past it; a purge follows each. The
            key is first claimed with the other payload too (IK-006: a mismatch)."""
            ttl = self.keys.oracle.config.ttl_seconds
            self.edges += 1
            key, first = f"edge{self.edges}", self._name("c")
            self._run(ic.ClaimKey(first, EDGE_SCOPE, key, payload))
            self._run(ic.CompleteClaim(first, cmd.Succeed("done")))
            other = PAYLOADS[1 - PAYLOADS.index(payload)]
            self._run(ic.ClaimKey(self._name("c"), EDGE_SCOPE, key, other))
            for step in steps_to_edge(0.0, ttl, profile.time_precision_seconds):
                self._run(cmd.AdvanceTime(step))
                self._run(ic.ClaimKey(self._name("c"), EDGE_SCOPE, key, payload))
                self._run(ic.PurgeKeys())

        # IK-015: a claim, completion, release or purge whose drawn write fails; a claim
        # of a held key makes two (its insert, then the replacement of an expired or stale
        # record), so the second write is drawn too. Only where the backend claims store
        # faults: elsewhere IK-015 stays untested, never passed.
        def _faults(self) -> bool:
            return self.harness is not None and self.harness.takes_store_faults

        def _faulted(self, write: int, command: FaultableCommand) -> None:
            self._run(ic.IdempotencyStoreFault(StoreFault(FaultKind.FAIL, write), command))

        @precondition(lambda self: self._faults())
        @rule(target=claims, write=st.integers(1, 2), scope=st.sampled_from(SCOPES),
              key=st.sampled_from(KEYS), payload=st.sampled_from(PAYLOADS))
        def claim_while_write_fails(self, write: int, scope: str, key: str,
                                    payload: JsonValue) -> str:
            handle = self._name("c")
            self._faulted(write, ic.ClaimKey(handle, scope, key, payload))
            return handle

        @precondition(lambda self: self._faults() and bool(self._holders()))
        @rule(data=st.data(), outcome=outcomes, release=st.booleans())
        def finish_while_write_fails(self, data: st.DataObject, outcome: cmd.Outcome,
                                     release: bool) -> None:
            handle = data.draw(st.sampled_from(self._holders()))
            self._faulted(1, ic.ReleaseClaim(handle) if release
                          else ic.CompleteClaim(handle, outcome))

        @precondition(lambda self: self._faults())
        @rule()
        def purge_while_write_fails(self) -> None:
            self._faulted(1, ic.PurgeKeys())

        @rule()
        def purge(self) -> None:
            self._run(ic.PurgeKeys())

    return IdempotencyMachine


run_idempotency_machine = machine_runner(make_idempotency_machine, steps=STEPS_PER_EXAMPLE,
                                         area=IDEMPOTENCY)


def replay_harness(backend: Backend, profile: Profile, registry: Registry | None,
                   setup: dict[str, object]) -> IdempotencyHarness:
    """The harness of this machine's commands, for a trace's replay (area_trace.py)."""
    overrides: dict[str, float | str] = {name: value for name, value in setup.items()
                 if name in ("failure_policy", "mismatch_status")
                 and isinstance(value, str | int)}
    return IdempotencyHarness(backend, profile, registry, overrides=overrides)

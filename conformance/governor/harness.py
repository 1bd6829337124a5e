"""The governor area's harness: each command goes to the backend's governor and the oracle.

A check runs two governors on one store (the one the backend opened and its `peer()`), as
two processes share caps and the pause. After every command the harness compares the
pause both of them report, and when each one's first re-send sweep after its restart is
due, with `GovernorModel`; the first difference raises `Divergence` naming the
requirements the command touched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from typing import Any, ClassVar, cast

from jobconform.backends.governor.protocol import GOVERNOR, GovernorRuntime
from jobconform.conformance import read_ahead
from jobconform.conformance.area_harness import (
    PairedHarness,
    all_profile_parameters,
    check_time_step,
)
from jobconform.conformance.harness import DELAY_TOLERANCE_MS
from jobconform.conformance.utc import WANTED, describe_offset, is_off_utc
from jobconform.reference.breaker.classify import RawEnd, classify_end, killed
from jobconform.reference.commands import Command, describe
from jobconform.reference.governor import commands as gc
from jobconform.reference.governor.oracle import (
    RATE_LIMIT_CLASS,
    GovernorModel,
    GovernorSettings,
    redelivery_wait_ms,
)
from jobconform.spec import Profile

# Retry-afters are differences of instants with microseconds; float seconds agree to this.
SECONDS_TOLERANCE = 1e-6
# How close to a pause's end an offer is "on the boundary": a governor keeping or comparing
# the end coarser than LC-005's microsecond (in whole seconds, say) answers it wrong there.
PAUSE_END_WINDOW = timedelta(seconds=1)


def governor_raw_end(command: gc.RecordRawEnd) -> RawEnd:
    return RawEnd(command.signal, command.exit_code, command.output, command.error_text)


def governor_settings(profile: Profile, **overrides: Any) -> GovernorSettings:
    """The profile's governor parameters, with any overrides.

    Raises:
        SpecError: the profile has no governor parameters.
        ValueError: a parameter is unknown or out of range.
    """
    return GovernorSettings.from_parameters(
        all_profile_parameters(profile, GOVERNOR, overrides))


@dataclass
class GovernorHarness(PairedHarness[gc.GovernorCommand]):
    """Differential execution of governor commands on a backend and the oracle."""

    AREA: ClassVar[str] = GOVERNOR

    settings: GovernorSettings | None = None
    # Each killed raw end recorded (RG-014: never a pausing class), with its target and
    # when: a pause the oracle does not arm may rest on those counted (`_kills_counted`).
    killed_ends: list[tuple[str, datetime]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._require_area("governor checks cannot run on it")
        opener = self._opener("clock, settings")
        if self.settings is None:
            self.settings = governor_settings(self.profile)
        self.model = GovernorModel(self.settings)
        settings = self.settings
        self.workers: list[GovernorRuntime] = self._open_with_peer(
            lambda: opener(self.clock, settings))

    def _compare_answer(self, command: gc.GovernorCommand, requirements: tuple[str, ...],
                        expected: object, answer: object) -> None:
        if isinstance(command, gc.AskResendTimes) and isinstance(answer, tuple) and any(
                is_off_utc(at) for at in answer):
            # The right instants at another offset compare equal: RG-012 asks for UTC.
            raise self._fail(requirements, "the envelopes' instants, in UTC", WANTED,
                             [describe_offset(at) for at in answer
                              if isinstance(at, datetime)], "RG-012")
        if not self._agree(answer, expected):
            # Refused on both sides, but not with the oracle's retry-after: a refusal the
            # sender cannot retry (RG-004), whatever cap refused it.
            refused_both = (isinstance(command, gc.Offer) and isinstance(answer, tuple)
                            and isinstance(expected, tuple) and len(answer) == 2
                            and answer[0] is False and expected[0] is False)
            primary = "RG-004" if refused_both else self._at_pause_end(command, answer)
            raise self._fail(requirements + (("RG-004",) if refused_both else ()),
                             f"the answer to {describe(cast(Command, command))}",
                             expected, answer, primary)

    def _at_pause_end(self, command: gc.GovernorCommand, answer: object) -> str | None:
        """RG-008 where an offer within a second of the pause's end is let through before
        it or refused by the pause after it: the end kept or compared coarser than the
        microsecond (in whole seconds, say), whatever cap then judged the offer. None:
        any other answer, or an offer far from the end."""
        paused_until = self.model.paused_until
        if not (isinstance(command, gc.Offer) and isinstance(answer, tuple) and answer
                and paused_until is not None) or self.model.store_down or (
                    command.worker in self.model.switched_off):
            return None
        before_end = paused_until - self.clock.now()
        assert self.settings is not None
        if timedelta(0) < before_end <= PAUSE_END_WINDOW:
            let_through = answer[0] is True
            return "RG-008" if let_through else None
        held_on = answer == (False, self.settings.pause_retry_after_seconds)
        return "RG-008" if -PAUSE_END_WINDOW < before_end <= timedelta(0) and held_on else None

    def _adopt(self) -> None:
        """After a listed deviation the oracle takes the pause governor 0 reports."""
        shown = self._call("paused_until", self.workers[0].paused_until)
        if shown is None or isinstance(shown, datetime):
            self.model.paused_until = shown
        for index, worker in enumerate(self.workers):
            sweep = self._call("resend_sweep_at", worker.resend_sweep_at)
            if isinstance(sweep, datetime):
                self.model.sweep_at[index] = sweep
            elif sweep is None:
                self.model.sweep_at.pop(index, None)

    def _check_command(self, command: gc.GovernorCommand) -> None:
        self._check_worker(command)
        if isinstance(command, gc.AskWait | gc.Restart) and not 0 <= command.draw < 1:
            raise ValueError(f"a draw is in [0, 1), not {command.draw!r}")
        if isinstance(command, gc.AskResendTimes) and not all(
                0 <= draw < 1 for draw in command.draws):
            raise ValueError(f"draws are in [0, 1), not {command.draws!r}")
        if isinstance(command, gc.Elapse):
            check_time_step(command.seconds)

    def _apply_to_backend(self, command: gc.GovernorCommand) -> object:
        """The backend's answer (None for a command that answers nothing)."""
        match command:
            case gc.AskWait(previous_ms=previous, draw=draw, retry_after_ms=floor):
                return self._call("redelivery_wait_ms", lambda: float(
                    self.workers[0].redelivery_wait_ms(previous, draw, floor)))
            case gc.Offer(target=target, worker=index):
                decision = self._call("offer", lambda: self.workers[index].offer(target))
                return decision.accepted, decision.retry_after_seconds
            case gc.RecordFailure(target=target, failure_class=failure_class,
                                  result_id=result_id, worker=index):
                self._call("record_failure", lambda: self.workers[index].record_failure(
                    target, failure_class, result_id))
            case gc.RecordRateLimited(target=target, result_id=result_id, worker=index):
                self._call("record_rate_limited", lambda: self.workers[index]
                           .record_rate_limited(target, result_id))
            case gc.RecordRawEnd():
                ended = command
                self._call("record_raw_end", lambda: self.workers[ended.worker].record_raw_end(
                    ended.target, ended.result_id, ended.signal, ended.exit_code,
                    ended.output, ended.error_text))
            case gc.Restart(draw=draw, worker=index):
                self._call("restart", lambda: self.workers[index].restart(draw))
            case gc.GovernorStoreOutage(down=down):
                # One store behind both governors: both lose it, and get it back.
                self._on_every_worker("set_store_available",
                                      lambda worker: worker.set_store_available(not down))
            case gc.SwitchGovernor(enabled=enabled, worker=index):
                self._call("set_enabled", partial(self.workers[index].set_enabled, enabled))
            case gc.AskResendTimes(draws=draws, worker=index):
                times = self._call("resend_times",
                                   lambda: self.workers[index].resend_times(list(draws)))
                return tuple(times) if isinstance(times, list | tuple) else times
            case gc.ReadPause():
                return self._call("paused_until", self.workers[0].paused_until)
        return None

    def _apply_to_model(self, command: gc.GovernorCommand, now: datetime) -> object:
        """The oracle's answer (None for a command that answers nothing), at `now` (the
        clock before the command); time passing moves the clock, which both sides read."""
        model = self.model
        assert self.settings is not None
        match command:
            case gc.AskWait(previous_ms=previous, draw=draw, retry_after_ms=floor):
                return redelivery_wait_ms(self.settings, previous, draw, floor)
            case gc.Offer(target=target, worker=index):
                expected = model.offer(target, now, index)
                return expected.accepted, expected.retry_after_seconds
            case gc.RecordFailure(target=target, failure_class=failure_class,
                                  result_id=result_id):
                model.record_failure(target, failure_class, result_id, now)
            case gc.RecordRateLimited(target=target, result_id=result_id):
                model.record_rate_limited(target, result_id, now)
            case gc.RecordRawEnd():
                model.record_raw_end(command.target, command.result_id,
                                     governor_raw_end(command), now)
                if killed(governor_raw_end(command)):
                    self.killed_ends.append((command.target, now))
            case gc.Restart(draw=draw, worker=index):
                model.restart(index, draw, now)
            case gc.GovernorStoreOutage(down=down):
                model.store_down = down
            case gc.SwitchGovernor(enabled=enabled, worker=index):
                model.switch(index, enabled)
            case gc.AskResendTimes(draws=draws, worker=index):
                return model.resend_times(index, draws)
            case gc.Elapse(seconds=seconds):
                self.clock.advance(seconds)
            case gc.ReadPause():
                return model.pause_at(now)
        return None

    @staticmethod
    def _agree(actual: object, expected: object) -> bool:
        if isinstance(expected, float) and isinstance(actual, float):
            return abs(actual - expected) <= DELAY_TOLERANCE_MS
        if isinstance(expected, tuple) and isinstance(actual, tuple) and len(actual) == 2:
            wanted_wait, actual_wait = expected[1], actual[1]
            if isinstance(wanted_wait, float) and isinstance(actual_wait, int | float):
                return (actual[0] == expected[0]
                        and abs(actual_wait - wanted_wait) <= SECONDS_TOLERANCE)
        return actual == expected

    def observe(self, requirements: tuple[str, ...] = ()) -> None:
        """Both governors must report the oracle's pause (none from one switched off) and
        their own re-send sweep."""
        read_ahead.plan_reads([*((worker, "resend_sweep_at", {}) for worker in self.workers),
                               *((worker, "paused_until", {}) for worker in self.workers)])
        self._observe_sweeps(requirements)
        for index, worker in enumerate(self.workers):
            wanted = self.model.pause_at(self.clock.now(), index)
            actual = self._call("paused_until", worker.paused_until)
            if actual != wanted:
                # A governor switched off reads no pause; one switched on reads the store's,
                # which the failures a switched-off peer recorded may have armed (RG-013).
                switch = (("RG-013",) if index in self.model.switched_off
                          and not self.model.store_down else ())
                primary = switch[0] if switch else (self._end_elsewhere(wanted, actual)
                                                    or self._kills_counted(wanted, actual)
                                                    or self._repeat_armed(wanted, actual))
                raise self._fail((*switch, *requirements, "RG-005", "RG-008"),
                                 f"the pause governor {index} reports", wanted, actual,
                                 primary)
            if is_off_utc(actual):
                # The right instant at another offset compares equal: RG-008 asks for UTC.
                assert isinstance(actual, datetime)
                raise self._fail((*requirements, "RG-008"), f"the pause governor {index}"
                                 " reports, as a UTC instant", WANTED, describe_offset(actual),
                                 "RG-008")

    @staticmethod
    def _end_elsewhere(wanted: object, actual: object) -> str | None:
        """RG-008 where a pause holds on both sides but ends elsewhere (a store keeping its
        end in whole seconds, a TTL off by a tick, a pause extended while it ran): when it
        ends is RG-008's, whatever command armed it (issue 33: before this, the arming
        failure's RG-005 was named). None: the pause is there on one side only."""
        if isinstance(wanted, datetime) and isinstance(actual, datetime):
            return "RG-008"
        return None

    def _kills_counted(self, wanted: object, actual: object) -> str | None:
        """RG-014 where a pause shows that the oracle does not arm, at a failure of a
        pausing class, and the killed ends recorded inside the pause window make up the
        targets it lacks: kills counted as the class (their text's auth indicator, say),
        whichever later failure then armed it. None: the kills cannot explain it."""
        last = self.commands[-1] if self.commands else None
        if wanted is not None or actual is None or not isinstance(
                last, gc.RecordFailure | gc.RecordRateLimited | gc.RecordRawEnd):
            return None
        failure_class = (RATE_LIMIT_CLASS if isinstance(last, gc.RecordRateLimited)
                         else classify_end(governor_raw_end(last))
                         if isinstance(last, gc.RecordRawEnd) else last.failure_class)
        window = timedelta(seconds=self.model.settings.pause_window_seconds)
        now = self.clock.now()
        counted = {target for target, when in self.model.failing.get(failure_class, {})
                   .items() if when + window > now}
        kills = {target for target, when in self.killed_ends if when + window > now}
        threshold = self.model.settings.pause_threshold
        return "RG-014" if len(counted) < threshold <= len(counted | kills) else None

    def _repeat_armed(self, wanted: object, actual: object) -> str | None:
        """RG-006 where a pause shows that the oracle does not arm, at a failure of a target
        that had failed before, with fewer distinct targets failing than the threshold:
        failures counted, not targets, whichever command recorded it (a rate limit's
        RG-010, say: issue 33, the counting rule before the command that fed it). None:
        the command's own rule."""
        last = self.commands[-1] if self.commands else None
        if wanted is not None or actual is None or not isinstance(
                last, gc.RecordFailure | gc.RecordRateLimited):
            return None
        failure_class = (RATE_LIMIT_CLASS if isinstance(last, gc.RecordRateLimited)
                         else last.failure_class)
        window = timedelta(seconds=self.model.settings.pause_window_seconds)
        now = self.clock.now()
        distinct = sum(1 for when in self.model.failing.get(failure_class, {}).values()
                       if when + window > now)
        again = any(isinstance(earlier, gc.RecordFailure | gc.RecordRateLimited)
                    and earlier.target == last.target and earlier.result_id != last.result_id
                    for earlier in self.commands[:-1])
        if again and distinct < self.model.settings.pause_threshold:
            return "RG-006"
        return None

    def _observe_sweeps(self, requirements: tuple[str, ...]) -> None:
        """Each governor's first re-send sweep is due where its own restart put it (RG-009):
        none before a restart, a peer's restart moving nothing."""
        for index, worker in enumerate(self.workers):
            wanted = self.model.sweep_at.get(index)
            actual = self._call("resend_sweep_at", worker.resend_sweep_at)
            if actual != wanted:
                raise self._fail((*requirements, "RG-009"), f"when governor {index}'s first"
                                 " re-send sweep after its restart is due", wanted, actual,
                                 "RG-009")
            if is_off_utc(actual):
                assert isinstance(actual, datetime)
                raise self._fail((*requirements, "RG-009"), f"governor {index}'s re-send"
                                 " sweep, as a UTC instant", WANTED, describe_offset(actual),
                                 "RG-009")

    def _requirements(self, command: gc.GovernorCommand) -> tuple[str, ...]:
        model, now = self.model, self.clock.now()
        assert self.settings is not None
        if isinstance(command, gc.AskWait):
            return ("RG-001",)
        if isinstance(command, gc.Restart):
            return ("RG-009",)
        if isinstance(command, gc.AskResendTimes):
            return ("RG-012",)
        if isinstance(command, gc.GovernorStoreOutage) or model.store_down:
            # Down: whatever the command, the governor must fail open. Back up: the pause
            # and the windows must be the store's, untouched by the outage.
            return ("RG-011",)
        if isinstance(command, gc.SwitchGovernor) or (
                isinstance(command, gc.Offer) and command.worker in model.switched_off):
            return ("RG-013",)
        if isinstance(command, gc.Elapse | gc.ReadPause):
            return ("RG-008",)
        if isinstance(command, gc.Offer):
            if model.pause_at(now, command.worker) is not None:
                return ("RG-005",)
            expired = ("RG-008",) if model.paused_until is not None else ()
            return ("RG-002", "RG-003", "RG-004", *expired)
        if isinstance(command, gc.RecordRawEnd):
            end = governor_raw_end(command)
            counting = self._failure_requirements(command.target, classify_end(end),
                                                  command.result_id)
            # A kill whose pause comes, or a confirmed auth message whose does not: the
            # governor's classing first for a kill (it must never be auth), the counting
            # first for the rest.
            return ("RG-014", *counting) if killed(end) else (*counting, "RG-014")
        if isinstance(command, gc.RecordRateLimited):
            counting = self._failure_requirements(command.target, RATE_LIMIT_CLASS,
                                                  command.result_id)
            # Recorded by a governor switched off (RG-013): a pause that does not come is
            # still the 429's mapping first, which a switch that drops records breaks too.
            switch = ("RG-013",) if command.worker in model.switched_off else ()
            if counting == ("RG-006",) and command.target in model.rate_limited:
                # Counted already, by an earlier rate limit: a pause that does not come
                # now most likely never counted that one.
                return ("RG-010", *counting, *switch)
            if counting[0] in ("RG-007", "RG-008") or counting == ("RG-006",):
                # A replay, a failure during a pause or a target counted already: what
                # goes wrong there is the counting's, whatever class the 429 took.
                return (*counting, "RG-010", *switch)
            # A new target's rate limit: a pause that does not come (or comes early) is
            # the mapping's fault first.
            return ("RG-010", *counting, *switch)
        counting = self._failure_requirements(command.target, command.failure_class,
                                              command.result_id)
        if command.worker in model.switched_off:
            # Recorded by a governor switched off: counted as ever (RG-013), or a pause
            # that does not come is the switch's fault first.
            return ("RG-013", *counting)
        if command.failure_class == RATE_LIMIT_CLASS and self._arms_with_rate_limits(
                command.target, counting):
            # The pause this billing failure arms rests on rate limits counted as billing:
            # a backend that does not arm it here most likely never counted those.
            return ("RG-010", *counting)
        return counting

    def _arms_with_rate_limits(self, target: str, counting: tuple[str, ...]) -> bool:
        """Would this new target's billing failure arm the pause, with a target counted
        by a rate limit among those in the window?"""
        model, now = self.model, self.clock.now()
        assert self.settings is not None
        if counting != ("RG-005", "RG-006"):
            return False
        window = timedelta(seconds=self.settings.pause_window_seconds)
        inside = {at for at, when in model.failing.get(RATE_LIMIT_CLASS, {}).items()
                  if when + window > now}
        return (len(inside | {target}) >= self.settings.pause_threshold
                and bool(inside & model.rate_limited))

    def _failure_requirements(self, target: str, failure_class: str,
                              result_id: str) -> tuple[str, ...]:
        model, now = self.model, self.clock.now()
        assert self.settings is not None
        if result_id in model.results:
            return ("RG-007",)
        if failure_class not in self.settings.pause_classes:
            return ("RG-005",)
        if model.running_pause(now) is not None:
            return ("RG-008",)
        counted = model.failing.get(failure_class, {})
        return ("RG-006",) if target in counted else ("RG-005", "RG-006")

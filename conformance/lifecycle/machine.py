"""The Hypothesis front-end: random command sequences, backend against oracle at every step.

The harness does the comparing; this machine only generates commands. Small limits
(two slots, a cap of four records: MACHINE_TASK_CAP) and a few time steps and ages make
the interesting edges (a full cap, the exact cleanup boundary, a cancel racing a finish) likely.
When a sequence diverges, Hypothesis shrinks it and the last `Divergence` holds the
minimal command list.

Shutdown may come at any step. Once the runtime is shut down and no job of it is active
any more (at once for a cancel-mode shutdown, at the drain's end for a drain), the machine
goes on with a fresh runtime: a sequence that shuts down early still reaches every other
bug, and a shutdown counterexample shrinks to the few commands that matter, with no
padding before it. A divergence names the commands of the runtime it happened on.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

from jobconform.backends.protocol import CONCURRENT_SUBMIT, HEALTH_REPORT, Backend
from jobconform.conformance.aim import fine_steps, steps_to_edge
from jobconform.conformance.applicability import left_out
from jobconform.conformance.command_engine import time_rule
from jobconform.conformance.defaults import RUN_EXAMPLES
from jobconform.conformance.harness import HARNESS_MODULES, Divergence, Harness
from jobconform.conformance.job_draws import (
    ERROR_TYPES,
    MACHINE_PAGE_SIZE,
    MACHINE_SLOTS,
    MACHINE_TASK_CAP,
    RETRY_AFTERS,
    outcomes_with,
)
from jobconform.conformance.job_machine import RenewedJobMachine, jobs
from jobconform.conformance.lifecycle.arguments_machine import (
    claims_any,
    make_arguments_machine,
)
from jobconform.conformance.lifecycle.volume_machine import VOLUME_STEPS, make_volume_machine
from jobconform.conformance.machine_runner import (
    MachineRun,
    run_machine,
    run_on_a_runtime_of_its_own,
)
from jobconform.reference import commands as cmd
from jobconform.reference.backoff import Jitter, RetryPolicy
from jobconform.reference.lifecycle import JobState, JsonValue, Status
from jobconform.spec import Profile, Registry, SpecError

TIME_STEPS = (0.0, 1.0, 5.0, 30.0, 60.0)
CLEANUP_AGES = (0.0, 5.0, 30.0, 60.0)
STUCK_TIMEOUTS = (0.0, 5.0, 30.0, 60.0)
# One draw in this many of the shutdown rule shuts down; see the rule. Rarer shutdowns
# leave longer histories for the bugs that need them (a stuck job's slot, a full cap);
# 9 still puts a shutdown in about one sequence in five, and the self-test catches every
# lifecycle gallery entry with it at seed 0. The value is tuned, not derived: with 2 to 8,
# and with 10 or 12 once the sink and store-fault rules joined, one or two entries were
# caught late or under another requirement (the self-test's machine does not shrink, so
# its first failing example decides, and any change to the draws moves it).
SHUTDOWN_ODDS = 9
SHUTDOWN_PROBES = ("nothing", "shutdown", "submit", "late outcome")

# Retries left and a delay longer than one clock step: a failed attempt stays in backoff.
BACKOFF_POLICY = RetryPolicy(max_retries=2, retry_delay_ms=5000.0, backoff_multiplier=2.0,
                             max_retry_delay_ms=60_000.0, non_retryable=("PlanError",))

# Module ids a submission names under a profile that checks them (LC-027): none, the
# runtime's own, a well-formed unknown one, and malformed ones.
MODULE_IDS = st.one_of(
    st.none(),
    st.sampled_from(sorted(HARNESS_MODULES)),
    st.sampled_from(["billing.charge_card", "Data.batch", "data..x", "", "mail.send-digest"]),
)
# Jobs submitted at once from threads of their own as each sequence opens (LC-030), on a
# runtime of their own: two, then three, in turn (the machine's cap of four holds them
# beside one job submitted before).
CONCURRENT_BATCHES = (("c1", "c2"), ("c1", "c2", "c3"))
# What a submission names where the backend claims execution-queries (owner, trigger) and
# execution-options (options), taken in turn by the job's number: drawn from nothing, so
# the other rules' sequences stay as they were. None among them: a job that names none.
OWNERS = ("ann", "bob", None)
TRIGGERS = ("manual", "schedule")
OPTIONS: tuple[JsonValue, ...] = ({"model": "haiku"}, None, "opus", [1, 2])
# A window of hours as long as the age of the oldest job held (LC-033): its submission
# is the window's inclusive edge.
AGE_OF_THE_OLDEST = "the oldest held job's age"
# The executions queries and statistics a submission is followed by, in turn, where the
# backend claims execution-queries: paging, each filter (a window whose edge is a held
# job's submission, and one of 30 s), and statistics; the commonest bugs' shapes first,
# as sequences are short. Taken in turn rather than drawn, for the same reason as OWNERS.
QUERY_SHAPES: tuple[dict[str, object], ...] = (
    {"offset": 1}, {"hours": AGE_OF_THE_OLDEST}, {"limit": 2}, {"owners": ("ann",)},
    {"search": "TIMEOUT"}, {"status": "failed"}, {"offset": 2, "limit": 2},
    {"trigger": "schedule", "offset": 1}, {"hours": AGE_OF_THE_OLDEST, "status": "queued"},
    {"owners": ("ann", "bob"), "limit": 1}, {}, {"owners": ()},
    {"status": "running", "hours": 30 / 3600})
STATS_SHAPES: tuple[dict[str, object], ...] = (
    {"hours": 5 / 3600}, {}, {"hours": 30 / 3600, "owners": ("ann",)}, {"owners": ("bob",)})
# One retry at once, and a listed error: a job that fails for good either way, without
# time passing (a rule that moved the clock would change what the other rules find).
LAST_RETRY_POLICY = RetryPolicy(max_retries=1, retry_delay_ms=0.0, max_retry_delay_ms=0.0,
                                non_retryable=("PlanError",))




@st.composite
def retry_policies(draw: st.DrawFn) -> RetryPolicy:
    """Small delays and caps, so the clock's steps cross backoff edges often."""
    delay = draw(st.sampled_from([0.0, 1000.0, 5000.0]))
    # At least one retry: a policy without retries behaves as no policy, which the plain
    # submit rule covers already.
    return RetryPolicy(
        max_retries=draw(st.integers(1, 3)),
        retry_delay_ms=delay,
        backoff_multiplier=draw(st.sampled_from([1.0, 2.0, 3.0])),
        max_retry_delay_ms=delay + draw(st.sampled_from([0.0, 4000.0, 60_000.0])),
        non_retryable=tuple(draw(st.lists(st.sampled_from(ERROR_TYPES), min_size=1, max_size=2,
                                          unique=True))),
    )


@st.composite
def delay_policies(draw: st.DrawFn) -> RetryPolicy:
    """Policies whose delays tell the exponent, the base and the cap apart."""
    delay = draw(st.sampled_from([250.0, 1000.0, 5000.0]))
    return RetryPolicy(
        max_retries=3,
        retry_delay_ms=delay,
        backoff_multiplier=draw(st.sampled_from([1.5, 2.0, 3.0])),
        max_retry_delay_ms=delay * draw(st.sampled_from([1.0, 8.0, 1000.0])),
    )


def delay_questions(jitters: list[Jitter],
                    retry_after: bool) -> st.SearchStrategy[cmd.ComputeDelay]:
    """Questions to the delay function, in the jitter modes it claims, with a server's
    retry-after where it claims one (RT-010)."""
    return st.builds(
        cmd.ComputeDelay,
        delay_policies(),
        st.one_of(st.integers(0, 12), st.sampled_from([64, 1100, 10_000])),
        st.sampled_from(jitters),
        # A few telling values shrink far faster than arbitrary floats and hit every edge:
        # no jitter at 0, the largest draws near 1, previous delays below and above the cap.
        st.sampled_from([0.0, 0.25, 0.5, 0.99]),
        st.one_of(st.none(), st.sampled_from([0.0, 1500.0, 30_000.0])),
        st.one_of(st.none(), st.sampled_from([0.0, 2500.0, 90_000.0])) if retry_after
        else st.none(),
    )


def is_running(job: JobState) -> bool:
    return job.status is Status.RUNNING


def is_queued(job: JobState) -> bool:
    return job.status is Status.QUEUED


def has_a_policy(job: JobState) -> bool:
    return job.status is Status.RUNNING and job.max_retries > 0


def is_in_backoff(job: JobState) -> bool:
    return job.status is Status.QUEUED and job.retry_count > 0


def checks_module_ids(profile: Profile, registry: Registry | None) -> bool:
    """Whether submissions under this profile name module ids (LC-027 applies): a runtime
    under another profile need not accept one."""
    if registry is None:
        return False
    try:
        return profile.name in registry.requirement("LC-027").profiles
    except SpecError:
        return False


def make_machine(backend: Backend, profile: Profile, registry: Registry | None,
                 run: MachineRun) -> type[RuleBasedStateMachine]:
    """A state machine class bound to one backend and profile."""
    modules = MODULE_IDS if checks_module_ids(profile, registry) else st.none()
    # A backend claiming retry in part (conformance/applicability.py) is never asked what
    # it leaves out: its delay function (RT-002), jitter modes (RT-009), retry-afters
    # (RT-010). Every other backend draws exactly as before.
    left_out_here = left_out(backend.capabilities)
    asks_delays = "RT-002" not in left_out_here
    asks_retry_afters = "RT-010" not in left_out_here
    retry_afters = RETRY_AFTERS if asks_retry_afters else st.none()
    body_outcomes = outcomes_with(retry_afters)
    questions = delay_questions([Jitter.NONE] if "RT-009" in left_out_here else list(Jitter),
                                retry_after=asks_retry_afters)
    class LifecycleMachine(RenewedJobMachine[Harness]):
        def __init__(self) -> None:
            super().__init__(run)
            self.open_harness = partial(open_machine_harness, backend, profile, registry)
            self.harness = self.open_harness()
            self.queries = 0  # executions queries sent (QUERY_SHAPES)
            # Whether this sequence has dispatched yet (the aimed rule `was_aimed_at`).
            self.dispatched = False

        def _run(self, command: cmd.Command) -> object:
            self.dispatched |= isinstance(command, cmd.Dispatch)
            return super()._run(command)

        @rule(target=jobs, ignores_cancel=st.booleans(), module=modules)
        def submit(self, ignores_cancel: bool, module: str | None) -> str:
            alias = self._name("j")
            self._run(self._named(cmd.Submit(alias, ignores_cancel, module=module)))
            if self.harness.claims_queries:
                # After a submission, whose record the harness has compared already: a
                # runtime with a wrong clock or record shows it there, under its own rule.
                self._query_in_turn()
            return alias

        def _named(self, submission: cmd.Submit) -> cmd.Submit:
            """The submission with the owner, trigger and options the job's number takes
            (OWNERS), where the backend claims them (LC-033, LC-035)."""
            number = self.counter
            if self.harness.claims_queries:
                owner = OWNERS[number % len(OWNERS)]
                submission = replace(submission, owner=owner, trigger=None if owner is None
                                     else TRIGGERS[number % len(TRIGGERS)])
            if self.harness.claims_options:
                submission = replace(submission, options=OPTIONS[number % len(OPTIONS)])
            return submission

        @precondition(lambda self: self.harness.claims_retry)
        @rule(target=jobs, ignores_cancel=st.booleans(), policy=retry_policies())
        def submit_with_retry(self, ignores_cancel: bool, policy: RetryPolicy) -> str:
            alias = self._name("j")
            self._run(cmd.Submit(alias, ignores_cancel, policy))
            return alias

        # Failed attempts are what the retry area is about; a rule of their own makes jobs
        # in backoff (and cancels of them) common enough.
        @precondition(lambda self: self.harness.claims_retry)
        @rule(job=jobs, error_type=st.sampled_from(ERROR_TYPES))
        def fail_attempt(self, job: str, error_type: str) -> None:
            self._run(cmd.Finish(job, cmd.Raise(error_type, "attempt failed")))

        # Heartbeats land on running jobs (ST-001); detection timeouts match the clock's
        # steps so that the exclusive boundary (ST-003) comes up often.
        @precondition(lambda self: self.harness.claims_stuck)
        @rule(job=jobs)
        def heartbeat(self, job: str) -> None:
            self._run(cmd.Heartbeat(job))

        # Live bodies heartbeat as time passes: every running job reports after a step of
        # the clock, so detection meets jobs whose start and last heartbeat differ.
        @precondition(lambda self: self.harness.claims_stuck
                      and bool(self._jobs_where(is_running)))
        @rule(seconds=st.sampled_from(TIME_STEPS))
        def time_passes_with_heartbeats(self, seconds: float) -> None:
            self._run(cmd.AdvanceTime(seconds))
            for alias in self._jobs_where(is_running):
                self._run(cmd.Heartbeat(alias))

        detect_stuck = time_rule("detect_stuck", STUCK_TIMEOUTS, cmd.DetectStuck,
                                 when=lambda self: self.harness.claims_stuck)

        @precondition(lambda self: self.harness.claims_retry and asks_delays)
        @rule(question=questions)
        def compute_delay(self, question: cmd.ComputeDelay) -> None:
            self._run(question)

        @rule(job=jobs, outcome=body_outcomes)
        def finish(self, job: str, outcome: cmd.Outcome) -> None:
            self._run(cmd.Finish(job, outcome))

        # Cancelling a running job is where the ownership contract lives (LC-013, LC-014),
        # and cancelling one in backoff is RT-006; random picks from the bundle mostly hit
        # finished or removed jobs, so these two rules aim at such jobs directly.
        @precondition(lambda self: bool(self._jobs_where(is_running)))
        @rule(data=st.data())
        def cancel_running(self, data: st.DataObject) -> None:
            self._run(cmd.Cancel(data.draw(st.sampled_from(self._jobs_where(is_running)))))

        # A failure of a running job that carries a policy is what the retry area is about:
        # with a retry left and a retryable error it goes into backoff (RT-002, RT-003,
        # RT-006), with none left it fails (RT-004), with a listed error at once (RT-005).
        # Random outcomes reach these rarely, so aim at them. "FlakyError" is in no policy's
        # non-retryable list.
        @precondition(lambda self: self.harness.claims_retry
                      and bool(self._jobs_where(has_a_policy)))
        @rule(data=st.data(), error_type=st.sampled_from(("FlakyError", *ERROR_TYPES)),
              retry_after_ms=retry_afters)
        def fail_policy_job(self, data: st.DataObject, error_type: str,
                            retry_after_ms: float | None) -> None:
            job = data.draw(st.sampled_from(self._jobs_where(has_a_policy)))
            self._run(cmd.Finish(job, cmd.Raise(error_type, "try again", retry_after_ms)))

        # The whole path into backoff in one rule, so that every seed and profile puts a
        # job in backoff (RT-003) and cancels one there (RT-006), however the random rules
        # happen to interleave: a retryable failure of a job with retries left.
        @precondition(lambda self: self.harness.claims_retry)
        @rule(target=jobs, then_cancel=st.booleans())
        def fail_into_backoff(self, then_cancel: bool) -> str:
            alias = self._name("j")
            self._run(cmd.Submit(alias, False, BACKOFF_POLICY))
            self._run(cmd.Finish(alias, cmd.Raise("FlakyError", "try again")))
            self._run(cmd.Dispatch())
            if then_cancel:
                self._run(cmd.Cancel(alias))
            return alias

        # A policy job that fails for good, in one rule, so that every seed and profile
        # reaches both ways there (RT-004, RT-005): a listed error fails it at once, a
        # retryable one on its last attempt, after a backoff of nothing. (Hypothesis orders
        # rules by target, argument count and name: this one sorts last, so the other
        # rules keep their draws.)
        @precondition(lambda self: self.harness.claims_retry)
        @rule(target=jobs, listed=st.booleans(), message=st.sampled_from(("no way", "")))
        def terminal_failure(self, listed: bool, message: str) -> str:
            alias = self._name("j")
            self._run(cmd.Submit(alias, False, LAST_RETRY_POLICY))
            self._run(cmd.Finish(alias, cmd.Raise("PlanError" if listed else "FlakyError",
                                                  message)))
            self._run(cmd.Dispatch())
            if not listed:
                self._run(cmd.Dispatch())
                self._run(cmd.Finish(alias, cmd.Raise("FlakyError", message)))
            return alias

        # Aimed rules for bugs random draws reached only past the default run's
        # examples (issue 33); their names sort them after the other target rules, so
        # those keep their draws.

        # Two bugs random draws reached only past the default run's examples, in one
        # aimed rule (one more rule moves fewer draws than two), sorting after the other
        # target rules so that those keep their draws (issue 33):
        # - "beat": a job that started long ago but heartbeated since is not stuck
        #   (ST-002): it starts at t, beats at t + 30 and is checked `seconds` later
        #   against a 30 s timeout, when the cut-off is past its start but not its beat,
        #   then again once it has been silent for 30.5005 s (stuck: finer than a second),
        #   and a cleanup just short of its age (finer than a millisecond);
        # - "backoff": a job back from backoff keeps its place before the jobs that were
        #   queued behind it when it failed (RT-003): it fails while more jobs wait than
        #   the slots take, and the claim after its delay must take it first.
        # Both dispatch; drawn before the sequence's first dispatch, the rule shuts the
        # runtime down instead and submits: refused (LC-023), which a runtime whose
        # shut-down flag lives in a dispatcher not yet started misses. (Dispatching
        # first would hide that bug from the rest of the sequence.)
        @precondition(lambda self: self.harness.claims_stuck or self.harness.claims_retry)
        @rule(target=jobs, aim=st.sampled_from(("beat", "backoff", "backoff end")),
              seconds=st.sampled_from((1.0, 5.0)))
        def was_aimed_at(self, aim: str, seconds: float) -> str:
            alias = self._name("j")
            if not self.dispatched:
                self._run(cmd.Shutdown())
                self._run(cmd.Submit(alias))
                return alias
            if aim == "beat" and self.harness.claims_stuck:
                self._run(cmd.Submit(alias))
                self._run(cmd.Dispatch())
                if alias in self._jobs_where(is_running):
                    self._run(cmd.AdvanceTime(30.0))
                    self._run(cmd.Heartbeat(alias))
                    self._run(cmd.AdvanceTime(seconds))
                    self._run(cmd.DetectStuck(30.0))
                    # Then silent for the timeout plus half a second: stuck, which a
                    # runtime counting whole seconds misses (issue 33).
                    self._run(cmd.AdvanceTime(30.5005 - seconds))
                    self._run(cmd.DetectStuck(30.0))
                    # Failed as stuck half a millisecond into a second: a cleanup whose
                    # cut-off falls 0.4 ms before that keeps it, which a store comparing
                    # at millisecond precision misses (LC-020, issue 33).
                    # (Not while a job waits in backoff: the 5 s step would end its wait
                    # and move the draws that find the backoff bugs; nor under a profile
                    # whose time precision is coarser than the 0.4 ms, LC-005.)
                    if (not self._jobs_where(is_in_backoff)
                            and profile.time_precision_seconds < 0.0004):
                        self._run(cmd.AdvanceTime(4.9996))
                        self._run(cmd.Cleanup(5.0))
                return alias
            if not self.harness.claims_retry:
                self._run(cmd.Submit(alias))
                return alias
            if aim == "backoff end":
                # A backoff that ends half a millisecond into a second: dispatched a
                # microsecond before its end, on it and a microsecond past, the job starts
                # on its end and not before, which a runtime comparing due times in whole
                # seconds or milliseconds misses (RT-002, issue 33).
                self._run(cmd.Submit(alias, False, BACKOFF_POLICY))
                self._run(cmd.Finish(alias, cmd.Raise("FlakyError", "try again")))
                # (Half a second in, under a profile keeping coarser time, LC-005.)
                self._run(cmd.AdvanceTime(0.0005 if profile.time_precision_seconds < 0.0005
                                          else 0.5))
                self._run(cmd.Dispatch())
                delay = BACKOFF_POLICY.retry_delay_ms / 1000
                for step in steps_to_edge(0.0, delay, profile.time_precision_seconds):
                    self._run(cmd.AdvanceTime(step))
                    self._run(cmd.Dispatch())
                return alias
            self._run(cmd.Submit(alias, False, BACKOFF_POLICY))
            self._run(cmd.Finish(alias, cmd.Raise("FlakyError", "try again")))
            for _ in range(MACHINE_SLOTS):
                self._run(cmd.Submit(self._name("j")))
            self._run(cmd.Dispatch())
            self._run(cmd.AdvanceTime(seconds * 6))  # past the 5 s delay
            self._run(cmd.Dispatch())
            return alias

        # A body that ignores cancellation, cancelled while it runs and then ending: the
        # requested cancellation wins over its outcome (LC-014).
        @rule(target=jobs, outcome=body_outcomes)
        def cancel_then_finish(self, outcome: cmd.Outcome) -> str:
            alias = self._name("j")
            self._run(cmd.Submit(alias, True))
            self._run(cmd.Dispatch())
            self._run(cmd.Cancel(alias))
            self._run(cmd.Finish(alias, outcome))
            return alias

        @precondition(lambda self: bool(self._jobs_where(is_in_backoff)))
        @rule(data=st.data())
        def cancel_in_backoff(self, data: st.DataObject) -> None:
            self._run(cmd.Cancel(data.draw(st.sampled_from(self._jobs_where(is_in_backoff)))))

        advance_time = time_rule("advance_time", TIME_STEPS, cmd.AdvanceTime)

        # Time finer than a second anywhere in a sequence (issue 33, LC-005): after one of
        # these, every instant the runtime writes sits between milliseconds and every
        # silence between whole seconds, so a store keeping milliseconds or a runtime
        # counting whole seconds differs on what the sequence does next. (The name sorts
        # after every rule but time_passes_with_heartbeats: the others keep their draws.)
        time_passes_finely = time_rule(
            "time_passes_finely", fine_steps(profile.time_precision_seconds), cmd.AdvanceTime)

        cleanup = time_rule("cleanup", CLEANUP_AGES, cmd.Cleanup)

        # Allowed at any step, but drawn rarely (one draw in SHUTDOWN_ODDS shuts down, the
        # rest do nothing): a shutdown ends the runtime's history, and the other rules need
        # histories to reach their bugs. The invariant above goes on with a fresh runtime
        # once this one has nothing active. Before shutting down, it may decide the bodies
        # of the queued jobs (shutdown must still never invoke them, LC-022); after, it
        # probes the shut-down runtime: a second shutdown changes nothing, a submission is
        # refused (LC-023), the bodies of the jobs that were running end late and change
        # nothing (LC-003).
        @rule(data=st.data())
        def shutdown(self, data: st.DataObject) -> None:
            if data.draw(st.integers(0, SHUTDOWN_ODDS - 1)):
                return
            if data.draw(st.booleans()):
                # Bodies decided while their jobs wait in the queue: shutdown must still
                # never invoke them (LC-022).
                for alias in self._jobs_where(is_queued):
                    self._run(cmd.Finish(alias, data.draw(body_outcomes)))
            then = data.draw(st.sampled_from(SHUTDOWN_PROBES))
            if not self._jobs_where(is_running) and not self._jobs_where(is_queued):
                # A shutdown shows most with a body it catches running (cancelled by it,
                # LC-022; ending late, LC-003): start one (with nothing queued, so the
                # dispatch starts no body LC-022 watches). Waiting for one to be running
                # by chance left a store whose writes ignore the status uncaught at the
                # default 100 examples (issue 33).
                self._run(cmd.Submit(self._name("j")))
                self._run(cmd.Dispatch())
            was_running = self._jobs_where(is_running)
            self._run(cmd.Shutdown())
            if then == "shutdown":
                self._run(cmd.Shutdown())
            elif then == "submit":
                self._run(cmd.Submit(self._name("j")))
            elif then == "late outcome":
                for alias in was_running:
                    self._run(cmd.Finish(alias, data.draw(body_outcomes)))

        @rule(status=st.one_of(st.none(), st.sampled_from([s.value for s in Status])))
        def list_jobs(self, status: str | None) -> None:
            self._run(cmd.ListJobs(status))

        def _query_in_turn(self) -> None:
            """The next executions query or statistics, the two in turn (QUERY_SHAPES,
            STATS_SHAPES): one read per submission keeps the step's cost low."""
            self.queries += 1
            if self.queries % 2:
                shape = dict(QUERY_SHAPES[self.queries // 2 % len(QUERY_SHAPES)])
                if shape.get("hours") == AGE_OF_THE_OLDEST:
                    shape["hours"] = self._age_of_the_oldest_in_hours()
                self._run(cmd.QueryExecutions(**shape))  # type: ignore[arg-type]
            else:
                stats = STATS_SHAPES[(self.queries // 2 - 1) % len(STATS_SHAPES)]
                self._run(cmd.ExecutionStats(**stats))  # type: ignore[arg-type]

        def _age_of_the_oldest_in_hours(self) -> float | None:
            """How long ago the oldest held job was submitted, in hours; None (no window)
            when none is older than now."""
            model = self.harness.model
            ages = [(model.now - job.submitted_at).total_seconds()
                    for job in model.jobs.values()]
            oldest = max(ages, default=0.0)
            return oldest / 3600 if oldest > 0 else None

    return LifecycleMachine


def open_machine_harness(backend: Backend, profile: Profile,
                         registry: Registry | None) -> Harness:
    """A harness as the machine's sequences open it: its slots, cap and page size."""
    return Harness(backend, profile, registry, max_concurrent=MACHINE_SLOTS,
                   max_tasks=MACHINE_TASK_CAP, page_size=MACHINE_PAGE_SIZE)


def checks_once_per_run(backend: Backend, profile: Profile, registry: Registry | None,
                        run: MachineRun) -> None:
    """The checks no sequence draws, run once per machine run before the first sequence,
    each on a runtime of its own (they used to open every sequence; issue 33: they started
    real threads and runtimes in every one):

    - submissions from several threads at once (LC-030) need real threads and leave the
      order among them to the runtime: one job submitted, a batch submitted at once, a
      dispatch (which must start the oldest, in the order the runtime took the batch)
      and a listing, for each batch of CONCURRENT_BATCHES in turn;
    - the health report's worker id is the runtime's own: a second runtime of the backend
      names another (LC-029). The report's fields are compared after every rule; this is
      the one check a single runtime cannot show.

    Neither draws anything, so the other rules' sequences stay as they were.

    Raises:
        Divergence: a check diverged; it is also recorded as `run.divergence`.
    """
    opened = partial(open_machine_harness, backend, profile, registry)
    if CONCURRENT_SUBMIT in backend.capabilities:
        for batch in CONCURRENT_BATCHES:
            commands: tuple[cmd.Command, ...] = (
                cmd.Submit("p"), cmd.SubmitConcurrently(batch), cmd.Dispatch(),
                cmd.ListJobs())
            run_on_a_runtime_of_its_own(opened, commands, run)
    if HEALTH_REPORT not in backend.capabilities:
        return
    harness = opened()
    try:
        run.steps += 1
        harness.check_worker_id_unique()
    except Divergence as divergence:
        run.divergence = divergence
        raise
    finally:
        run.exercised |= harness.exercised
        harness.close()


# The arguments machine's share of the examples: its rules are few, and each sequence
# draws fresh arguments for every submission.
ARGUMENTS_MACHINE_SHARE = 4
# The volume machine's share: each of its sequences submits VOLUME jobs first, each
# compared with the oracle with every job held, so a few sequences are its whole budget.
VOLUME_MACHINE_SHARE = 50


def run_lifecycle_machine(backend: Backend, profile: Profile, registry: Registry | None,
                          seed: int = 0, examples: int = RUN_EXAMPLES) -> MachineRun:
    """Run the lifecycle machine (with retries and heartbeats where the backend claims
    them), then, if it passed and the backend claims jobs' arguments or the switch of
    queued execution, the arguments machine (arguments_machine.py), and, if those passed,
    the volume machine (volume_machine.py: many jobs held, LC-038), each at the same
    seed; the same seed gives the same sequences and the same result."""
    run = run_machine(make_machine, backend, profile, registry, seed=seed, examples=examples,
                      once=partial(checks_once_per_run, backend, profile, registry))
    if run.divergence is not None or run.nondeterminism is not None:
        return run
    if claims_any(backend):
        more = run_machine(make_arguments_machine, backend, profile, registry, seed=seed,
                           examples=max(1, examples // ARGUMENTS_MACHINE_SHARE))
        run = _after(run, more)
        if run.divergence is not None or run.nondeterminism is not None:
            return run
    volume = run_machine(make_volume_machine, backend, profile, registry, seed=seed,
                         examples=max(1, examples // VOLUME_MACHINE_SHARE),
                         steps=VOLUME_STEPS)
    return _after(run, volume)


def _after(run: MachineRun, more: MachineRun) -> MachineRun:
    """`more`, a machine run after `run`, counting both runs' steps and findings."""
    more.steps += run.steps
    more.exercised |= run.exercised
    more.deviations[:0] = run.deviations
    return more

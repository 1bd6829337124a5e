"""pybreaker against the breaker area: a `CircuitBreaker` per target, its state in Redis so
that a peer shares it; a call runs in `breaker.calling()`, its report ends the block. Its
`datetime.now()` is virtual (`WallClock`); switches and work queue are the adapter's data."""

import logging.handlers
import uuid
from datetime import timedelta
from types import SimpleNamespace

import pybreaker
import redis

from jobconform.backends.protocol import Clock
from jobconform.bridges import WallClock, translate
from jobconform.reference.breaker.oracle import BreakerSettings

FAILURES = translate.error_types("auth", "timeout", "agent_error")


class Worker(pybreaker.CircuitBreakerListener):
    def __init__(self, shared: SimpleNamespace, owner: "Worker | None" = None) -> None:
        self.shared, self.owner = shared, owner or self  # the owner opened it and closes it
        self.breakers: dict[str, pybreaker.CircuitBreaker] = {}
        self.storages: dict[str, pybreaker.CircuitRedisStorage] = {}
        self.client = redis.Redis(connection_pool=shared.pool)
        self.set_global_switch = lambda on: setattr(shared, "switch", on)
        self.set_opt_in = lambda target, on: (
            shared.opted_in.add if on else shared.opted_in.discard)(target)
        self.queued = lambda target: list(shared.queues.get(target, []))
        self.failed_work = lambda target: list(shared.failed.get(target, []))
        self.reset = lambda target: self.breaker(target).close()
        self.peer = lambda: Worker(shared, self.owner)
        self.logged_outages = lambda: len(shared.log.buffer) if self is self.owner else 0
        self.engaged = lambda target: bool(shared.switch and target in shared.opted_in)  # CB-001

    def breaker(self, target: str) -> pybreaker.CircuitBreaker:
        if target not in self.breakers:
            settings = self.shared.settings
            storage = self.storages[target] = pybreaker.CircuitRedisStorage(
                pybreaker.STATE_CLOSED, self.client, namespace=f"{self.shared.namespace}:{target}")
            self.breakers[target] = pybreaker.CircuitBreaker(
                fail_max=settings.failure_threshold, reset_timeout=settings.cooldown_seconds,
                exclude=[FAILURES[name] for name in FAILURES  # pybreaker's way not to count
                         if name not in settings.counted_classes],
                state_storage=storage, listeners=[self], name=target)
        return self.breakers[target]

    def state_change(self, cb: pybreaker.CircuitBreaker, old: object, new: object) -> None:
        if (getattr(old, "name", ""), getattr(new, "name", "")) == ("closed", "open") and (
                self.shared.reporting):  # a trip; a peer noticing one later drains nothing
            self.shared.failed.setdefault(cb.name, []).extend(self.shared.queues.pop(cb.name, []))

    def admit(self, target: str, call: str) -> str:
        if not self.engaged(target):
            return "admitted"
        block = translate.entered(self.breaker(target).calling(), pybreaker.CircuitBreakerError)
        if block is None:
            return "refused"
        trial = self.breaker(target).current_state == pybreaker.STATE_HALF_OPEN
        self.shared.in_flight[call] = ("probe" if trial else "admitted", block)
        return self.shared.in_flight[call][0]  # type: ignore[no-any-return]

    def record(self, target: str, call: str, outcome: str, failure_class: str | None) -> None:
        _, block = self.shared.in_flight.pop(call, (None, None))
        if block is None:  # reported again: pybreaker counts an outcome as its block ends
            again = self.engaged(target) and self.breaker(target).current_state == "closed"
            block = translate.entered(self.breaker(target).calling()) if again else None
        self.shared.reporting = True
        translate.exit_with(block, translate.outcome_error(outcome, failure_class, FAILURES))
        self.shared.reporting = False

    def enqueue(self, target: str, work: str) -> str:
        if self.engaged(target) and getattr(self.read(target), "state", "closed") != "closed":
            return "refused"  # pybreaker has no work queue: the adapter's takes work only closed
        self.shared.queues.setdefault(target, []).append(work)
        return "queued"

    def read(self, target: str) -> SimpleNamespace | None:
        try:
            self.client.ping()
        except redis.RedisError:
            return None  # the store cannot be reached: the state is unknown
        breaker, opened = self.breaker(target), self.storages[target].opened_at
        until = opened and opened + timedelta(seconds=self.shared.settings.cooldown_seconds)
        state = translate.canonical_status(breaker.current_state)  # "half-open" is half_open
        if state == "open" and until is not None and translate.wall_now() >= until:
            state = "half_open"  # pybreaker's open state lets the next call try, lazily
        probe = next((call for call, (answer, _) in self.shared.in_flight.items()
                      if answer == "probe"), None) if state == "half_open" else None
        return SimpleNamespace(state=state, cooldown_seconds=float(breaker.reset_timeout),
                               failures=breaker.fail_counter if state == "closed" else 0,
                               open_until=None if state == "closed" else until, probe=probe)

    def set_store_available(self, available: bool) -> None:
        self.shared.pool.connection_kwargs["port"] = 6379 if available else 1  # closed
        self.shared.pool.reset()

    def close(self) -> None:
        if self is self.owner:
            self.set_store_available(True)
            for call in list(self.shared.in_flight):  # end the blocks never reported, not in gc
                self.record("", call, "cancelled", None)
            for key in self.client.scan_iter(f"{self.shared.namespace}:*"):
                self.client.delete(key)
            pybreaker.CircuitRedisStorage.logger.removeHandler(self.shared.log)
            self.shared.wall.stop()


class PybreakerBackend:  # jobconform run --backend pybreaker_adapter:PybreakerBackend
    name, profile, capabilities = "pybreaker", "pybreaker", frozenset({"breaker"})

    def open_breaker(self, clock: Clock, settings: BreakerSettings) -> Worker:
        shared = SimpleNamespace(  # log: pybreaker logs each Redis command that failed
            settings=settings, namespace=f"jobconform-{uuid.uuid4().hex}",
            log=logging.handlers.BufferingHandler(2**30), reporting=False,
            wall=WallClock(clock).start(), switch=False, opted_in=set(), queues={}, failed={},
            pool=redis.ConnectionPool(host="127.0.0.1", port=6379, socket_timeout=1), in_flight={})
        pybreaker.CircuitRedisStorage.logger.addHandler(shared.log)
        return Worker(shared)

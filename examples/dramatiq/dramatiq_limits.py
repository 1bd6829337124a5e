"""Why Dramatiq's TimeLimit and AgeLimit are not claimed: what they do on the virtual clock.

Run as a script in a fresh process (it must import dramatiq inside `importing_on_bridges`, as
`time_limit.py` binds `from time import monotonic, sleep` at import); it prints one JSON line.
On a StubBroker with one worker thread, TimeLimit(5 s) and max_age 10 s, a body "a" blocks
until the harness decides it (an untimed wait, as every kit body does) and "b" waits behind it.
Dramatiq's own `Worker.start` never emits `process_boot` (its CLI does), so the TimeLimit
checker thread is started here the way the CLI starts it. What it shows
(test_dramatiq_jobs.py checks it): both read the virtual clock, TimeLimit's checker raises at
5 s, but the exception lands in the body only when the harness decides it (an async exception
waits for the thread to run Python code again); AgeLimit drops "b", taken 15 s old, with no
pass of its own (only as a worker takes it, the bound included).
"""

import json
import logging
import threading
import time

from jobconform.bridges import ThreadWaits, WallClock
from jobconform.bridges.wallclock import importing_on_bridges
from jobconform.conformance.clock import EPOCH, VirtualClock

with importing_on_bridges("dramatiq"):
    import dramatiq
    from dramatiq.brokers.stub import StubBroker
    from dramatiq.middleware import AgeLimit, TimeLimit

clock, events, decided = VirtualClock(EPOCH), list[tuple[str, str, float]](), threading.Event()
wall, waits = WallClock(clock).start(), ThreadWaits(clock).start()
dramatiq.get_logger("dramatiq").setLevel("CRITICAL")


class Raising(logging.Handler):  # when TimeLimit's checker raises in the worker thread
    def emit(self, record: logging.LogRecord) -> None:
        events.append(("TimeLimit raises", "a", time.time() - EPOCH.timestamp()))


checker_log = dramatiq.get_logger("dramatiq.middleware.time_limit", TimeLimit)
checker_log.setLevel("WARNING")
checker_log.addHandler(Raising())
broker = StubBroker(middleware=[TimeLimit(time_limit=5000, interval=1000), AgeLimit()])


@dramatiq.actor(broker=broker, max_age=10_000)
def body(name: str) -> None:
    events.append(("start", name, time.time() - EPOCH.timestamp()))
    try:
        decided.wait()  # the harness's decision: a wait in C, where no async exception lands
    except BaseException as error:
        events.append((type(error).__name__, name, time.time() - EPOCH.timestamp()))
        raise
    events.append(("returned", name, time.time() - EPOCH.timestamp()))


worker = dramatiq.Worker(broker, worker_threads=1, worker_timeout=100)
with waits.adopting():
    broker.emit_after("process_boot")
    worker.start()
body.send("a")
body.send("b")
waits.settle()  # "a" starts at 0 s
seen = {}
for step in range(1, 31):  # to 15 s in half seconds, so the checker ticks every second
    clock.advance(0.5)
    waits.settle()
    seen[str(step / 2)] = list(events)
decided.set()
waits.settle()
seen["decided at 15.0"] = list(events)
seen["dead letters"] = [message.args[0] for message in broker.dead_letters]
waits.closing()
worker.stop(timeout=1000)
waits.stop()
wall.stop()
print(json.dumps(seen))

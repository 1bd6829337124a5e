"""Celery's commanded re-delivery: acks_late on kombu's Redis transport, over celery_jobs. A lease
pass is kombu's sweep QoS.restore_visible, the lease as visibility timeout, on the bridges' clock;
a job's count is kombu's restores of its message. A body whose message was restored, or a restored
copy of one at the gate, is a lost worker: it records nothing, keeps its thread, never acks."""

import json
import threading
import time
from collections import Counter
from dataclasses import asdict, replace
from uuid import uuid4

import redis
from celery_jobs import CeleryBackend, CeleryRuntime

from jobconform import bridges
from jobconform.backends.protocol import REDELIVERY, Clock, RuntimeSettings, TaskScript

with bridges.importing_on_bridges("kombu.transport.redis"):  # its time(): stamps and cut-off
    import kombu.transport.redis  # noqa: F401  (the worker's transport)
    from kombu import Connection

BROKER, NEVER, SPARE_THREADS = "redis://127.0.0.1:6379/11", 10**9, 256  # NEVER: no own sweep


class Delivery:  # one body's view of its job's script: lost once its message was restored
    def __init__(self, script: TaskScript) -> None:
        self.script, self.lost, self.left = script, False, threading.Event()
        self.honours_cancellation, self.wake = script.honours_cancellation, script.wake
        self.decided = lambda: self.lost or script.decided()  # a lost body waits no more
        self.wait_for_decision = lambda released: script.wait_for_decision(  # or is lost
            lambda: released() or self.lost) and not self.lost


class CeleryRedeliveryRuntime(CeleryRuntime):
    def __init__(self, settings: RuntimeSettings, clock: Clock) -> None:
        self.prefix = f"jobconform-celery-redelivery-{uuid4().hex[:8]}:"  # its keys in Redis
        self.conf = {"broker_url": BROKER, "task_acks_late": True, "broker_transport_options": dict(
            global_keyprefix=self.prefix, visibility_timeout=NEVER, unacked_restore_throttle=NEVER)}
        threads = settings.max_concurrent + SPARE_THREADS  # for lost workers; the gate limits
        super().__init__(replace(settings, max_concurrent=threads), clock)
        self._gate = bridges.DispatchGate(settings.max_concurrent)
        self._deliveries = bridges.Deliveries(self._gate, threads, receipts=True)  # stamped on take
        self.settle, self.dispatch = self._deliveries.settle, self._deliveries.dispatch
        self.get = lambda job_id: self._view(self._jobs.get(job_id))
        self.list_jobs = lambda status=None: list(map(self._view, self._jobs.list_jobs(status)))
        self.heartbeat, self.operator_alerts = lambda job_id: None, lambda: []  # neither exists
        self._lock, self._closed, self._holding, self._counts = (
            threading.Lock(), threading.Event(), {}, Counter())  # per job: its body, its restores

    def _view(self, record: bridges.JobRecord | None) -> bridges.RedeliveryRecord | None:
        return record and bridges.RedeliveryRecord(
            **asdict(record), redelivery_count=self._counts[record.job_id])

    def _body(self, job_id: str) -> object:
        rank, script, _ = self._work[job_id]
        with self._lock:  # a lease pass holds it until the bodies that lost a message left
            if not (copy := job_id in self._holding):  # else a restored copy: the body has it
                delivery = self._holding[job_id] = Delivery(script)
        if copy:
            self._deliveries.dropped(job_id)
            return self._closed.wait() and None
        try:
            with self._deliveries.body(job_id):
                if not self._gate.wait(job_id, rank):
                    return None
                self._jobs.update(job_id, "running")
                runs = bridges.translate.may_run(self._gate, job_id, delivery) and script.decided()
                if not delivery.lost:
                    return self._end(job_id) if runs else (
                        self._jobs.update(job_id, "cancelled") and None)
        finally:
            self._holding.pop(job_id, None)
            delivery.left.set()
        return self._closed.wait() and None  # a lost worker never acks

    def expire_leases(self, lease_seconds: float) -> dict[str, int]:
        options = dict(self.app.conf.broker_transport_options, visibility_timeout=lease_seconds)
        with self._lock, Connection(BROKER, transport_options=options) as connection:
            client, qos = connection.default_channel.client, connection.default_channel.qos
            def leased(ceil: float | str = "+inf") -> list[str]:  # the task ids taken by ceil
                taken = client.zrange(qos.unacked_index_key, ceil, 0, desc=True, byscore=True)
                return [json.loads(raw)[0]["headers"]["id"] for tag in taken
                        if (raw := client.hget(qos.unacked_key, tag))]  # (no prefixed HGETALL)
            def acked() -> bool:  # Celery acks after a body ended, in its pool thread
                jobs = leased()  # each job's one message: its body's, or in a retry's wait
                return len(set(jobs)) == len(jobs) and all(
                    job in self._holding or self._jobs.get(job).status == "queued" for job in jobs)
            bridges.until(acked, "Celery's acknowledgements of the messages of ended bodies")
            restored = leased(time.time() - lease_seconds)  # the sweep's own query, then it
            for job_id in restored:  # told before the sweep: a copy may arrive at once
                self._deliveries.resent(job_id)
            qos.restore_visible(num=None, interval=1)
            for job_id in restored:
                self._counts[job_id] += 1
                if (delivery := self._holding.get(job_id)) and self._gate.started(job_id):
                    self._jobs.update(job_id, "queued")
                    delivery.lost = True  # its running body lost it
                    delivery.script.next_attempt()
                    delivery.wake()
                    delivery.left.wait()
        self.settle()
        return {"requeued": len(restored), "parked": 0}

    def stale_owner_write(self, job_id: str, write: str) -> bool:  # as Celery's trace: unfenced
        state = {"outcome": "SUCCESS", "failure": "FAILURE"}.get(write)  # no heartbeat in Celery
        if lost := job_id in self._counts and state is not None:
            self.app.backend.store_result(job_id, None, state)
        return lost

    def close(self) -> None:
        self._closed.set()
        super().close()
        with redis.Redis.from_url(BROKER) as client:  # its queues, bindings and unacked index
            client.delete(*client.keys(f"{self.prefix}*"))


class CeleryRedeliveryBackend(CeleryBackend):  # celery_redelivery:CeleryRedeliveryBackend
    capabilities = CeleryBackend.capabilities | {REDELIVERY}
    open = staticmethod(CeleryRedeliveryRuntime)

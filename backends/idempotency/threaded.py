"""The threaded backend's idempotency keys: every call is served on a request thread.

A web server handles each request on a thread of its own, and that is where a trigger
claims its key. This runtime does the same: each call runs on a thread of a pool and the
caller waits for its answer, so the key store is used from several real threads, as in a
deployment. The store's own atomic steps (a lock in memory, the primary key in SQL) are
what keep one winner per key; tests/test_idempotency.py races many threads on one key.
"""

from __future__ import annotations

from collections.abc import Mapping

from jobconform.backends.idempotency.protocol import Claim
from jobconform.backends.idempotency.service import IdempotencyService
from jobconform.backends.request_threads import REQUEST_THREADS, RequestThreads
from jobconform.reference.commands import Outcome
from jobconform.reference.faults import StoreFault
from jobconform.reference.lifecycle import JsonValue


class RequestThreadIdempotency(RequestThreads):
    """An `IdempotencyRuntime` that runs each call of `service` on a pool thread."""

    def __init__(self, service: IdempotencyService, threads: int = REQUEST_THREADS) -> None:
        super().__init__("request", threads)
        self._service = service

    def claim(self, scope: str, key: str | None, payload: JsonValue) -> Claim:
        return self._on_request_thread(lambda: self._service.claim(scope, key, payload))

    def claim_webhook(self, token: str, body: str, key: str | None) -> Claim:
        return self._on_request_thread(lambda: self._service.claim_webhook(token, body, key))

    def claim_call(self, tool: str, arguments: JsonValue) -> Claim:
        return self._on_request_thread(lambda: self._service.claim_call(tool, arguments))

    def scheduler_key(self, execution_id: str) -> str:
        return self._on_request_thread(lambda: self._service.scheduler_key(execution_id))

    def claim_effect(self, execution_id: str | None, effect_type: str,
                     identity: Mapping[str, str], content: JsonValue,
                     dedup_label: str | None) -> Claim:
        return self._on_request_thread(lambda: self._service.claim_effect(
            execution_id, effect_type, identity, content, dedup_label))

    def complete(self, token: str, outcome: Outcome) -> bool:
        return self._on_request_thread(lambda: self._service.complete(token, outcome))

    def release(self, token: str) -> bool:
        return self._on_request_thread(lambda: self._service.release(token))

    def purge(self) -> int:
        return self._on_request_thread(self._service.purge)

    def inject_store_fault(self, fault: StoreFault | None) -> None:
        self._service.inject_store_fault(fault)

    def store_fault_struck(self) -> bool:
        return self._service.store_fault_struck()

    def close(self) -> None:
        super().close()
        self._service.close()

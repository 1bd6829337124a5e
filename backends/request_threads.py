"""Calls served on request threads, as a threaded deployment's callers make them.

A web server or a task manager's callers reach a store from many real threads: the
threaded backend's idempotency runtime and task store run each call on a thread of a
pool, and the caller waits for its answer.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
REQUEST_THREADS = 4


class RequestThreads:
    """A pool of request threads named `jobconform-<name>-...`; `close` waits for them."""

    def __init__(self, name: str, threads: int = REQUEST_THREADS) -> None:
        self._pool = ThreadPoolExecutor(max_workers=threads,
                                        thread_name_prefix=f"jobconform-{name}")

    def _on_request_thread(self, call: Callable[[], T]) -> T:
        # No real-time limit here: the harness's watchdog guards every call.
        return self._pool.submit(call).result()

    def close(self) -> None:
        self._pool.shutdown(wait=True)

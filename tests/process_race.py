"""Processes started together against one database, for the tests of races between
processes (the SQL store's cap and migrations, the idempotency keys).

Processes are spawned, not forked: a forked child would inherit the parent's open
connections and threads.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

GUARD_SECONDS = 120.0  # real seconds; only a guard against a hung process
SPAWN = multiprocessing.get_context("spawn")


def race_in_processes(processes: int, target: Callable[..., None], *args: object) -> list[Any]:
    """Run `target(*args, start, results)` in `processes` spawned processes, released
    together by the barrier `start`; each puts one answer on the queue `results`. Returns
    the answers in the order they arrived, once every process has been joined."""
    start = SPAWN.Barrier(processes)
    results = SPAWN.Queue()
    racers = [SPAWN.Process(target=target, args=(*args, start, results))
              for _ in range(processes)]
    for racer in racers:
        racer.start()
    answers = [results.get(timeout=GUARD_SECONDS) for _ in racers]
    for racer in racers:
        racer.join(GUARD_SECONDS)
    return answers

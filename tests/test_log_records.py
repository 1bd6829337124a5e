"""The log-records capability: how a record carries a fact, the capture of `logging`
records on the loggers a backend names, and the shipped runtimes' records."""

from __future__ import annotations

import logging

from jobconform.backends.log_records import LoggerCapture, LogRecordView, log_source
from jobconform.conformance.log_records import first_unmatched
from jobconform.reference.log_records import DEBUG, WARNING, ExpectedLog


def test_a_fact_is_a_field_or_a_whole_word_of_the_message() -> None:
    record = LogRecordView("DEBUG", "x", "reaper deleted 12 expired job(s) for agent-7")
    assert record.carries("count", 12)
    assert not record.carries("count", 1)  # 1 is not a whole word of 12 or agent-7
    assert record.carries("agent", "agent-7")
    given = LogRecordView("DEBUG", "x", "deleted 3", {"count": 2})
    assert given.carries("count", 2) and not given.carries("count", 3)  # the field decides


def test_each_expected_record_needs_a_record_of_its_own_at_its_level() -> None:
    sweep = ExpectedLog("RP-009", DEBUG, (("count", 2),))
    at_info = [LogRecordView("INFO", "r", "deleted 2 jobs")]
    assert first_unmatched([sweep], at_info) == sweep
    once = [LogRecordView("DEBUG", "r", "deleted 2 jobs")]
    assert first_unmatched([sweep], once) is None
    assert first_unmatched([sweep, sweep], once) == sweep
    budget = ExpectedLog("AD-026", WARNING, (("agent", "t"), ("wait_ms", 10500)))
    assert first_unmatched([budget], [LogRecordView("WARNING", "a", "t after 10500ms")]) is None


def test_the_capture_takes_every_level_from_any_thread_and_restores_the_logger() -> None:
    logger = logging.getLogger("jobconform.test.capture.child")
    parent = logging.getLogger("jobconform.test.capture")
    parent.setLevel(logging.WARNING)
    capture = LoggerCapture(["jobconform.test.capture"])
    logger.debug("swept %d", 2, extra={"count": 2})
    records = capture.drain()
    assert [(r.level, r.message, dict(r.fields)) for r in records] == [
        ("DEBUG", "swept 2", {"count": 2})]
    assert capture.drain() == []
    capture.close()
    assert parent.level == logging.WARNING
    logger.debug("not captured")
    assert capture.drain() == []


def test_a_runtime_with_its_own_records_is_read_directly() -> None:
    class Runtime:
        def log_records(self) -> list[LogRecordView]:
            return [LogRecordView("DEBUG", "child", "m")]

    read, stop = log_source(object(), Runtime())
    assert read() == [LogRecordView("DEBUG", "child", "m")]
    stop()

"""The chaos run at CI size: 4 worker processes, about 1,000 jobs, one `kill -9`, on a SQLite
file, PostgreSQL and MariaDB (`jobconform.conformance.chaos`; benchmarks/chaos.py runs the
full size). The workers run on real time, as killed processes do: the run's own bounds stop
it, and the assertions are counts, never timings.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sql_databases import DATABASES, database

from jobconform.backends.sql import SqlJobStore
from jobconform.conformance.chaos import ChaosError, ChaosSettings, check_loopback, run_chaos_at

CI_SETTINGS = ChaosSettings(processes=4, jobs=1000, kills=1, time_limit=300.0)


@pytest.mark.parametrize("kind", DATABASES)
def test_a_killed_workers_jobs_come_back_and_no_job_has_two_owners(kind: str,
                                                                   tmp_path: Path) -> None:
    with database(kind, tmp_path) as url:
        SqlJobStore.connect(url).close()  # migrated before the workers start
        result = run_chaos_at(kind, url, tmp_path, CI_SETTINGS)
    assert result.drained, result.summary()
    assert result.duplicate_owners == [], result.summary()
    assert result.lost == [], result.summary()
    assert result.stranded == [], result.summary()
    assert result.deliveries >= CI_SETTINGS.jobs, result.summary()


def test_the_chaos_run_refuses_a_database_off_the_loopback_interface() -> None:
    with pytest.raises(ChaosError, match="loopback"):
        check_loopback("postgresql+psycopg://postgres@db.example.com:5432/test")
    check_loopback("postgresql+psycopg://postgres@127.0.0.1:5432/test")
    check_loopback("sqlite:////tmp/jobs.db")

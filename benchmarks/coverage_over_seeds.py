"""Which requirements each Hypothesis machine reaches on each seed, on one backend.

Run from the repository root: `python benchmarks/coverage_over_seeds.py [--seeds 0-19]
[--examples 100] [--profile canonical] [--machine "breaker machine"] [--backend memory]`.
The memory backend (the default) is the oracle's; the self-running machine applies only to
a backend that claims its area (threaded), the restart machine to one that keeps its store
across a restart (sql): `jobconform list` shows which. For every machine
that applies to the backend under each profile it prints a requirement x seeds table
(`#` reached on that seed, `.` not), then every requirement some seed left unreached. Exit
status 1 when there is one: `jobconform spec check --seeds 0-19` fails on the same finding.
"""

from __future__ import annotations

import argparse
import sys

from jobconform.conformance.campaign import parse_seeds
from jobconform.conformance.defaults import RUN_EXAMPLES
from jobconform.conformance.seed_coverage import ORACLE_BACKEND, measure, problems, summary
from jobconform.spec import load_registry


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0-19", help="inclusive range A-B (default 0-19)")
    parser.add_argument("--examples", type=int, default=RUN_EXAMPLES, help="examples per run")
    parser.add_argument("--profile", action="append", dest="profiles",
                        help="a profile to measure (repeatable; default every profile)")
    parser.add_argument("--machine", action="append", dest="machines",
                        help="a machine title to measure (repeatable; default every one)")
    parser.add_argument("--backend", default=ORACLE_BACKEND,
                        help=f"the backend to run the machines on (default {ORACLE_BACKEND})")
    parser.add_argument("--quiet", action="store_true", help="no per-seed progress lines")
    arguments = parser.parse_args()
    registry = load_registry()
    results = measure(registry, parse_seeds(arguments.seeds), arguments.examples,
                      backend_name=arguments.backend,
                      profiles=tuple(arguments.profiles) if arguments.profiles else None,
                      machine_names=tuple(arguments.machines) if arguments.machines else None,
                      progress=None if arguments.quiet else lambda line: print(
                          line, file=sys.stderr, flush=True))
    print(summary(results))
    found = problems(results)
    print()
    print("\n".join(found) if found else
          f"every requirement reached on every seed {arguments.seeds}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

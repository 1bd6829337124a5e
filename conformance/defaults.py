"""Names and defaults the command line shows before it imports anything heavy.

`jobconform --help` and `jobconform list` build every command's options; importing the
runner or the self-test for these few constants would load Hypothesis, Robot Framework,
SQLAlchemy and every gallery. The modules that use them re-export them.
"""

from __future__ import annotations

SUITES = ("behave", "robot", "hypothesis")

# Examples per machine of `jobconform run` (and `jobconform campaign`) unless told. 100
# since issue 33: every machine reaches all its requirements within 100 on seeds 0-19,
# and the self-test catches every gallery bug at 100, the stories random draws reach too
# rarely coming from aimed rules.
RUN_EXAMPLES = 100

# The Hypothesis seed of `jobconform run` unless told: the same seed draws the same
# sequences, so a bug the self-test proves at this seed is one the default run reports.
RUN_SEED = 0

# The self-test proves each gallery bug at the user's default count: a bug it finds only
# with a larger budget is one the default run never reports (issue 33). A bug random
# draws reach too rarely gets an aimed rule in its machine, not a larger budget.
SELFTEST_EXAMPLES = RUN_EXAMPLES
SELFTEST_SEED = RUN_SEED

"""Names and defaults the command line shows before it imports anything heavy.

`jobconform --help` and `jobconform list` build every command's options; importing the
runner or the self-test for these few constants would load Hypothesis, Robot Framework,
SQLAlchemy and every gallery. The modules that use them re-export them.
"""

from __future__ import annotations

SUITES = ("behave", "robot", "hypothesis")

# A broken backend stops the search at its first divergence, so a large budget costs
# little; it keeps a rare bug class from slipping through on one seed.
SELFTEST_EXAMPLES = 600

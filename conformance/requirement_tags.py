"""Which of a scenario's or a test's tags name requirements.

Behave scenarios and Robot tests are tagged with the requirement IDs they check (`LC-011`,
`RT-003`) beside tags of other kinds; the suites skip a case by its requirements, name
them in a failure and report the case under them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# A requirement ID as a tag: LC-011, RT-003 (the spec's id pattern).
REQUIREMENT_TAG = re.compile(r"[A-Z]{2,4}-\d{3}")


def requirement_tags(tags: Iterable[object]) -> list[str]:
    """The requirement IDs among `tags` (Behave's carry no `@`), sorted and unique."""
    return sorted({str(tag) for tag in tags if REQUIREMENT_TAG.fullmatch(str(tag))})

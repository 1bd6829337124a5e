"""Which of a scenario's or a test's tags name requirements.

Behave scenarios and Robot tests are tagged with the requirement IDs they check (`LC-011`,
`RT-003`) beside tags of other kinds; the suites skip a case by its requirements, name
them in a failure and report the case under them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

# A requirement ID as a tag: LC-011, RT-003 (the spec's id pattern).
REQUIREMENT_TAG = re.compile(r"[A-Z]{2,4}-\d{3}")


def requirement_tags(tags: Iterable[object]) -> list[str]:
    """The requirement IDs among `tags` (Behave's carry no `@`), sorted and unique."""
    return sorted({str(tag) for tag in tags if REQUIREMENT_TAG.fullmatch(str(tag))})


def files_mentioning(files: Iterable[Path], requirements: Iterable[str]) -> list[Path]:
    """The files among `files` whose text names one of `requirements` as a whole word.

    A selection's run hands Behave and Robot only these: both parse every file they are
    given before any tag filter applies, which cost the self-test most of its Behave and
    Robot time. A case tagged with a requirement names it in its own file (a scenario's or
    a feature's `@LC-011`, a test's `[Tags]` or its suite's `Test Tags`), so no file left
    out holds one.
    """
    wanted = sorted(set(requirements))
    if not wanted:
        return []
    mention = re.compile(r"(?<![\w-])(?:" + "|".join(map(re.escape, wanted)) + r")(?![\w-])")
    return [path for path in files if mention.search(path.read_text(encoding="utf-8"))]

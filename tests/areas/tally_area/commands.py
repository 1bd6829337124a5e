"""The tally's commands, declared once (jobconform's conformance/vocabulary.py).

Each declaration says how the Robot suite and the feature send a command, how it applies
to the backend's tally and to the oracle, and what it may change: the tally's value. The
Behave steps, the Robot keywords, the harness and the Hypothesis machine are derived.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from jobconform.conformance.command_engine import Engine, declared_machine
from jobconform.conformance.vocabulary import (
    Check,
    Declaration,
    Phrase,
    Reading,
    View,
    Vocabulary,
)
from tally_area.oracle import TallyModel


@dataclass(frozen=True)
class Increment:
    pass


@dataclass(frozen=True)
class Reset:
    pass


def increment_tally(times: int = 1) -> list[Increment]:
    """Increment the tally `times` times."""
    return [Increment()] * times


def reads(value: int) -> Reading:
    """The tally reads `value`."""
    return Reading("the tally's value", lambda scenario: scenario.harness.service.value(),
                   value)


VALUE = View("the tally's value", lambda tally: tally.value(), lambda model: model.value,
             adopt=lambda model, shown: setattr(model, "value", shown))


def _model(profile: Any, overrides: dict[str, Any]) -> TallyModel:
    return TallyModel()


VOCABULARY = Vocabulary(
    area="tally", noun="tally", start="Start Tally",
    commands=(
        Declaration("Increment Tally", increment_tally,
                    (Phrase("the tally is incremented {times:d} times", increment_tally),),
                    applies_to=Increment, backend=lambda tally, _: tally.increment(),
                    oracle=lambda model, _: model.increment(), changes=(VALUE,),
                    requirements=("TL-001",)),
        Declaration("Reset Tally", Reset, (Phrase("the tally is reset", Reset),),
                    applies_to=Reset, backend=lambda tally, _: tally.reset(),
                    oracle=lambda model, _: model.reset(), changes=(VALUE,),
                    requirements=("TL-002",)),
    ),
    checks=(Check(None, reads, (Phrase("the tally reads {value:d}", reads),)),),
    engine=Engine(_model, closes=False),
)

run_tally_machine = declared_machine(VOCABULARY, steps=10)

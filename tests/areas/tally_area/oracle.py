"""The tally's oracle: the value a correct tally reads, after each command."""

from dataclasses import dataclass


@dataclass
class TallyModel:
    value: int = 0

    def increment(self) -> None:
        self.value += 1

    def reset(self) -> None:
        self.value = 0

"""Robot Framework keywords of the tally area."""

from robot.api import SkipExecution
from robot.api.deco import keyword, library
from robot.libraries.BuiltIn import BuiltIn

from jobconform.backends.loading import load_backend
from tally_area.harness import TallyHarness


@library(scope="TEST")
class TallyLibrary:
    def __init__(self) -> None:
        self.harness: TallyHarness | None = None

    @keyword("Start Tally")
    def start(self) -> None:
        backend = BuiltIn().get_variable_value("${BACKEND}")
        try:
            self.harness = TallyHarness(load_backend(backend))
        except ValueError as error:
            raise SkipExecution(str(error)) from None

    @keyword("Increment Tally")
    def increment(self, times: int = 1) -> None:
        assert self.harness is not None
        for _ in range(int(times)):
            self.harness.run("increment")

    @keyword("Reset Tally")
    def reset(self) -> None:
        assert self.harness is not None
        self.harness.run("reset")

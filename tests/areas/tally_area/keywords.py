"""The tally's Robot library: its keywords are derived from its declarations."""

from jobconform.conformance.vocabulary import DerivedLibrary
from tally_area.commands import VOCABULARY


class TallyLibrary(DerivedLibrary):
    VOCABULARY = VOCABULARY

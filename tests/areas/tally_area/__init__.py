"""A third-party area outside the kit, for the kit's own tests: a tally of increments.

It is everything an area needs, at its smallest: a spec file (`tally.yaml`), an oracle, an
adapter protocol (`open_tally`), its commands declared once (`commands.py`), a feature and
a Robot suite, and one registration (`AREA`, listed under the `jobconform.areas` entry
point group in the `tally_area-1.0.dist-info` beside this folder). Its harness, Hypothesis
machine, Behave steps and Robot keywords are derived from the declarations (`keywords.py`
only names the derived library, where the Robot suite imports it).
`tally_area.backends` holds a correct backend and a broken one.
"""

from jobconform.spec.areas import Area, AreaMachine

AREA = Area(
    name="tally",
    prefix="TL",
    oracle="tally_area.oracle",
    protocol="tally_area.protocol",
    opener="open_tally",
    machine=AreaMachine("tally machine", "tally_area.commands:run_tally_machine",
                        frozenset({"tally"})),
    vocabulary="tally_area.commands:VOCABULARY",
    keywords="tally_area.keywords.TallyLibrary",
    spec_package="tally_area",
    features="tally_area.features",
    robot="tally_area.robot",
)

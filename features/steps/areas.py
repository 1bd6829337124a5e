"""Registers every area's Behave step library (importing a library defines its steps).

The areas come from the registry (`jobconform.spec.areas`), third-party ones included. They
load in the order of their names: when two steps' patterns both match a line, Behave takes
the one registered first.
"""

from jobconform.conformance.area_steps import load_step_libraries

load_step_libraries()

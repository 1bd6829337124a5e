"""Registers every area's Behave step library (importing a library defines its steps).

The areas come from the registry (`jobconform.spec.areas`), third-party ones included. They
load in the order of their names: when two steps' patterns both match a line, Behave takes
the one registered first.
"""

from importlib import import_module

from jobconform.spec.areas import areas

for _area in sorted(areas(), key=lambda area: area.name):
    if _area.steps is not None:
        import_module(_area.steps)

"""Trace files as regression scenarios: each trace in a folder becomes a .feature file
the Behave run picks up, whichever kind of trace it is (a lifecycle trace,
conformance/trace.py, or an area machine's, conformance/area_trace.py).

It stands apart from both trace modules so that neither imports the other's reader.
"""

from __future__ import annotations

from pathlib import Path

from jobconform.conformance.area_trace import AREA_TRACE_FORMAT, area_gherkin, read_area_trace
from jobconform.conformance.trace import read_trace, to_gherkin, trace_format, trace_name


def write_regression_features(traces: list[Path], folder: Path) -> list[Path]:
    """Convert trace files into .feature files in `folder` (for the Behave run).

    Raises:
        TraceError: a trace file is not valid.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.feature"):
        old.unlink()
    written = []
    for path in traces:
        target = folder / f"{trace_name(path)}.feature"
        if trace_format(path) == AREA_TRACE_FORMAT:  # an area machine's trace
            text = area_gherkin(read_area_trace(path), trace_name(path))
        else:
            text = to_gherkin(read_trace(path), trace_name(path))
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written

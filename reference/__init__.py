"""The oracle: a pure, table-driven model of the spec. Stdlib only; no clock, no threads."""

"""The conformance kit: clock, harness, front-ends, reports, command line and self-test."""

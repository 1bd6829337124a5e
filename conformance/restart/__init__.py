"""The restart area (RS-001..RS-008): a runtime stopped (without a shutdown, or by a
signal) and a new one opened over its store."""

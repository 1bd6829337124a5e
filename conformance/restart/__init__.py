"""The restart area (RS-001..RS-003): a runtime stopped and a new one opened over its store."""

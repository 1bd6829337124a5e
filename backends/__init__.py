"""The adapter protocol, the backend loader and the shipped backends."""

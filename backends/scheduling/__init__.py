"""The scheduling area's runtimes: the adapter protocol, the step scheduler and its
in-memory store, and the threaded scheduler (the SQL store is in
`jobconform.backends.scheduling.sql`)."""

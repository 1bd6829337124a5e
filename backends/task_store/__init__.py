"""The store area's runtimes: the TaskStore adapter protocol (sync and async), the
in-memory stores, a store on worker threads for an event loop, the SQL store and the
threaded backend's request-thread store.

The folder is `task_store` because `jobconform.backends.store` is the job store the
runtimes share (a module of its own since the first release)."""

"""The process boundary: a JSON-lines protocol over a child's stdin and stdout, the kit's
backend that drives any executable speaking it, and a reference child serving the memory
backend (docs/process-protocol.md)."""

from jobconform.backends.process.backend import ProcessBackend, ProcessRuntime
from jobconform.backends.process.errors import (
    ChildExited,
    ChildHung,
    ChildInternalError,
    ChildRejectedRequest,
    ChildStartError,
    MalformedMessage,
    ProcessBackendError,
    ProtocolVersionMismatch,
)
from jobconform.backends.process.wire import PROTOCOL_VERSION

__all__ = [
    "PROTOCOL_VERSION",
    "ChildExited",
    "ChildHung",
    "ChildInternalError",
    "ChildRejectedRequest",
    "ChildStartError",
    "MalformedMessage",
    "ProcessBackend",
    "ProcessBackendError",
    "ProcessRuntime",
    "ProtocolVersionMismatch",
]

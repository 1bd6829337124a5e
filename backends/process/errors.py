"""What can go wrong between the kit and a child process, each with what to do about it.

The structured errors of the adapter protocol (JobNotFound, CapacityExceeded, …) are not
here: a child reports those as data and the parent raises the protocol's own classes.
These are failures of the child or of the conversation itself.
"""

from __future__ import annotations


class ProcessBackendError(RuntimeError):
    """The root of every failure of the process boundary."""


class ChildStartError(ProcessBackendError):
    """The child's command could not be started at all."""


class ChildExited(ProcessBackendError):
    """The child ended (or closed its output) while the kit was waiting for an answer."""


class MalformedMessage(ProcessBackendError, ValueError):
    """The child wrote a line that is not a valid message of the protocol."""


class ProtocolVersionMismatch(ProcessBackendError):
    """The child speaks another version of the protocol."""


class ChildHung(ProcessBackendError, TimeoutError):
    """The child did not answer within the real-time safety limit."""


class ChildRejectedRequest(ProcessBackendError):
    """The child answered a `ProtocolError`: it could not understand the kit's request."""


class ChildInternalError(ProcessBackendError):
    """The child failed while handling a request, outside the structured errors."""

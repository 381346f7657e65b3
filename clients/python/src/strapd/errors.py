"""Exceptions mirroring the error codes of strapd's socket protocol (docs/protocol.md).

Every error reply and every stream's final ``error`` event becomes a subclass of
:class:`StrapdError` chosen by its ``code``; the protocol's machine-readable detail
(``data``, e.g. ``oldestAnchor``) is kept and the common members have attributes.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type


class StrapdError(Exception):
    """An error strapd answered, or a failure of the connection to it."""

    code: str = "error"

    def __init__(self, message: str, *, code: Optional[str] = None,
                 data: Optional[Mapping[str, Any]] = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message
        self.data: Dict[str, Any] = dict(data or {})

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def _int_detail(self, key: str) -> Optional[int]:
        value = self.data.get(key)
        return value if isinstance(value, int) else None


class BadRequest(StrapdError):
    """The request was malformed: a parameter missing, of the wrong type or out of range."""


class UnknownOp(StrapdError):
    """The operation does not exist in this strapd (an older daemon than the client)."""


class NotAuthorized(StrapdError):
    """This peer lacks the grant the operation needs, or reads a type it may not."""


class NotFound(StrapdError):
    """A named device, sample, workout or stream does not exist."""


class NoData(StrapdError):
    """The value was never set (an unset characteristic) or nothing matched (statistics)."""


class InvalidOption(StrapdError):
    """A well-formed parameter not allowed here (e.g. ``sum`` of a discrete type)."""


class InvalidTransition(StrapdError):
    """A workout state change not allowed from the session's current state."""


class AnchorExpired(StrapdError):
    """The anchor is older than what retention kept; restart from :attr:`oldest_anchor`."""

    @property
    def oldest_anchor(self) -> Optional[int]:
        return self._int_detail("oldestAnchor")


class AnchorAhead(StrapdError):
    """The anchor is past the store's end: drop what was kept beyond :attr:`latest_anchor`."""

    @property
    def latest_anchor(self) -> Optional[int]:
        return self._int_detail("latestAnchor")


class Busy(StrapdError):
    """strapd cannot take this now (a held device, too many requests or connections)."""


class Unavailable(StrapdError):
    """A subsystem strapd needs is down (Bluetooth, a degraded store)."""


class Internal(StrapdError):
    """A bug or unexpected system error inside strapd."""


class ConnectionClosed(StrapdError):
    """The connection ended (or could not be made) before the answer arrived.

    The client never reconnects by itself: open a new :class:`~strapd.Store` and continue
    from the anchor you saved.
    """
    code = "connectionClosed"


class DaemonStopping(ConnectionClosed):
    """strapd is stopping (SIGTERM): a stream got its final ``shutdown`` event."""
    code = "shutdown"


class ProtocolError(StrapdError):
    """strapd sent something this client cannot read (not the protocol it implements)."""
    code = "protocolError"


#: The protocol's error codes (docs/protocol.md), each with its exception: the one place a code
#: is spelled. ``code`` of each class is set from here.
_BY_CODE: Dict[str, Type[StrapdError]] = {
    "badRequest": BadRequest,
    "unknownOp": UnknownOp,
    "notAuthorized": NotAuthorized,
    "notFound": NotFound,
    "noData": NoData,
    "invalidOption": InvalidOption,
    "invalidTransition": InvalidTransition,
    "anchorExpired": AnchorExpired,
    "anchorAhead": AnchorAhead,
    "busy": Busy,
    "unavailable": Unavailable,
    "internal": Internal,
}
for _code, _cls in _BY_CODE.items():
    _cls.code = _code
del _code, _cls


def error_from_wire(error: Any) -> StrapdError:
    """The exception for a reply's ``error`` object or an ``error`` event's data.

    The ``data`` of a reply's error is nested (``{"code", "message", "data": {...}}``); a
    stream's error event carries the same detail beside code and message. Both are kept in
    :attr:`StrapdError.data`. An unknown code (a newer daemon) is a plain StrapdError.
    """
    if not isinstance(error, dict):
        return ProtocolError(f"malformed error {error!r}")
    code = error.get("code")
    message = error.get("message")
    code = code if isinstance(code, str) else "internal"
    message = message if isinstance(message, str) else code
    data: Dict[str, Any] = {k: v for k, v in error.items() if k not in ("code", "message", "data")}
    nested = error.get("data")
    if isinstance(nested, dict):
        data.update(nested)
    cls = _BY_CODE.get(code)
    if cls is None:
        return StrapdError(message, code=code, data=data)
    return cls(message, data=data)

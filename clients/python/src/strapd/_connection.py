"""One unix-socket connection to strapd: NDJSON framing, replies matched by id, streams.

Replies to pipelined requests may come out of order (protocol.md, *Replies*), so every
request waits on a future keyed by its id. Stream events go to the stream registered under
the request's id *before* the request is written: the ``ok`` and the first events can arrive
in the same read.

The hot path is catching up a store: strapd writes one line per item while following, and a
``json.loads`` call per line costs more than the parsing itself. Every complete line of a
read is therefore parsed in one call, as a JSON array (strapd's lines never contain a raw
newline, so joining them with commas is exact); a read that does not parse that way is
parsed line by line, and a line that does not parse at all ends the connection.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
from typing import Any, Deque, Dict, List, Optional, Tuple, Union

from .errors import ConnectionClosed, ProtocolError, StrapdError, error_from_wire

RequestID = Union[int, str]
JSONObject = Dict[str, Any]
RawEvent = Tuple[str, JSONObject]

# Events a stream ends with (protocol.md, *Streams* and *cancel*).
FINAL_EVENTS = frozenset(("cancelled", "finished", "error", "shutdown"))

# Queued events across the connection's streams above which reading stops: strapd then
# pauses an anchored follower at its anchor and counts a live subscriber's drops, instead
# of this process buffering without bound.
_HIGH_WATER = 20_000
_LOW_WATER = 5_000


def request_params(**values: Any) -> JSONObject:
    """A request's parameters without those left unset (None): strapd's defaults apply."""
    return {k: v for k, v in values.items() if v is not None}


def _encode(message: JSONObject) -> bytes:
    # allow_nan=False: NaN or an infinity is not JSON; refused here with a clear ValueError.
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8") + b"\n"


class StreamState:
    """The events of one stream, queued until its consumer takes them."""

    def __init__(self, connection: Connection, request_id: RequestID) -> None:
        self.connection = connection
        self.id = request_id
        self.events: Deque[RawEvent] = collections.deque()
        self.final: Optional[RawEvent] = None
        self.failure: Optional[StrapdError] = None
        self.cancel_sent = False
        self._waiter: Optional[asyncio.Future[None]] = None

    def push(self, event: str, data: JSONObject) -> None:
        if event in FINAL_EVENTS:
            self.final = (event, data)
        elif not self.cancel_sent:
            self.events.append((event, data))
            self.connection.queued += 1
        self.wake()

    def fail(self, error: StrapdError) -> None:
        self.failure = error
        self.wake()

    def wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    @property
    def ended(self) -> bool:
        return self.final is not None or self.failure is not None

    async def take(self) -> List[RawEvent]:
        """Every queued event (at least one), or [] once the stream has ended and drained."""
        while not self.events and not self.ended:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        batch = list(self.events)
        self.events.clear()
        self.connection.dequeued(len(batch))
        return batch

    def cancel(self) -> None:
        """Asks strapd to end the stream; events arriving meanwhile are discarded.

        Synchronous (a write to the transport), so it can run from ``__del__`` and from a
        cancelled task's cleanup without awaiting.
        """
        if self.ended or self.cancel_sent:
            return
        self.cancel_sent = True
        self.connection.dequeued(len(self.events))
        self.events.clear()
        if not self.connection.send_nowait({"op": "cancel", "id": self.id}):
            self.connection.streams.pop(self.id, None)
            self.fail(ConnectionClosed("connection closed"))

    async def wait_ended(self) -> None:
        while not self.ended:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None


class Connection(asyncio.Protocol):
    """The asyncio protocol of one connection; the Store's machinery."""

    def __init__(self) -> None:
        self.transport: Optional[asyncio.Transport] = None
        self.pending: Dict[RequestID, asyncio.Future[JSONObject]] = {}
        self.streams: Dict[RequestID, StreamState] = {}
        self.queued = 0
        self.closed: Optional[StrapdError] = None
        self._reading_paused = False
        self._partial: List[bytes] = []
        self._lost: Optional[asyncio.Future[None]] = None

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        self._lost = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        cut = data.rfind(b"\n")
        if cut < 0:
            self._partial.append(data)
            return
        if self._partial:
            self._partial.append(data[:cut])
            lines = b"".join(self._partial)
        else:
            lines = data[:cut]
        self._partial = [data[cut + 1:]] if cut + 1 < len(data) else []
        if lines.startswith(b'{"id":') and self._added_run(lines):
            return
        try:
            messages = json.loads(b"[" + lines.replace(b"\n", b",") + b"]")
        except ValueError:
            messages = []
            for line in lines.split(b"\n"):
                if not line.strip():
                    continue
                try:
                    messages.append(json.loads(line))
                except ValueError:
                    self._abort(ProtocolError(f"strapd sent a line that is not JSON: {line[:80]!r}"))
                    return
        # The common case inline (an item of a stream that goes on): one wake-up per stream
        # per read instead of one per event.
        streams = self.streams
        woken: List[StreamState] = []
        queued = 0
        for message in messages:
            event = message.get("event") if isinstance(message, dict) else None
            if event is not None and event not in FINAL_EVENTS:
                stream = streams.get(message.get("id"))
                if stream is not None and not stream.cancel_sent:
                    data = message.get("data")
                    stream.events.append((event, data if isinstance(data, dict) else {}))
                    queued += 1
                    if stream not in woken:
                        woken.append(stream)
                continue
            self._dispatch(message)
        self.queued += queued
        for stream in woken:
            stream.wake()
        self.check_high_water()

    def _added_run(self, lines: bytes) -> bool:
        """A catch-up's common read: only ``added`` events of one stream. Their envelopes are
        cut out with one ``replace`` and the items parsed as one array, without an envelope
        object per item. False (nothing done) for any other read."""
        head = lines.find(b',"event":"added","data":', 6, 40)
        if head < 0:
            return False
        prefix = lines[:head + 24]
        # strapd's lines hold no raw newline, so "}\n" + prefix only occurs between lines.
        body = lines.replace(b"}\n" + prefix, b",")
        if b"\n" in body or not body.endswith(b"}"):
            return False
        digits = prefix[6:head]
        stream = self.streams.get(int(digits)) if digits.isdigit() else None
        if stream is None or stream.cancel_sent:
            return False
        try:
            items = json.loads(b"[" + body[len(prefix):-1] + b"]")
        except ValueError:
            return False
        stream.events.extend(zip(itertools.repeat("added"), items))
        self.queued += len(items)
        stream.wake()
        self.check_high_water()
        return True

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self.closed is None:
            reason = f": {exc}" if exc is not None else ""
            self.closed = ConnectionClosed("connection to strapd closed" + reason)
        for future in self.pending.values():
            if not future.done():
                future.set_exception(self.closed)
        self.pending.clear()
        for stream in self.streams.values():
            stream.fail(self.closed)
        self.streams.clear()
        if self._lost is not None and not self._lost.done():
            self._lost.set_result(None)

    # dispatch

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            self._abort(ProtocolError(f"strapd sent {type(message).__name__}, not an object"))
            return
        request_id: Any = message.get("id")
        event = message.get("event")
        if event is not None:
            stream = self.streams.get(request_id)
            if stream is None:
                return  # a cancelled stream's late event
            data = message.get("data")
            stream.push(event, data if isinstance(data, dict) else {})
            if stream.final is not None:
                del self.streams[request_id]
            return
        if request_id is None:
            # Refused before any request was read: too many connections (busy, then close).
            error = message.get("error")
            self.closed = error_from_wire(error)
            return
        future = self.pending.pop(request_id, None)
        if future is not None and not future.done():
            future.set_result(message)

    def _abort(self, error: StrapdError) -> None:
        self.closed = error
        if self.transport is not None:
            self.transport.abort()

    # flow control

    def dequeued(self, count: int) -> None:
        self.queued -= count
        if self._reading_paused and self.queued <= _LOW_WATER and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()

    def check_high_water(self) -> None:
        # Not while a reply is awaited: it may sit behind the queued events, and a caller
        # awaiting it without reading the stream would wait forever.
        if not self._reading_paused and self.queued >= _HIGH_WATER and not self.pending \
                and self.transport is not None:
            self._reading_paused = True
            self.transport.pause_reading()

    # sending

    def send_nowait(self, message: JSONObject) -> bool:
        """Writes one request line; False when the connection is closed."""
        if self.transport is None or self.transport.is_closing() or self.closed is not None:
            return False
        self.transport.write(_encode(message))
        return True

    def expect_reply(self, request_id: RequestID) -> asyncio.Future[JSONObject]:
        if self.closed is not None:
            raise self.closed
        future: asyncio.Future[JSONObject] = asyncio.get_running_loop().create_future()
        self.pending[request_id] = future
        if self._reading_paused and self.transport is not None:
            self._reading_paused = False
            self.transport.resume_reading()
        return future

    def close(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()

    async def wait_closed(self) -> None:
        if self._lost is not None:
            await self._lost

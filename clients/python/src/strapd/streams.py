"""Streams as async iterators: live samples, anchored follow, a followed workout session.

A stream's request is sent on the first ``__anext__`` (or ``async with``), so creating one
costs nothing and can happen in any thread. Leaving the stream in any way — ``break`` out of
``async for``, ``aclose()``, the ``async with`` block ending, the consuming task being
cancelled, or the iterator being dropped — sends the protocol's ``cancel`` for its id, so
strapd stops producing for it.
"""

from __future__ import annotations

import asyncio
import collections
from typing import (Any, AsyncGenerator, Awaitable, Callable, Deque, Generic, List, Optional,
                    Protocol, Tuple, Type, TypeVar)

from types import TracebackType

from ._connection import JSONObject, RawEvent, StreamState
from .errors import DaemonStopping, ProtocolError, error_from_wire
from .models import (AnchoredBatch, DeletedObject, LiveEvent, Sample, StoredObject, Workout,
                     WorkoutEvent, stored_object)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class Results(Protocol[T_co]):
    """What a query's ``results`` are: an async iterator that ``aclose()`` or ``async with``
    ends (for a stream, with ``cancel`` on the socket)."""

    def __aiter__(self) -> Results[T_co]: ...

    async def open(self) -> Results[T_co]:
        """Sends the request now (else the first ``__anext__`` does): nothing after is missed."""
        ...

    async def __anext__(self) -> T_co: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self) -> Results[T_co]: ...

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None: ...


class GeneratorResults(Generic[T]):
    """Results produced by an async generator (pages asked for one request at a time)."""

    def __init__(self, generator: AsyncGenerator[T, None]) -> None:
        self._generator = generator

    def __aiter__(self) -> GeneratorResults[T]:
        return self

    async def open(self) -> GeneratorResults[T]:
        return self  # each page is asked for when it is wanted

    async def __anext__(self) -> T:
        return await self._generator.__anext__()

    async def aclose(self) -> None:
        await self._generator.aclose()

    async def __aenter__(self) -> GeneratorResults[T]:
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        await self.aclose()

Opener = Callable[[], Awaitable[Tuple[StreamState, JSONObject]]]


class EventStream(Generic[T]):
    """An open (or not yet opened) stream of strapd; an async iterator of ``T``."""

    def __init__(self, opener: Opener, convert: Callable[[List[RawEvent]], List[T]],
                 first: Optional[Callable[[JSONObject], List[T]]] = None) -> None:
        self._opener = opener
        self._convert = convert
        self._first = first
        self._state: Optional[StreamState] = None
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._items: Deque[T] = collections.deque()
        self._closed = False
        self.result: Optional[JSONObject] = None
        """The stream's ``ok`` result, once it is open (e.g. the session ``workout.live`` follows)."""

    async def open(self) -> EventStream[T]:
        """Sends the request and waits for its ``ok``; raises the mapped error otherwise."""
        if self._state is None and not self._closed:
            self._loop = asyncio.get_running_loop()
            state, result = await self._opener()
            self._state = state
            self.result = result
            if self._first is not None:
                self._items.extend(self._first(result))
        return self

    def __aiter__(self) -> EventStream[T]:
        return self

    async def __anext__(self) -> T:
        if self._items:
            return self._items.popleft()
        if self._closed:
            raise StopAsyncIteration
        try:
            if self._state is None:
                await self.open()
                if self._items:
                    return self._items.popleft()
            state = self._state
            assert state is not None
            while not self._items:
                events = await state.take()
                if events:
                    self._items.extend(self._convert(events))
                    continue
                self._closed = True
                self._raise_end(state)
        except asyncio.CancelledError:
            self.close()
            raise
        return self._items.popleft()

    @staticmethod
    def _raise_end(state: StreamState) -> None:
        if state.failure is not None:
            raise state.failure
        event, data = state.final if state.final is not None else ("cancelled", {})
        if event == "error":
            raise error_from_wire(data)
        if event == "shutdown":
            raise DaemonStopping("strapd is stopping; reconnect and continue from your anchor")
        raise StopAsyncIteration

    def close(self) -> None:
        """Ends the stream now (sends ``cancel``); safe to call more than once, from the loop."""
        self._closed = True
        self._items.clear()
        if self._state is not None:
            self._state.cancel()

    async def aclose(self) -> None:
        """Ends the stream and waits until strapd confirmed it (``cancelled``)."""
        self.close()
        if self._state is not None:
            await self._state.wait_ended()

    async def __aenter__(self) -> EventStream[T]:
        return await self.open()

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        await self.aclose()

    def __del__(self) -> None:
        # Dropped without being closed (a `break` out of `async for`): cancel from the loop's
        # own thread, whichever thread collects this object.
        state, loop = self._state, self._loop
        if state is not None and not state.ended and not state.cancel_sent and loop is not None \
                and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(state.cancel)
            except RuntimeError:
                pass  # the loop closed meanwhile: the connection is gone with it


def anchored_first(result: JSONObject) -> List[AnchoredBatch]:
    return [anchored_page(result)]


def anchored_page(result: JSONObject) -> AnchoredBatch:
    try:
        return AnchoredBatch([stored_object(o) for o in result["added"]],
                             [DeletedObject(o) for o in result["deleted"]], result["anchor"])
    except (KeyError, TypeError) as e:
        raise ProtocolError(f"malformed samples.anchored result: {e!r}") from None


def anchored_events(events: List[RawEvent]) -> List[AnchoredBatch]:
    """Events read together become one batch: strapd sends them in anchor order."""
    if events and events[0][0] == "added" and events[-1][0] == "added":
        # A catch-up's read: all added samples (one type check, no loop in Python).
        datas = [data for _, data in events]
        if all(kind == "added" for kind, _ in events) and not any(d.get("type") == "workout" for d in datas):
            return [AnchoredBatch(list(map(Sample, datas)), [], datas[-1]["anchor"])]
    added: List[StoredObject] = []
    deleted: List[DeletedObject] = []
    anchor: Optional[int] = None
    for kind, data in events:
        if kind == "added":
            added.append(Workout(data) if data.get("type") == "workout" else Sample(data))
        elif kind == "deleted":
            deleted.append(DeletedObject(data))
        else:
            continue  # an event this client does not know (a newer daemon): not an item
        anchor = data["anchor"]
    if anchor is None:
        return []
    return [AnchoredBatch(added, deleted, anchor)]


def live_events(events: List[RawEvent]) -> List[LiveEvent]:
    return [LiveEvent(kind, data) for kind, data in events]


def workout_events(events: List[RawEvent]) -> List[WorkoutEvent]:
    return [WorkoutEvent(kind, data) for kind, data in events]


def passthrough(events: List[RawEvent]) -> List[Tuple[str, Any]]:
    return list(events)

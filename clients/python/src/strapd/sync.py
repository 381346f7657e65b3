"""A blocking facade over :class:`~strapd.Store` (``strapd.connect(...)``).

The Store runs on an event loop in a thread of its own, so the connection keeps being read
(and strapd's flow control keeps working) between two calls, and the facade works where an
event loop is already running in the caller's thread (a notebook). Every method blocks
until strapd answered; iterators block for their next item, and leaving them — ``break``,
``close()``, Ctrl-C — cancels the stream on the socket.
"""

from __future__ import annotations

import asyncio
import threading
from datetime import date
from types import TracebackType
from typing import (Any, AsyncIterator, Awaitable, Generic, Iterable, Iterator, List, Mapping, Optional,
                    Type, TypeVar)

from ._connection import JSONObject
from .models import (AnchoredBatch, LiveEvent, MaximumHeartRate, SampleQueryResult, Statistics,
                     StatisticsCollection, TimeLike, Workout, WorkoutEvent)
from .store import Interval, Predicate, Store
from .trainer import Trainer, Trainers
from .workout import WorkoutList, WorkoutSession, WorkoutSnapshot

T = TypeVar("T")


class _Loop:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="strapd-client", daemon=True)
        self.thread.start()

    def run(self, awaitable: Awaitable[T]) -> T:
        async def wrapped() -> T:
            return await awaitable
        future = asyncio.run_coroutine_threadsafe(wrapped(), self.loop)
        try:
            return future.result()
        except BaseException:
            # KeyboardInterrupt while blocked: cancel the call in the loop (a stream's
            # `__anext__` then sends `cancel`).
            future.cancel()
            raise

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join()
        self.loop.close()


class SyncStream(Generic[T]):
    """A blocking iterator over an async stream; ``close()`` (or ``with``) ends it."""

    def __init__(self, loop: _Loop, stream: AsyncIterator[T]) -> None:
        self._loop = loop
        self._stream = stream
        self._done = False

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        try:
            return self._loop.run(self._stream.__anext__())
        except StopAsyncIteration:
            self._done = True
            raise StopIteration from None
        except BaseException:
            self.close()
            raise

    def open(self) -> SyncStream[T]:
        """Sends the stream's request now and waits for its ``ok`` (else the first ``next``
        does): events from then on are not missed."""
        opener = getattr(self._stream, "open", None)
        if opener is not None and not self._done:
            self._loop.run(opener())
        return self

    def close(self) -> None:
        if self._done:
            return
        self._done = True
        aclose = getattr(self._stream, "aclose", None)
        if aclose is not None and not self._loop.loop.is_closed():
            self._loop.run(aclose())

    def __enter__(self) -> SyncStream[T]:
        return self.open()

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()

    def __del__(self) -> None:
        if not self._done and not self._loop.loop.is_closed() and self._loop.loop.is_running():
            self._done = True
            aclose = getattr(self._stream, "aclose", None)
            if aclose is not None:
                asyncio.run_coroutine_threadsafe(aclose(), self._loop.loop)


class SyncWorkoutSession:
    """The blocking twin of :class:`~strapd.WorkoutSession`."""

    def __init__(self, loop: _Loop, session: WorkoutSession) -> None:
        self._loop = loop
        self.session = session
        self.id = session.id

    @property
    def state(self) -> Optional[str]:
        return self.session.state

    @property
    def snapshot(self) -> Optional[WorkoutSnapshot]:
        return self.session.snapshot

    def refresh(self) -> WorkoutSnapshot:
        return self._loop.run(self.session.refresh())

    def prepare(self) -> WorkoutSnapshot:
        return self._loop.run(self.session.prepare())

    def start(self) -> WorkoutSnapshot:
        return self._loop.run(self.session.start())

    def pause(self) -> WorkoutSnapshot:
        return self._loop.run(self.session.pause())

    def resume(self) -> WorkoutSnapshot:
        return self._loop.run(self.session.resume())

    def stop(self) -> WorkoutSnapshot:
        return self._loop.run(self.session.stop())

    def lap(self, metadata: Optional[Mapping[str, str]] = None) -> WorkoutSnapshot:
        return self._loop.run(self.session.lap(metadata))

    def marker(self, metadata: Optional[Mapping[str, str]] = None) -> WorkoutSnapshot:
        return self._loop.run(self.session.marker(metadata))

    def end(self) -> Workout:
        return self._loop.run(self.session.end())

    def discard(self) -> None:
        self._loop.run(self.session.discard())

    def send(self, payload: Any) -> None:
        self._loop.run(self.session.send(payload))

    def events(self) -> SyncStream[WorkoutEvent]:
        return SyncStream(self._loop, self.session.events())

    def states(self) -> SyncStream[WorkoutEvent]:
        return SyncStream(self._loop, self.session.states())

    def __repr__(self) -> str:
        return f"SyncWorkoutSession({self.id!r}, state={self.state!r})"


class SyncTrainers:
    """:class:`~strapd.Trainers`, blocking (``client.trainers``)."""

    def __init__(self, loop: _Loop, trainers: Trainers) -> None:
        self._loop = loop
        self._trainers = trainers

    def status(self) -> List[Trainer]:
        return self._loop.run(self._trainers.status())

    def set_power(self, watts: float, *, device: Optional[str] = None) -> Trainer:
        return self._loop.run(self._trainers.set_power(watts, device=device))

    def set_resistance(self, level: float, *, device: Optional[str] = None) -> Trainer:
        return self._loop.run(self._trainers.set_resistance(level, device=device))

    def set_grade(self, percent: float, *, wind: Optional[float] = None, crr: Optional[float] = None,
                  cw: Optional[float] = None, device: Optional[str] = None) -> Trainer:
        return self._loop.run(self._trainers.set_grade(percent, wind=wind, crr=crr, cw=cw, device=device))

    def release(self, *, device: Optional[str] = None) -> Trainer:
        return self._loop.run(self._trainers.release(device=device))


class Client:
    """A blocking connection to strapd, with the methods of :class:`~strapd.Store`."""

    def __init__(self, socket: Optional[str] = None) -> None:
        self._loop = _Loop()
        self.store = Store(socket)
        try:
            self._loop.run(self.store.connect())
        except BaseException:
            self._loop.stop()
            raise

    def close(self) -> None:
        if not self._loop.loop.is_closed():
            self._loop.run(self.store.close())
            self._loop.stop()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 traceback: Optional[TracebackType]) -> None:
        self.close()

    def request(self, op: str, **params: Any) -> JSONObject:
        return self._loop.run(self.store.request(op, **params))

    def stream(self, op: str, **params: Any) -> SyncStream[Any]:
        return SyncStream(self._loop, self.store.stream(op, **params))

    def status(self) -> JSONObject:
        return self._loop.run(self.store.status())

    def devices(self) -> List[JSONObject]:
        return self._loop.run(self.store.devices())

    def device(self, address: str) -> JSONObject:
        return self._loop.run(self.store.device(address))

    def samples(self, types: Optional[Iterable[str]] = None, *, predicate: Optional[Predicate] = None,
                sort: str = "start", descending: bool = False, limit: Optional[int] = None) -> SampleQueryResult:
        return self._loop.run(self.store.samples(types, predicate=predicate, sort=sort,
                                                 descending=descending, limit=limit))

    def anchored_page(self, types: Optional[Iterable[str]] = None, *, anchor: int = 0,
                      predicate: Optional[Predicate] = None, limit: int = 1000) -> AnchoredBatch:
        return self._loop.run(self.store.anchored_page(types, anchor=anchor, predicate=predicate, limit=limit))

    def anchored(self, types: Optional[Iterable[str]] = None, *, anchor: int = 0,
                 predicate: Optional[Predicate] = None, follow: bool = False,
                 limit: int = 10000) -> SyncStream[AnchoredBatch]:
        return SyncStream(self._loop, self.store.anchored(types, anchor=anchor, predicate=predicate,
                                                          follow=follow, limit=limit))

    def live(self, types: Optional[Iterable[str]] = None, *,
             devices: Optional[Iterable[str]] = None) -> SyncStream[LiveEvent]:
        return SyncStream(self._loop, self.store.live(types, devices=devices))

    def delete(self, uuids: Optional[Iterable[str]] = None, *, predicate: Optional[Predicate] = None) -> int:
        return self._loop.run(self.store.delete(uuids, predicate=predicate))

    def statistics(self, type: str, options: Iterable[str], start: TimeLike, end: TimeLike, *,
                   predicate: Optional[Predicate] = None, workout: Optional[str] = None) -> Statistics:
        return self._loop.run(self.store.statistics(type, options, start, end, predicate=predicate, workout=workout))

    def statistics_collection(self, type: str, options: Iterable[str], start: TimeLike, end: TimeLike,
                              interval: Interval, *, anchor_date: Optional[TimeLike] = None,
                              time_zone: Optional[str] = None, separate_by_source: bool = False,
                              predicate: Optional[Predicate] = None) -> StatisticsCollection:
        return self._loop.run(self.store.statistics_collection(
            type, options, start, end, interval, anchor_date=anchor_date, time_zone=time_zone,
            separate_by_source=separate_by_source, predicate=predicate))

    def statistics_collection_updates(self, type: str, options: Iterable[str], start: TimeLike, end: TimeLike,
                                      interval: Interval, *, anchor_date: Optional[TimeLike] = None,
                                      time_zone: Optional[str] = None, separate_by_source: bool = False,
                                      predicate: Optional[Predicate] = None) -> SyncStream[StatisticsCollection]:
        return SyncStream(self._loop, self.store.statistics_collection_updates(
            type, options, start, end, interval, anchor_date=anchor_date, time_zone=time_zone,
            separate_by_source=separate_by_source, predicate=predicate))

    def watch_workouts(self) -> SyncStream[WorkoutEvent]:
        return SyncStream(self._loop, self.store.watch_workouts())

    def access_status(self) -> JSONObject:
        return self._loop.run(self.store.access_status())

    def start_workout(self, activity_type: str, *, location_type: Optional[str] = None,
                      devices: Optional[Iterable[str]] = None, athlete: Optional[str] = None,
                      metadata: Optional[Mapping[str, str]] = None) -> SyncWorkoutSession:
        return SyncWorkoutSession(self._loop, self._loop.run(self.store.start_workout(
            activity_type, location_type=location_type, devices=devices, athlete=athlete, metadata=metadata)))

    def prepare_workout(self, activity_type: str, *, location_type: Optional[str] = None,
                        devices: Optional[Iterable[str]] = None, athlete: Optional[str] = None,
                        metadata: Optional[Mapping[str, str]] = None) -> SyncWorkoutSession:
        return SyncWorkoutSession(self._loop, self._loop.run(self.store.prepare_workout(
            activity_type, location_type=location_type, devices=devices, athlete=athlete, metadata=metadata)))

    def workout_session(self, session_id: str) -> SyncWorkoutSession:
        return SyncWorkoutSession(self._loop, self.store.workout_session(session_id))

    def workout(self, id: str) -> WorkoutSnapshot:
        return self._loop.run(self.store.workout(id))

    def workouts(self, start: Optional[TimeLike] = None, end: Optional[TimeLike] = None,
                 limit: Optional[int] = None) -> WorkoutList:
        return self._loop.run(self.store.workouts(start, end, limit))

    @property
    def trainers(self) -> SyncTrainers:
        return SyncTrainers(self._loop, self.store.trainers)

    def hrv(self, workout: Optional[str] = None, *, start: Optional[TimeLike] = None,
            end: Optional[TimeLike] = None, device: Optional[str] = None) -> JSONObject:
        return self._loop.run(self.store.hrv(workout, start=start, end=end, device=device))

    def profile(self, athlete: str = "default") -> JSONObject:
        return self._loop.run(self.store.profile(athlete))

    def set_profile(self, fields: Mapping[str, Any], athlete: str = "default") -> JSONObject:
        return self._loop.run(self.store.set_profile(fields, athlete))

    def characteristic(self, field: str, athlete: str = "default") -> Any:
        return self._loop.run(self.store.characteristic(field, athlete))

    def date_of_birth(self, athlete: str = "default") -> date:
        return self._loop.run(self.store.date_of_birth(athlete))

    def biological_sex(self, athlete: str = "default") -> str:
        return self._loop.run(self.store.biological_sex(athlete))

    def weight(self, athlete: str = "default") -> float:
        return self._loop.run(self.store.weight(athlete))

    def height(self, athlete: str = "default") -> float:
        return self._loop.run(self.store.height(athlete))

    def resting_heart_rate(self, athlete: str = "default") -> float:
        return self._loop.run(self.store.resting_heart_rate(athlete))

    def maximum_heart_rate(self, athlete: str = "default") -> MaximumHeartRate:
        return self._loop.run(self.store.maximum_heart_rate(athlete))


def connect(socket: Optional[str] = None) -> Client:
    """A blocking client connected to strapd (``$STRAPD_SOCKET`` or /run/strapd/strapd.sock)."""
    return Client(socket)

"""The asyncio client: one connection to strapd (HealthKit's HKHealthStore).

Requests are pipelined on the one connection and matched by id. The client never reconnects
by itself: when the connection ends, pending calls and open streams raise
:class:`~strapd.ConnectionClosed` (or :class:`~strapd.DaemonStopping`), and a reader opens a
new Store and continues from the anchor it saved — the policy is the caller's, and visible.
"""

from __future__ import annotations

import asyncio
import itertools
import os
from datetime import date, timedelta
from types import TracebackType
from typing import Any, AsyncGenerator, Dict, Iterable, List, Mapping, Optional, Tuple, Type, Union

from ._connection import Connection, JSONObject, RawEvent, StreamState, request_params
from .errors import ConnectionClosed, ProtocolError, StrapdError, error_from_wire
from .models import (AnchoredBatch, LiveEvent, MaximumHeartRate, Sample, SampleQueryResult,
                     Statistics, StatisticsCollection, TimeLike, WorkoutEvent, format_time,
                     interval_parameter, parse_date, parse_time)
from .streams import (EventStream, GeneratorResults, Results, anchored_events, anchored_first,
                      anchored_page, live_events, workout_events)
from .trainer import Trainers
from .workout import WorkoutList, WorkoutSession, WorkoutSnapshot

DEFAULT_SOCKET = "/run/strapd/strapd.sock"

# strapd answers `busy` beyond 32 requests being answered on one connection; one slot stays
# free for the `cancel` a stream being left sends without waiting.
_MAX_OUTSTANDING = 31

Predicate = Mapping[str, Any]
Interval = Union[timedelta, Mapping[str, int]]


def default_socket() -> str:
    """``$STRAPD_SOCKET``, else strapd's default ``/run/strapd/strapd.sock``."""
    return os.environ.get("STRAPD_SOCKET") or DEFAULT_SOCKET




def _types(types: Optional[Iterable[str]]) -> Optional[List[str]]:
    if types is None:
        return None
    if isinstance(types, str):
        return [types]
    return list(types)


class Store:
    """A connection to strapd.

    ``async with Store(path) as store:`` connects and closes; ``await Store.open(path)`` too.
    """

    def __init__(self, socket: Optional[str] = None) -> None:
        self.socket = socket or default_socket()
        self._connection: Optional[Connection] = None
        self._ids = itertools.count(1)
        self._slots: Optional[asyncio.Semaphore] = None

    @classmethod
    async def open(cls, socket: Optional[str] = None) -> Store:
        store = cls(socket)
        await store.connect()
        return store

    async def connect(self) -> None:
        if self._connection is not None and self._connection.closed is None:
            return
        loop = asyncio.get_running_loop()
        try:
            _, connection = await loop.create_unix_connection(Connection, self.socket)
        except OSError as e:
            raise ConnectionClosed(f"cannot connect to strapd at {self.socket}: {e.strerror or e}") from e
        self._connection = connection
        self._slots = asyncio.Semaphore(_MAX_OUTSTANDING)

    async def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            await self._connection.wait_closed()

    async def __aenter__(self) -> Store:
        await self.connect()
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        traceback: Optional[TracebackType]) -> None:
        await self.close()

    # the wire

    def _live_connection(self) -> Connection:
        connection = self._connection
        if connection is None:
            raise ConnectionClosed("not connected: use `async with Store(...)` or `await Store.open(...)`")
        if connection.closed is not None:
            raise connection.closed
        return connection

    async def request(self, op: str, **params: Any) -> JSONObject:
        """Any operation of the protocol: its ``result``, or the mapped exception."""
        connection = self._live_connection()
        assert self._slots is not None
        async with self._slots:
            request_id = next(self._ids)
            future = connection.expect_reply(request_id)
            try:
                if not connection.send_nowait(dict(params, id=request_id, op=op)):
                    raise connection.closed or ConnectionClosed("connection closed")
                reply = await future
            finally:
                connection.pending.pop(request_id, None)
        return self._result(reply)

    @staticmethod
    def _result(reply: JSONObject) -> JSONObject:
        if reply.get("ok") is True:
            result = reply.get("result")
            return result if isinstance(result, dict) else {}
        raise error_from_wire(reply.get("error"))

    async def _open_stream(self, op: str, params: JSONObject) -> Tuple[StreamState, JSONObject]:
        self._live_connection()  # not connected: ConnectionClosed before anything waits
        assert self._slots is not None
        async with self._slots:
            return await self._open_stream_now(op, params)

    async def _open_stream_now(self, op: str, params: JSONObject) -> Tuple[StreamState, JSONObject]:
        connection = self._live_connection()
        request_id = next(self._ids)
        state = StreamState(connection, request_id)
        connection.streams[request_id] = state
        future = connection.expect_reply(request_id)
        try:
            if not connection.send_nowait(dict(params, id=request_id, op=op)):
                raise connection.closed or ConnectionClosed("connection closed")
            reply = await future
            return state, self._result(reply)
        except StrapdError:
            connection.streams.pop(request_id, None)
            raise
        except BaseException:
            # Cancelled while waiting for the `ok`: the stream may already exist on strapd.
            state.cancel()
            raise
        finally:
            connection.pending.pop(request_id, None)

    def stream(self, op: str, **params: Any) -> EventStream[Tuple[str, Any]]:
        """Any streaming operation, as raw ``(event, data)`` pairs."""
        return EventStream(lambda: self._open_stream(op, params), lambda events: list(events))

    # daemon and devices

    async def status(self) -> JSONObject:
        return await self.request("status")

    async def devices(self) -> List[JSONObject]:
        return list((await self.request("devices.list")).get("devices", []))

    async def device(self, address: str) -> JSONObject:
        return await self.request("devices.info", address=address)

    # samples

    async def samples(self, types: Optional[Iterable[str]] = None, *, predicate: Optional[Predicate] = None,
                      sort: str = "start", descending: bool = False, limit: Optional[int] = None) -> SampleQueryResult:
        """HKSampleQuery: samples matching ``predicate`` (and ``types``), sorted, limited."""
        result = await self.request("samples.query", **request_params(
            types=_types(types), predicate=predicate, sort=sort, descending=descending, limit=limit))
        return SampleQueryResult([Sample(o) for o in result.get("samples", [])], bool(result.get("truncated")))

    async def anchored_page(self, types: Optional[Iterable[str]] = None, *, anchor: int = 0,
                            predicate: Optional[Predicate] = None, limit: int = 1000) -> AnchoredBatch:
        """One page of an anchored query (HKAnchoredObjectQuery's ``result(for:)``)."""
        result = await self.request("samples.anchored", **request_params(
            types=_types(types), predicate=predicate, anchor=anchor, limit=limit))
        return anchored_page(result)

    def anchored(self, types: Optional[Iterable[str]] = None, *, anchor: int = 0,
                 predicate: Optional[Predicate] = None, follow: bool = False,
                 limit: int = 10000) -> Results[AnchoredBatch]:
        """HKAnchoredObjectQuery's ``results(for:)``: batches of added and deleted objects,
        each with the anchor to save.

        Without ``follow`` the pages up to the store's current end, then the iteration stops.
        With ``follow`` the first page, then every item as it becomes durable (strapd switches
        from catching up to live with no gap and no duplicate); items read together arrive as
        one batch. Save ``batch.anchor`` and pass it after a reconnect to continue exactly.
        """
        params = request_params(types=_types(types), predicate=predicate, anchor=anchor, limit=limit)
        if follow:
            return EventStream(lambda: self._open_stream("samples.anchored", dict(params, follow=True)),
                               anchored_events, anchored_first)
        return GeneratorResults(self._pages(params))

    async def _pages(self, params: JSONObject) -> AsyncGenerator[AnchoredBatch, None]:
        anchor = params["anchor"]
        while True:
            batch = anchored_page(await self.request("samples.anchored", **dict(params, anchor=anchor)))
            if batch.anchor == anchor:
                return
            anchor = batch.anchor
            yield batch

    def live(self, types: Optional[Iterable[str]] = None, *,
             devices: Optional[Iterable[str]] = None) -> EventStream[LiveEvent]:
        """``live.subscribe``: samples as they are decoded (before they are stored), device and
        link changes; ``dropped`` says how many this client missed while it did not read."""
        params = request_params(types=_types(types), devices=None if devices is None else list(devices))
        return EventStream(lambda: self._open_stream("live.subscribe", params), live_events)

    async def delete(self, uuids: Optional[Iterable[str]] = None, *, predicate: Optional[Predicate] = None) -> int:
        """``samples.delete`` by UUID or predicate (admin grant): how many were deleted."""
        result = await self.request("samples.delete", **request_params(
            uuids=None if uuids is None else list(uuids), predicate=predicate))
        return int(result.get("deleted", 0))

    # statistics

    async def statistics(self, type: str, options: Iterable[str], start: TimeLike, end: TimeLike, *,
                         predicate: Optional[Predicate] = None, workout: Optional[str] = None) -> Statistics:
        """HKStatisticsQuery over ``[start, end)``; :class:`~strapd.NoData` when nothing matched."""
        result = await self.request("statistics.query", **request_params(
            type=type, options=_types(options), **{"from": format_time(start)}, to=format_time(end),
            predicate=predicate, workout=workout))
        return Statistics(result)

    async def statistics_collection(self, type: str, options: Iterable[str], start: TimeLike, end: TimeLike,
                                    interval: Interval, *, anchor_date: Optional[TimeLike] = None,
                                    time_zone: Optional[str] = None, separate_by_source: bool = False,
                                    predicate: Optional[Predicate] = None) -> StatisticsCollection:
        """HKStatisticsCollectionQuery: every interval overlapping ``[start, end)``, empty ones
        with None figures. strapd cuts a long collection below its reply size; the rest is
        asked for from ``next`` with the same anchor date, until nothing is left."""
        anchor_text = format_time(anchor_date if anchor_date is not None else start)
        params = request_params(type=type, options=_types(options), interval=interval_parameter(interval),
                         anchorDate=anchor_text, to=format_time(end), timeZone=time_zone,
                         separateBySource=separate_by_source or None, predicate=predicate)
        statistics: List[Statistics] = []
        cursor = format_time(start)
        while True:
            result = await self.request("statistics.collection", **dict(params, **{"from": cursor}))
            statistics.extend(Statistics(o) for o in result.get("statistics", []))
            if not result.get("truncated"):
                return StatisticsCollection(str(result.get("type", type)), result.get("unit"),
                                            result.get("timeZone"), statistics)
            following = result.get("next")
            if not isinstance(following, str) or following == cursor:
                raise ProtocolError(f"statistics.collection truncated without a next start after {cursor}")
            cursor = following

    def statistics_collection_updates(self, type: str, options: Iterable[str], start: TimeLike, end: TimeLike,
                                      interval: Interval, *, anchor_date: Optional[TimeLike] = None,
                                      time_zone: Optional[str] = None, separate_by_source: bool = False,
                                      predicate: Optional[Predicate] = None) -> EventStream[StatisticsCollection]:
        """HKStatisticsCollectionQuery's ``statisticsUpdateHandler``: the whole collection, then
        again each time strapd sends intervals whose figures changed (at most once a second),
        with those intervals replaced. At most 10 000 intervals (strapd's bound)."""
        anchor_text = format_time(anchor_date if anchor_date is not None else start)
        params = request_params(type=type, options=_types(options), interval=interval_parameter(interval),
                         anchorDate=anchor_text, to=format_time(end), timeZone=time_zone,
                         separateBySource=separate_by_source or None, predicate=predicate)
        held: Dict[str, Statistics] = {}
        shape: List[Optional[str]] = [type, None, None]

        async def opener() -> Tuple[StreamState, JSONObject]:
            state, result = await self._open_stream("statistics.collection",
                                                    dict(params, follow=True, **{"from": format_time(start)}))
            shape[:] = [str(result.get("type", type)), result.get("unit"), result.get("timeZone")]
            rows = list(result.get("statistics", []))
            cursor = result.get("next")
            while result.get("truncated") and isinstance(cursor, str):
                # The stream covers every interval; the reply's cut part is read with plain requests.
                result = await self.request("statistics.collection", **dict(params, **{"from": cursor}))
                rows.extend(result.get("statistics", []))
                cursor = result.get("next")
            for row in rows:
                held[row["start"]] = Statistics(row)
            return state, result

        def collection() -> StatisticsCollection:
            return StatisticsCollection(str(shape[0]), shape[1], shape[2],
                                        [held[k] for k in sorted(held, key=parse_time)])

        def updates(events: List[RawEvent]) -> List[StatisticsCollection]:
            changed = False
            for kind, data in events:
                if kind == "statistics":
                    for row in data.get("statistics", []):
                        held[row["start"]] = Statistics(row)
                        changed = True
            return [collection()] if changed else []

        return EventStream(opener, updates, lambda _: [collection()])

    # workouts

    async def start_workout(self, activity_type: str, *, location_type: Optional[str] = None,
                            devices: Optional[Iterable[str]] = None, athlete: Optional[str] = None,
                            metadata: Optional[Mapping[str, str]] = None) -> WorkoutSession:
        """Creates and starts a session (HKWorkoutSession + startActivity)."""
        return await self._create("workout.start", activity_type, location_type, devices, athlete, metadata)

    async def prepare_workout(self, activity_type: str, *, location_type: Optional[str] = None,
                              devices: Optional[Iterable[str]] = None, athlete: Optional[str] = None,
                              metadata: Optional[Mapping[str, str]] = None) -> WorkoutSession:
        """Creates a session in ``prepared`` (sensors held, nothing counted yet)."""
        return await self._create("workout.prepare", activity_type, location_type, devices, athlete, metadata)

    async def _create(self, op: str, activity_type: str, location_type: Optional[str],
                      devices: Optional[Iterable[str]], athlete: Optional[str],
                      metadata: Optional[Mapping[str, str]]) -> WorkoutSession:
        result = await self.request(op, **request_params(
            activityType=activity_type, locationType=location_type,
            devices=None if devices is None else list(devices), athlete=athlete,
            metadata=None if metadata is None else dict(metadata)))
        snapshot = WorkoutSnapshot(result)
        if snapshot.session_id is None:
            raise ProtocolError(f"{op} answered no session id")
        return WorkoutSession(self, snapshot.session_id, snapshot)

    def watch_workouts(self) -> EventStream[WorkoutEvent]:
        """``workout.watch``: every session created on this box, its state changes, saves,
        discards and failures (workoutSessionMirroringStartHandler, for all sessions); the
        stream's ``result["sessions"]`` are those open when watching began."""
        return EventStream(lambda: self._open_stream("workout.watch", {}), workout_events)

    async def access_status(self) -> JSONObject:
        """``access.status``: this peer's grants and what each operation allows it."""
        return await self.request("access.status")

    def workout_session(self, session_id: str) -> WorkoutSession:
        """A proxy for an existing session (another client's: mirroring by id). No request."""
        return WorkoutSession(self, session_id, None)

    @property
    def trainers(self) -> Trainers:
        """Smart trainers: their state, and a target set or released by hand."""
        return Trainers(self)

    async def workout(self, id: str) -> WorkoutSnapshot:
        """``workout.get``: an open or recently ended session, or a saved workout."""
        return WorkoutSnapshot(await self.request("workout.get", session=id))

    async def workouts(self, start: Optional[TimeLike] = None, end: Optional[TimeLike] = None,
                       limit: Optional[int] = None) -> WorkoutList:
        """``workout.list``: open sessions (oldest first) and saved workouts (newest first)."""
        result = await self.request("workout.list", **request_params(
            **{"from": None if start is None else format_time(start)},
            to=None if end is None else format_time(end), limit=limit))
        return WorkoutList(result)

    async def hrv(self, workout: Optional[str] = None, *, start: Optional[TimeLike] = None,
                  end: Optional[TimeLike] = None, device: Optional[str] = None) -> JSONObject:
        """``workout.hrv``: time-domain HRV of a workout, an open session or a time range."""
        return await self.request("workout.hrv", **request_params(
            workout=workout, **{"from": None if start is None else format_time(start)},
            to=None if end is None else format_time(end), device=device))

    # characteristics (the athlete profile)

    async def profile(self, athlete: str = "default") -> JSONObject:
        """The whole profile; :class:`~strapd.NoData` for an athlete without one."""
        return await self.request("profile.get", athlete=athlete)

    async def set_profile(self, fields: Mapping[str, Any], athlete: str = "default") -> JSONObject:
        """Changes fields (None clears one; admin grant); answers the whole profile."""
        return dict((await self.request("profile.set", athlete=athlete, profile=dict(fields))).get("profile", {}))

    async def characteristic(self, field: str, athlete: str = "default") -> Any:
        """One profile field as strapd writes it; :class:`~strapd.NoData` when unset."""
        result = await self.request("profile.get", athlete=athlete, field=field)
        if field not in result:
            raise ProtocolError(f"profile.get answered no {field}")
        return result[field]

    async def date_of_birth(self, athlete: str = "default") -> date:
        """HKHealthStore.dateOfBirthComponents(); NoData when unset."""
        return parse_date(str(await self.characteristic("dateOfBirth", athlete)))

    async def biological_sex(self, athlete: str = "default") -> str:
        """``female``, ``male`` or ``other``; NoData when unset."""
        return str(await self.characteristic("biologicalSex", athlete))

    async def weight(self, athlete: str = "default") -> float:
        """Body mass in kg; NoData when unset."""
        return float(await self.characteristic("weight", athlete))

    async def height(self, athlete: str = "default") -> float:
        """Height in cm; NoData when unset."""
        return float(await self.characteristic("height", athlete))

    async def resting_heart_rate(self, athlete: str = "default") -> float:
        return float(await self.characteristic("restingHeartRate", athlete))

    async def maximum_heart_rate(self, athlete: str = "default") -> MaximumHeartRate:
        """Set or estimated from the date of birth (``estimated``); NoData when neither."""
        value = await self.characteristic("maximumHeartRate", athlete)
        if not isinstance(value, dict):
            raise ProtocolError(f"maximumHeartRate is {value!r}, not an object")
        return MaximumHeartRate(value)

    @property
    def connected(self) -> bool:
        return self._connection is not None and self._connection.closed is None

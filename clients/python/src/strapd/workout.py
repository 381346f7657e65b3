"""Workout sessions (HKWorkoutSession with its HKLiveWorkoutBuilder) as proxies.

A :class:`WorkoutSession` is the session's id and the store it talks through: any client
may drive or follow any session (mirroring by id), and every command answers the session as
strapd now holds it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, AsyncIterator, Dict, List, Mapping, Optional

from ._connection import JSONObject
from .errors import ProtocolError
from .models import Workout, WorkoutEvent, list_member, object_member
from .streams import EventStream, workout_events

if TYPE_CHECKING:
    from .store import Store


class WorkoutSnapshot:
    """A session as ``workout.get`` answers it: the session, its live statistics (the
    builder's), and the saved workout once it ended."""

    __slots__ = ("raw",)

    def __init__(self, raw: JSONObject) -> None:
        self.raw = raw

    @property
    def session(self) -> Dict[str, Any]:
        return object_member(self.raw, "session")

    @property
    def session_id(self) -> Optional[str]:
        return self.session.get("session")

    @property
    def state(self) -> Optional[str]:
        """``notStarted``, ``prepared``, ``running``, ``paused``, ``stopped`` or ``ended``."""
        return self.session.get("state")

    @property
    def statistics(self) -> Dict[str, Any]:
        """LiveStatistics (docs/workouts.md): elapsedTime, heartRateAverage, laps, …"""
        return object_member(self.raw, "statistics")

    @property
    def elapsed_time(self) -> Optional[float]:
        return self.statistics.get("elapsedTime")

    @property
    def workout(self) -> Optional[Workout]:
        value = self.raw.get("workout")
        return Workout(value) if isinstance(value, dict) else None

    @property
    def unknown_devices(self) -> List[str]:
        """Addresses strapd has never seen among the session's devices (a typo never connects)."""
        return list_member(self.raw, "unknownDevices")

    def __repr__(self) -> str:
        return f"WorkoutSnapshot(session={self.session_id!r}, state={self.state!r})"


class WorkoutList:
    """``workout.list``: open and recently ended sessions, and saved workouts (newest first)."""

    __slots__ = ("sessions", "workouts")

    def __init__(self, raw: JSONObject) -> None:
        self.sessions = [WorkoutSnapshot(s) for s in raw.get("sessions") or []]
        self.workouts = [Workout(w) for w in raw.get("workouts") or []]


class WorkoutSession:
    """A proxy for one session. :attr:`snapshot` is the last state a command answered."""

    def __init__(self, store: Store, session_id: str, snapshot: Optional[WorkoutSnapshot]) -> None:
        self.store = store
        self.id = session_id.upper()
        self.snapshot = snapshot

    @property
    def state(self) -> Optional[str]:
        """The state the last command (or :meth:`refresh`) saw."""
        return None if self.snapshot is None else self.snapshot.state

    async def _command(self, op: str, **params: Any) -> WorkoutSnapshot:
        self.snapshot = WorkoutSnapshot(await self.store.request(op, session=self.id, **params))
        return self.snapshot

    async def refresh(self) -> WorkoutSnapshot:
        """``workout.get``: the session now, with the builder's statistics."""
        return await self._command("workout.get")

    async def prepare(self) -> WorkoutSnapshot:
        return await self._command("workout.prepare")

    async def start(self) -> WorkoutSnapshot:
        return await self._command("workout.start")

    async def pause(self) -> WorkoutSnapshot:
        return await self._command("workout.pause")

    async def resume(self) -> WorkoutSnapshot:
        return await self._command("workout.resume")

    async def stop(self) -> WorkoutSnapshot:
        return await self._command("workout.stop")

    async def lap(self, metadata: Optional[Mapping[str, str]] = None) -> WorkoutSnapshot:
        return await self._command("workout.lap", **({} if metadata is None else {"metadata": dict(metadata)}))

    async def marker(self, metadata: Optional[Mapping[str, str]] = None) -> WorkoutSnapshot:
        return await self._command("workout.marker", **({} if metadata is None else {"metadata": dict(metadata)}))

    async def end(self) -> Workout:
        """Ends the session and saves the workout (finishWorkout); answers what was stored."""
        result = await self.store.request("workout.end", session=self.id)
        raw = result.get("workout")
        if not isinstance(raw, dict):
            raise ProtocolError("workout.end answered no workout")
        self.snapshot = WorkoutSnapshot({"session": {"session": self.id, "state": "ended"}, "workout": raw})
        return Workout(raw)

    async def discard(self) -> None:
        """Drops the session; nothing is saved."""
        await self.store.request("workout.discard", session=self.id)
        self.snapshot = WorkoutSnapshot({"session": {"session": self.id, "state": "discarded"}})

    async def send(self, payload: Any) -> None:
        """Relays a small JSON value to the session's other followers (sendToRemoteWorkoutSession)."""
        await self.store.request("workout.send", session=self.id, payload=payload)

    def events(self) -> EventStream[WorkoutEvent]:
        """``workout.live``: state changes, laps and markers, messages, statistics (at most once
        a second), then ``saved`` or ``discarded``; the iteration ends with strapd's
        ``finished``. The stream's ``result`` is the session when following began."""
        return EventStream(lambda: self.store._open_stream("workout.live", {"session": self.id}),
                           workout_events)

    async def states(self) -> AsyncIterator[WorkoutEvent]:
        """Only the ``state`` events of :meth:`events` (the session delegate's didChangeTo)."""
        async with self.events() as stream:
            async for event in stream:
                if event.kind == "state":
                    yield event

    def __repr__(self) -> str:
        return f"WorkoutSession({self.id!r}, state={self.state!r})"

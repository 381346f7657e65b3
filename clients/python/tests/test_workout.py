"""A workout's lifecycle driven by one client and followed by another (mirroring by id)."""

from __future__ import annotations

import asyncio
from typing import List

import pytest

import strapd
from conftest import Daemon, run

STRAP = "5E:1A:00:00:48:00"


def test_workout_lifecycle_followed_by_a_second_connection(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store, strapd.Store(daemon.socket) as mirror:
            session = await store.start_workout("cycling", location_type="indoor", devices=[STRAP],
                                                metadata={"route": "python"})
            assert session.state == "running"
            assert session.snapshot is not None and session.snapshot.unknown_devices == []

            events: List[strapd.WorkoutEvent] = []
            follower = mirror.workout_session(session.id.lower())
            stream = follower.events()
            await stream.open()
            assert stream.result is not None and stream.result["session"]["state"] == "running"

            async def follow() -> None:
                async for event in stream:
                    events.append(event)

            task = asyncio.create_task(follow())
            await session.lap({"lap": "2"})
            with pytest.raises(strapd.InvalidTransition):
                await session.resume()  # running already: nothing changes
            assert (await session.pause()).state == "paused"
            await follower.send({"hello": "from the mirror"})
            assert (await session.resume()).state == "running"
            await asyncio.sleep(1.2)  # a statistics event
            snapshot = await session.refresh()
            assert snapshot.elapsed_time is not None and snapshot.elapsed_time > 0
            workout = await session.end()
            await asyncio.wait_for(task, 20)  # the stream ends with `finished`

            assert workout.type == "workout" and workout.session_id == session.id
            assert workout.activity_type == "cycling" and workout.metadata == {"route": "python"}
            assert workout.duration is not None and workout.end >= workout.start
            transitions = [(e.from_state, e.to_state) for e in events if e.kind == "state"]
            assert transitions[:2] == [("running", "paused"), ("paused", "running")]
            assert transitions[-1][1] == "ended"
            assert [e.data["metadata"] for e in events if e.kind == "event"] == [{"lap": "2"}]
            saved = [e.workout for e in events if e.kind == "saved"]
            assert len(saved) == 1 and saved[0] is not None and saved[0].uuid == workout.uuid
            # The mirror's own message is not echoed to it.
            assert not [e for e in events if e.kind == "message"]

            listed = await store.workouts()
            assert workout.uuid in [w.uuid for w in listed.workouts]
            by_anchor = await store.anchored_page(["workout"], anchor=(workout.anchor or 1) - 1, limit=1)
            assert by_anchor.workouts[0].uuid == workout.uuid
            again = await store.workout(session.id)
            assert again.workout is not None and again.workout.uuid == workout.uuid
            hrv = await store.hrv(str(workout.uuid))
            assert "intervals" in hrv
            with pytest.raises(strapd.NotFound):
                await store.workout("00000000-0000-0000-0000-000000000000")

    run(main())


def test_blocking_workout_with_messages_to_a_follower(daemon: Daemon) -> None:
    with strapd.connect(daemon.socket) as client, strapd.connect(daemon.socket) as watcher:
        session = client.prepare_workout("running", devices=["5E:1A:00:00:53:00"])
        assert session.state == "prepared"
        with watcher.workout_session(session.id).events() as events:
            session.start()
            session.send({"pace": "easy"})
            session.marker({"note": "hill"})
            kinds: List[str] = []
            for event in events:
                kinds.append(event.kind)
                if event.kind == "message":
                    assert event.data["payload"] == {"pace": "easy"}
                if event.kind == "event":
                    break
            assert kinds[0] == "state" and kinds.count("message") == 1
        session.discard()
        with pytest.raises(strapd.NotFound):
            client.workout_session(session.id).pause()


def test_a_watcher_hears_of_every_session(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store, strapd.Store(daemon.socket) as watcher:
            assert (await store.access_status())["grants"]["record"] is True
            async with watcher.watch_workouts() as watch:
                assert watch.result is not None and "sessions" in watch.result
                session = await store.start_workout("rowing", devices=[STRAP])
                await session.pause()
                await session.end()
                seen: List[str] = []
                async for event in watch:
                    if event.data.get("session") != session.id:
                        continue
                    seen.append(event.kind if event.kind != "state" else f"state:{event.to_state}")
                    if event.kind == "saved":
                        break
            assert seen[0] == "created" and seen[-1] == "saved"
            assert "state:paused" in seen and "state:ended" in seen

    run(main())

"""Anchored queries: catch-up then follow with no gap or duplicate, across a daemon restart
and a reconnect from the saved anchor; deletions; anchor errors."""

from __future__ import annotations

import asyncio
import signal
import time
from typing import List, Tuple

import pytest

import strapd
from conftest import Daemon, run

Item = Tuple[str, int]  # (uuid, anchor)


async def read_all(store: strapd.Store) -> List[Item]:
    items: List[Item] = []
    async for batch in store.anchored(anchor=0, limit=500):
        items.extend((str(o.uuid), int(o.anchor or -1)) for o in batch.added)
    return items


async def follow_until(store: strapd.Store, anchor: int, live_batches: int, seen: List[Item]) -> int:
    """Follows from `anchor` until `live_batches` batches after the first page; the last anchor."""
    batches = 0
    async for batch in store.anchored(anchor=anchor, follow=True, limit=200):
        assert batch.anchor >= anchor
        seen.extend((str(o.uuid), int(o.anchor or -1)) for o in batch.added)
        anchor = batch.anchor
        batches += 1
        if batches > live_batches:
            break
    return anchor


def test_catch_up_then_follow_across_a_restart_from_the_saved_anchor(fresh_daemon: Daemon) -> None:
    fresh_daemon.start(["--simulate=3"])
    time.sleep(1.5)  # something to catch up on
    seen: List[Item] = []

    async def first_run() -> int:
        async with strapd.Store(fresh_daemon.socket) as store:
            anchor = await follow_until(store, 0, 3, seen)
            # Keep following while strapd stops: the stream ends with DaemonStopping.
            stream = store.anchored(anchor=anchor, follow=True)
            stopper = asyncio.get_running_loop().run_in_executor(None, fresh_daemon.stop, signal.SIGTERM)
            with pytest.raises(strapd.DaemonStopping):
                async for batch in stream:
                    seen.extend((str(o.uuid), int(o.anchor or -1)) for o in batch.added)
                    anchor = batch.anchor
            await stopper
            return anchor

    saved = run(first_run())
    assert seen, "nothing was caught up"
    fresh_daemon.start(["--simulate=3"])

    async def second_run() -> List[Item]:
        async with strapd.Store(fresh_daemon.socket) as store:
            await follow_until(store, saved, 3, seen)
            return await read_all(store)

    everything = run(second_run())
    uuids = [u for u, _ in seen]
    assert len(set(uuids)) == len(uuids), "an item was delivered twice"
    anchors = [a for _, a in seen]
    assert anchors == sorted(anchors)
    # No gap: what was followed is exactly the store's items up to the last anchor followed.
    assert seen == [item for item in everything if item[1] <= anchors[-1]]
    assert anchors[-1] > saved  # items after the restart arrived


def test_pages_without_follow_end_at_the_store_end(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            pages = [b async for b in store.anchored(["heartRate"], anchor=0, limit=2)]
            assert pages and all(len(p.added) <= 2 for p in pages)
            assert all(s.type == "heartRate" for p in pages for s in p.samples)
            one = await store.anchored_page(["heartRate"], anchor=0, limit=2)
            assert [o.uuid for o in one.added] == [o.uuid for o in pages[0].added]
            assert one.anchor == pages[0].anchor

    run(main())


def test_a_deletion_reaches_a_follower(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            latest = await store.samples(["batteryLevel"], limit=1, sort="end", descending=True)
            assert len(latest) == 1
            victim = latest[0]
            start = (await store.status())["store"]["latestAnchor"]
            async with store.anchored(["batteryLevel"], anchor=start, follow=True) as stream:
                assert await store.delete([str(victim.uuid)]) == 1
                async for batch in stream:
                    if batch.deleted:
                        assert [d.uuid for d in batch.deleted] == [victim.uuid]
                        assert batch.deleted[0].anchor > start
                        break

    run(main())


def test_anchor_errors_are_typed(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            latest = (await store.status())["store"]["latestAnchor"]
            with pytest.raises(strapd.AnchorAhead) as ahead:
                await store.anchored_page(anchor=latest + 1_000_000)
            assert ahead.value.latest_anchor is not None and ahead.value.latest_anchor >= latest
            with pytest.raises(strapd.AnchorAhead):
                async for _ in store.anchored(anchor=latest + 1_000_000, follow=True):
                    pass
            with pytest.raises(strapd.BadRequest):
                await store.anchored_page(anchor=-1)

    run(main())


def test_an_unread_follower_is_bounded_and_requests_still_answer(fresh_daemon: Daemon) -> None:
    fresh_daemon.start(["--simulate=10", "--simulate-speed", "500"])
    deadline = time.monotonic() + 60
    while fresh_daemon.call({"id": 0, "op": "status"})["result"]["store"]["latestAnchor"] < 30_000:
        assert time.monotonic() < deadline, "the simulator did not fill the store"
        time.sleep(0.2)

    async def main() -> None:
        async with strapd.Store(fresh_daemon.socket) as store:
            stream = store.anchored(anchor=0, follow=True, limit=1000)
            await stream.open()
            await asyncio.sleep(1.5)  # strapd streams the backlog; nobody reads it
            connection = store._connection
            assert connection is not None
            # Reading stopped at the high-water mark (20 000 events) plus one read's lines, and
            # strapd paused the follower: the backlog waits in the store, not in this process.
            assert 1000 <= connection.queued < 25_000  # of the 30 000 and more stored
            target = (await store.status())["store"]["latestAnchor"]  # answered all the same
            seen: List[Item] = []
            async for batch in stream:
                seen.extend((str(o.uuid), int(o.anchor or -1)) for o in batch.added)
                if batch.anchor >= target:
                    break
            await stream.aclose()
            everything = await read_all(store)
            assert seen == [item for item in everything if item[1] <= seen[-1][1]]

    run(main(), timeout=110)

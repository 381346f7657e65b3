"""Live heart rate and the cancellation of streams, async and through the blocking facade."""

from __future__ import annotations

import asyncio
import time

import strapd
from conftest import Daemon, run


def wait_for_subscribers(daemon: Daemon, count: int) -> int:
    # strapd drops a subscriber once it has read the cancel; poll its status briefly.
    deadline = time.monotonic() + 10
    while daemon.live_subscribers() != count and time.monotonic() < deadline:
        time.sleep(0.05)
    return daemon.live_subscribers()


def test_live_heart_rate_arrives(daemon: Daemon) -> None:
    async def main() -> list[float]:
        values: list[float] = []
        async with strapd.Store(daemon.socket) as store:
            async for event in store.live(["heartRate"]):
                sample = event.sample
                if sample is None:
                    continue
                assert sample.type == "heartRate" and sample.unit == "count/min"
                assert sample.uuid is None and sample.anchor is None  # not stored yet
                assert sample.device.id == "5E:1A:00:00:48:00"
                assert sample.start.tzinfo is not None
                if sample.value is not None:
                    values.append(sample.value)
                if len(values) == 2:
                    break
        return values

    values = run(main())
    assert len(values) == 2 and all(30 <= v <= 230 for v in values)
    assert wait_for_subscribers(daemon, 0) == 0


def test_leaving_a_stream_cancels_it_on_the_socket(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            # `break` drops the iterator `async for` held: it cancels from its finalizer.
            async for event in store.live(["heartRate"]):
                if event.kind == "sample":
                    assert await asyncio.to_thread(daemon.live_subscribers) == 1
                    break
            assert await asyncio.to_thread(wait_for_subscribers, daemon, 0) == 0
            # A stream kept in a variable ends with its `async with` block, cancel confirmed.
            async with store.live(["heartRate"]) as stream:
                async for event in stream:
                    if event.kind == "sample":
                        assert await asyncio.to_thread(daemon.live_subscribers) == 1
                        break
            assert await asyncio.to_thread(daemon.live_subscribers) == 0
            # The connection stays open: only the streams ended.
            assert (await store.status())["clients"] >= 1

    run(main())


def test_cancelling_the_consuming_task_cancels_the_stream(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            first = asyncio.Event()

            async def consume() -> None:
                async for _ in store.live():
                    first.set()

            task = asyncio.create_task(consume())
            await asyncio.wait_for(first.wait(), 20)
            assert await asyncio.to_thread(daemon.live_subscribers) == 1
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass
            assert await asyncio.to_thread(wait_for_subscribers, daemon, 0) == 0
            assert "version" in await store.status()

    run(main())


def test_blocking_facade_prints_live_heart_rate_and_closes_the_stream(daemon: Daemon) -> None:
    with strapd.connect(daemon.socket) as client:
        with client.live(["heartRate"]) as stream:
            for event in stream:
                if event.sample is not None and event.sample.value is not None:
                    assert event.sample.type == "heartRate"
                    break
        assert wait_for_subscribers(daemon, 0) == 0
        assert client.status()["mode"] == "simulate"

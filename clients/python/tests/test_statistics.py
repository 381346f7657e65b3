"""Statistics and a statistics collection paged transparently, checked against each other."""

from __future__ import annotations

import time
from datetime import datetime, timedelta, timezone
from typing import Any, List

import pytest

import strapd
from conftest import Daemon, run


def test_statistics_and_a_paged_collection_agree(daemon: Daemon) -> None:
    time.sleep(2)  # a few heart-rate samples

    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            last = await store.samples(["heartRate"], limit=1, sort="start", descending=True)
            assert len(last) == 1
            # Every heart-rate sample starting before `end` is stored: one strap, in order.
            end = last[0].start + timedelta(milliseconds=1)
            start = end - timedelta(days=30)
            whole = await store.statistics("heartRate", ["average", "maximum", "minimum"], start, end)
            assert whole.count >= 2
            assert whole.minimum is not None and whole.maximum is not None and whole.average is not None
            assert whole.minimum <= whole.average <= whole.maximum

            ops: List[str] = []
            request = store.request

            async def counting(op: str, **params: Any) -> Any:
                ops.append(op)
                return await request(op, **params)

            store.request = counting  # type: ignore[method-assign]
            # 43 200 one-minute intervals: more than one reply holds, so strapd pages it.
            collection = await store.statistics_collection(
                "heartRate", ["average", "maximum"], start, end, timedelta(minutes=1),
                anchor_date=end, time_zone="UTC")
            store.request = request  # type: ignore[method-assign]
            assert ops.count("statistics.collection") >= 2
            assert len(collection) == 30 * 24 * 60
            assert collection[0].start == start and collection[-1].end == end
            assert all(a.end == b.start for a, b in zip(collection, collection[1:]))
            assert sum(s.count for s in collection) == whole.count
            full = [s for s in collection if s.count]
            assert max(s.maximum or 0 for s in full) == whole.maximum
            weighted = sum((s.average or 0) * s.count for s in full) / whole.count
            assert weighted == pytest.approx(whole.average)
            assert collection.statistics_for(end - timedelta(seconds=30)) is collection[-1]
            empty = collection[0]
            assert empty.count == 0 and empty.average is None
            with pytest.raises(KeyError):
                _ = empty.sum  # not asked for

            by_source = await store.statistics_collection(
                "heartRate", ["average"], end - timedelta(hours=1), end, {"hours": 1},
                anchor_date=end, time_zone="UTC", separate_by_source=True)
            assert len(by_source) == 1
            assert sum(s.count for s in by_source[0].by_source.values()) == by_source[0].count

    run(main())


def test_statistics_errors_are_typed(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            long_ago = datetime(2001, 1, 1, tzinfo=timezone.utc)
            with pytest.raises(strapd.NoData):
                await store.statistics("heartRate", ["average"], long_ago, long_ago + timedelta(days=1))
            with pytest.raises(strapd.InvalidOption) as invalid:
                await store.statistics("heartRate", ["sum"], long_ago, long_ago + timedelta(days=1))
            assert invalid.value.code == "invalidOption" and "sum" in invalid.value.message
            with pytest.raises(strapd.BadRequest):
                await store.statistics_collection("heartRate", ["average"], long_ago, long_ago + timedelta(days=1),
                                                  {"hours": 1}, time_zone="Not/AZone")
            with pytest.raises(ValueError):
                await store.statistics("heartRate", ["average"], datetime(2001, 1, 1), long_ago)

    run(main())


def test_a_followed_collection_updates_as_samples_arrive(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
            updates = store.statistics_collection_updates(
                "heartRate", ["average"], now - timedelta(hours=1), now + timedelta(hours=1),
                {"minutes": 1}, time_zone="UTC")
            counts: List[int] = []
            async with updates:
                async for collection in updates:
                    assert len(collection) == 120
                    counts.append(sum(s.count for s in collection))
                    if len(counts) >= 3 and counts[-1] > counts[0]:
                        break
            assert counts == sorted(counts)  # samples only arrive
            # The held collection is what a fresh request answers for the same intervals.
            ended = await store.statistics_collection(
                "heartRate", ["average"], now - timedelta(hours=1), now + timedelta(hours=1),
                {"minutes": 1}, time_zone="UTC")
            assert sum(s.count for s in ended) >= counts[-1]

    run(main())

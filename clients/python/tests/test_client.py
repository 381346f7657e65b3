"""The connection itself: pipelining, error codes mapped to exceptions, bad input, pandas."""

from __future__ import annotations

import asyncio
import importlib
import sys
import time
from typing import Any

import pytest

import strapd
from conftest import Daemon, run


def test_pipelined_requests_beyond_strapds_limit_are_all_answered(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            # strapd answers `busy` past 32 outstanding requests; the Store keeps within it.
            replies = await asyncio.gather(*(store.status() for _ in range(100)),
                                           *(store.devices() for _ in range(20)))
            assert all("version" in r for r in replies[:100])
            assert all(isinstance(r, list) and len(r) == 3 for r in replies[100:])

    run(main())


def test_error_codes_map_to_exceptions(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            with pytest.raises(strapd.UnknownOp) as unknown:
                await store.request("no.such.op")
            assert unknown.value.code == "unknownOp" and isinstance(unknown.value, strapd.StrapdError)
            with pytest.raises(strapd.NotFound):
                await store.device("AA:BB:CC:DD:EE:FF")
            with pytest.raises(strapd.BadRequest) as bad:
                await store.samples(["noSuchType"])
            assert "noSuchType" in bad.value.message
            held = await store.start_workout("walking", devices=["5E:1A:00:00:48:00"])
            try:
                with pytest.raises(strapd.Busy) as busy:
                    await store.start_workout("walking", devices=["5E:1A:00:00:48:00"])
                assert held.id in busy.value.message
            finally:
                await held.discard()
            with pytest.raises(strapd.NotFound):
                async for _ in store.workout_session(held.id).events():
                    pass

    run(main())


def test_connection_failures_and_bad_input_are_clear(daemon: Daemon, tmp_path: Any) -> None:
    async def main() -> None:
        with pytest.raises(strapd.ConnectionClosed) as refused:
            await strapd.Store.open(str(tmp_path / "absent.sock"))
        assert "absent.sock" in str(refused.value)
        store = strapd.Store(daemon.socket)
        with pytest.raises(strapd.ConnectionClosed):
            await store.status()  # not connected yet
        async with store:
            with pytest.raises(ValueError):
                await store.request("workout.send", session="X", payload=float("nan"))
            with pytest.raises(ValueError):
                await store.statistics_collection("heartRate", ["average"], "2026-01-01T00:00:00Z",
                                                  "2026-01-02T00:00:00Z", {"hours": 1, "days": 1})
            assert "version" in await store.status()  # still usable
        with pytest.raises(strapd.ConnectionClosed):
            await store.status()

    run(main())


def test_default_socket_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STRAPD_SOCKET", raising=False)
    assert strapd.default_socket() == "/run/strapd/strapd.sock"
    monkeypatch.setenv("STRAPD_SOCKET", "/tmp/x.sock")
    assert strapd.Store().socket == "/tmp/x.sock"


def test_to_dataframe_or_a_clear_import_error(daemon: Daemon, monkeypatch: pytest.MonkeyPatch) -> None:
    with strapd.connect(daemon.socket) as client:
        deadline = time.monotonic() + 20
        samples = client.samples(["heartRate"], limit=3)
        while not samples and time.monotonic() < deadline:
            time.sleep(0.2)  # the module's daemon may have just started
            samples = client.samples(["heartRate"], limit=3)
    assert len(samples) >= 1
    try:
        importlib.import_module("pandas")
    except ImportError:
        pass  # not installed: only the error below is checked
    else:
        frame = strapd.to_dataframe(samples)
        assert list(frame["uuid"]) == [s.uuid for s in samples]
        assert list(frame["value"]) == [s.value for s in samples]
        assert str(frame["start"].dt.tz) == "UTC"
    # None in sys.modules makes `import pandas` fail, as where it is not installed.
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        strapd.to_dataframe(samples)

"""A smart trainer's target set and released through the client (``store.trainers``), against
``strapd --simulate`` with the simulated FTMS trainer ([simulate] devices = hr, trainer)."""

from __future__ import annotations

import asyncio
import time

import pytest

import strapd
from conftest import Daemon, run

TRAINER = "5E:1A:00:00:54:00"


def start_with_trainer(daemon: Daemon) -> None:
    daemon.start(["--set", "simulate.devices=hr,trainer", "--simulate"])


def test_power_is_held_then_released_and_refusals_are_typed(fresh_daemon: Daemon) -> None:
    start_with_trainer(fresh_daemon)

    async def main() -> None:
        async with strapd.Store(fresh_daemon.socket) as store:
            trainers = store.trainers
            # The trainer counts as one once it has reported its ranges (right after connecting).
            for _ in range(300):
                known = await trainers.status()
                if known:
                    break
                await asyncio.sleep(0.05)
            assert [t.device for t in known] == [TRAINER]
            assert known[0].capabilities["power"] == {"minimum": 0, "maximum": 2000, "increment": 1}

            wanted = await trainers.set_power(215)  # the one trainer: no device needed
            assert wanted.device == TRAINER and wanted.desired == {"power": 215} and wanted.owner == "user"
            for _ in range(300):
                held = (await trainers.status())[0]
                if held.state == "holding":
                    break
                await asyncio.sleep(0.05)
            assert held.holding == {"power": 215}

            with pytest.raises(strapd.InvalidOption) as refused:
                await trainers.set_power(2500)
            assert "2000" in str(refused.value)
            with pytest.raises(strapd.NotFound):
                await trainers.set_power(100, device="00:11:22:33:44:55")
            assert (await trainers.status())[0].desired == {"power": 215}  # nothing written

            released = await trainers.release(device=TRAINER)
            assert released.desired is None and released.owner is None
    run(main())


def test_the_blocking_client_sets_a_grade(fresh_daemon: Daemon) -> None:
    start_with_trainer(fresh_daemon)
    with strapd.connect(fresh_daemon.socket) as client:
        deadline = time.monotonic() + 15
        while not client.trainers.status() and time.monotonic() < deadline:
            time.sleep(0.05)
        trainer = client.trainers.set_grade(4.5, wind=1.0, device=TRAINER)
        assert trainer.desired is not None and trainer.desired["grade"] == 4.5 and trainer.desired["wind"] == 1.0
        while client.trainers.status()[0].state != "holding" and time.monotonic() < deadline:
            time.sleep(0.05)
        assert client.trainers.status()[0].holding == trainer.desired
        assert client.trainers.release().desired is None

"""Characteristics: NoData when unset, never a made-up default; values once set."""

from __future__ import annotations

from datetime import date

import pytest

import strapd
from conftest import Daemon, run


def test_characteristics_raise_no_data_until_set(daemon: Daemon) -> None:
    async def main() -> None:
        async with strapd.Store(daemon.socket) as store:
            athlete = "py-characteristics"
            with pytest.raises(strapd.NoData) as unset:
                await store.date_of_birth(athlete)
            assert unset.value.code == "noData"
            with pytest.raises(strapd.NoData):
                await store.profile(athlete)

            profile = await store.set_profile({"weight": 61.5}, athlete)
            assert profile == {"weight": 61.5}
            assert await store.weight(athlete) == 61.5
            for read in (store.date_of_birth, store.biological_sex, store.height, store.maximum_heart_rate):
                with pytest.raises(strapd.NoData):
                    await read(athlete)

            await store.set_profile({"dateOfBirth": "1994-03-02", "biologicalSex": "female"}, athlete)
            assert await store.date_of_birth(athlete) == date(1994, 3, 2)
            assert await store.biological_sex(athlete) == "female"
            maximum = await store.maximum_heart_rate(athlete)
            assert maximum.estimated and maximum.formula == "tanaka2001" and 150 < maximum.value < 200

            await store.set_profile({"weight": None}, athlete)
            with pytest.raises(strapd.NoData):
                await store.weight(athlete)
            with pytest.raises(strapd.InvalidOption):
                await store.set_profile({"weight": 0}, athlete)

    run(main())


def test_blocking_characteristics(daemon: Daemon) -> None:
    with strapd.connect(daemon.socket) as client:
        with pytest.raises(strapd.NoData):
            client.date_of_birth("py-nobody")
        with pytest.raises(strapd.NoData):
            client.resting_heart_rate("py-nobody")

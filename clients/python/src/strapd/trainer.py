"""Smart trainers (FTMS): what strapd holds on each, and the target set or released by hand.

``trainer.status``, ``trainer.set`` and ``trainer.release`` (docs/protocol-workouts.md,
"Trainers"; docs/trainer.md for what strapd does with a target). strapd keeps control: it
requests control, writes one request at a time, sets the target again after a reconnect and
resets the trainer when let go. A client only says what it wants held.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional

from ._connection import JSONObject, request_params
from .models import list_member, object_member

if TYPE_CHECKING:
    from .store import Store


class Trainer:
    """One trainer as strapd answers it (``T`` of the protocol)."""

    __slots__ = ("raw",)

    def __init__(self, raw: JSONObject) -> None:
        self.raw = raw

    @property
    def device(self) -> str:
        return str(self.raw["device"])

    @property
    def state(self) -> str:
        """``disconnected``, ``idle``, ``busy``, ``holding``, ``controlLost``,
        ``controlHeldByAnotherApp`` or ``failed`` (see :attr:`error`)."""
        return str(self.raw["state"])

    @property
    def holding(self) -> Optional[Dict[str, Any]]:
        """The target the trainer acknowledged: ``{"power": W}``, ``{"resistance": level}`` or
        ``{"grade": %, "wind", "crr", "cw"}``."""
        value = self.raw.get("holding")
        return value if isinstance(value, dict) else None

    @property
    def desired(self) -> Optional[Dict[str, Any]]:
        """What strapd wants held, now or at the next connection."""
        value = self.raw.get("desired")
        return value if isinstance(value, dict) else None

    @property
    def owner(self) -> Optional[str]:
        """``user`` (set by hand) or ``session`` (a workout riding a plan: :attr:`session`)."""
        value = self.raw.get("owner")
        return value if isinstance(value, str) else None

    @property
    def session(self) -> Optional[str]:
        value = self.raw.get("session")
        return value if isinstance(value, str) else None

    @property
    def error(self) -> Optional[str]:
        value = self.raw.get("error")
        return value if isinstance(value, str) else None

    @property
    def capabilities(self) -> Dict[str, Any]:
        """The ranges the trainer reported: ``{"power": {"minimum", "maximum", "increment"}, …}``."""
        return object_member(self.raw, "capabilities")

    @property
    def alerts(self) -> List[Any]:
        """The last eight things worth saying, oldest first."""
        return list_member(self.raw, "alerts")

    def __repr__(self) -> str:
        return f"Trainer(device={self.device!r}, state={self.state!r}, holding={self.holding!r})"


class Trainers:
    """The trainers of one :class:`~strapd.Store` (``store.trainers``). ``device`` may be left
    out when strapd knows exactly one trainer."""

    __slots__ = ("store",)

    def __init__(self, store: Store) -> None:
        self.store = store

    async def status(self) -> List[Trainer]:
        result = await self.store.request("trainer.status")
        return [Trainer(t) for t in list_member(result, "trainers") if isinstance(t, dict)]

    async def set_power(self, watts: float, *, device: Optional[str] = None) -> Trainer:
        """ERG: the trainer holds ``watts`` whatever the cadence. Outside the trainer's range:
        :class:`~strapd.InvalidOption`, before anything is written."""
        return await self._set(device, power=watts)

    async def set_resistance(self, level: float, *, device: Optional[str] = None) -> Trainer:
        return await self._set(device, resistance=level)

    async def set_grade(self, percent: float, *, wind: Optional[float] = None, crr: Optional[float] = None,
                        cw: Optional[float] = None, device: Optional[str] = None) -> Trainer:
        """Simulation: a road's grade (%), with wind (m/s), rolling resistance and drag (kg/m)
        where given (strapd's defaults otherwise)."""
        return await self._set(device, grade=percent, wind=wind, crr=crr, cw=cw)

    async def release(self, *, device: Optional[str] = None) -> Trainer:
        """Forgets the target; strapd resets the trainer if it may have left one on it."""
        return Trainer(await self.store.request("trainer.release", **request_params(device=device)))

    async def _set(self, device: Optional[str], **target: Optional[float]) -> Trainer:
        return Trainer(await self.store.request("trainer.set", **request_params(device=device, **target)))

"""The values strapd answers, with HealthKit's names (HKQuantitySample, HKWorkout,
HKDeletedObject, HKStatistics, HKStatisticsCollection).

Objects read from the store wrap the decoded JSON (``raw``) and convert a member only when it
is asked for: a catch-up of hundreds of thousands of samples pays for the JSON and one small
object per item, not for datetimes nobody reads.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

JSONObject = Dict[str, Any]
TimeLike = Union[datetime, str]

SAMPLE_TYPES = (
    "heartRate", "heartbeatSeries", "energyExpended", "activeEnergy", "cyclingSpeed",
    "cyclingCadence", "cyclingDistance", "runningSpeed", "runningCadence", "strideLength",
    "runningDistance", "batteryLevel", "sensorContact",
)


def parse_time(text: str) -> datetime:
    """An RFC 3339 time as strapd writes it (``2026-11-29T20:59:41.123Z``), UTC-aware."""
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    return datetime.fromisoformat(text.replace(" ", "T"))


def format_time(value: TimeLike) -> str:
    """A time parameter: an aware datetime in UTC with milliseconds, or a string as given.

    A naive datetime is refused: which zone it means is a guess, and a wrong guess would
    shift every query silently.
    """
    if isinstance(value, str):
        return value
    if not isinstance(value, datetime):
        raise TypeError(f"a time must be a datetime or an RFC 3339 string, not {type(value).__name__}")
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        raise ValueError(f"naive datetime {value.isoformat()}: give it a time zone (e.g. timezone.utc)")
    utc = value.astimezone(timezone.utc)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


def object_member(raw: Mapping[str, Any], key: str) -> Dict[str, Any]:
    """A member that is a JSON object; {} when it is missing or not an object."""
    value = raw.get(key)
    return value if isinstance(value, dict) else {}


def list_member(raw: Mapping[str, Any], key: str) -> List[Any]:
    """A member that is a JSON array, as a new list; [] when it is missing or null."""
    return list(raw.get(key) or [])


class Device:
    """The sensor a sample came from (HKDevice)."""

    __slots__ = ("raw",)

    def __init__(self, raw: JSONObject) -> None:
        self.raw = raw

    @property
    def id(self) -> str:
        return str(self.raw.get("id", ""))

    @property
    def name(self) -> Optional[str]:
        return self.raw.get("name")

    @property
    def manufacturer(self) -> Optional[str]:
        return self.raw.get("manufacturer")

    @property
    def model(self) -> Optional[str]:
        return self.raw.get("model")

    def __repr__(self) -> str:
        return f"Device({self.id!r}, name={self.name!r})"


class StoredObject:
    """Something the store holds: a sample or a workout (HKObject)."""

    __slots__ = ("raw",)

    def __init__(self, raw: JSONObject) -> None:
        self.raw = raw

    @property
    def uuid(self) -> Optional[str]:
        """None for a live sample: the store assigns it once the sample is stored."""
        return self.raw.get("uuid")

    @property
    def anchor(self) -> Optional[int]:
        return self.raw.get("anchor")

    @property
    def type(self) -> str:
        return str(self.raw["type"])

    @property
    def start(self) -> datetime:
        return parse_time(self.raw["start"])

    @property
    def end(self) -> datetime:
        return parse_time(self.raw["end"])

    @property
    def metadata(self) -> Dict[str, Any]:
        return object_member(self.raw, "metadata")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, StoredObject) and type(other) is type(self) and self.raw == other.raw

    def __hash__(self) -> int:
        return hash((self.type, self.uuid, self.raw.get("start")))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.raw!r})"


class Sample(StoredObject):
    """A quantity sample, a heartbeat series or a sensor-contact sample."""

    __slots__ = ()

    @property
    def value(self) -> Optional[float]:
        """The quantity in :attr:`unit`; None for a heartbeat series (see :attr:`beats`)."""
        return self.raw.get("value")

    @property
    def unit(self) -> Optional[str]:
        return self.raw.get("unit")

    @property
    def beats(self) -> Optional[List[float]]:
        """A heartbeat series' beat times, seconds since :attr:`start`."""
        return self.raw.get("beats")

    @property
    def device(self) -> Device:
        return Device(self.raw.get("device") or {})


class Workout(StoredObject):
    """A saved workout (HKWorkout): what ``workout.end`` stored."""

    __slots__ = ()

    @property
    def session_id(self) -> Optional[str]:
        return self.raw.get("sessionID")

    @property
    def activity_type(self) -> str:
        return str(self.raw.get("activityType", "other"))

    @property
    def duration(self) -> Optional[float]:
        """Seconds, pauses excluded (``summary.elapsedTime``)."""
        return self.summary.get("elapsedTime")

    @property
    def summary(self) -> Dict[str, Any]:
        return object_member(self.raw, "summary")

    @property
    def events(self) -> List[JSONObject]:
        return list_member(self.raw, "events")

    @property
    def laps(self) -> List[JSONObject]:
        return list_member(self.raw, "laps")


def stored_object(raw: JSONObject) -> StoredObject:
    return Workout(raw) if raw.get("type") == "workout" else Sample(raw)


class DeletedObject:
    """A deletion (HKDeletedObject); :attr:`anchor` is the tombstone's anchor."""

    __slots__ = ("uuid", "anchor", "type")

    def __init__(self, raw: JSONObject) -> None:
        self.uuid: str = raw["uuid"]
        self.anchor: int = raw["anchor"]
        self.type: str = raw.get("type", "")

    def __repr__(self) -> str:
        return f"DeletedObject({self.uuid!r}, anchor={self.anchor})"


class AnchoredBatch:
    """One result of an anchored query: what was added and deleted after the previous
    anchor, and the anchor to save and continue from (``newAnchor``)."""

    __slots__ = ("added", "deleted", "anchor")

    def __init__(self, added: List[StoredObject], deleted: List[DeletedObject], anchor: int) -> None:
        self.added = added
        self.deleted = deleted
        self.anchor = anchor

    @property
    def samples(self) -> List[Sample]:
        return [o for o in self.added if isinstance(o, Sample)]

    @property
    def workouts(self) -> List[Workout]:
        return [o for o in self.added if isinstance(o, Workout)]

    def __repr__(self) -> str:
        return f"AnchoredBatch(added={len(self.added)}, deleted={len(self.deleted)}, anchor={self.anchor})"


class SampleQueryResult(Sequence[Sample]):
    """``samples.query``: the samples, and whether the reply was cut below the size limit."""

    def __init__(self, samples: List[Sample], truncated: bool) -> None:
        self.samples = samples
        self.truncated = truncated

    def __getitem__(self, index: Any) -> Any:
        return self.samples[index]

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self.samples)


class Statistics:
    """HKStatistics: one interval's figures. An option with no value (an empty interval of a
    collection) is None; a figure that was not asked for raises KeyError."""

    __slots__ = ("raw",)

    def __init__(self, raw: JSONObject) -> None:
        self.raw = raw

    @property
    def start(self) -> datetime:
        return parse_time(self.raw["start"])

    @property
    def end(self) -> datetime:
        return parse_time(self.raw["end"])

    @property
    def count(self) -> int:
        return int(self.raw.get("count", 0))

    def _figure(self, name: str) -> Optional[float]:
        if name not in self.raw:
            raise KeyError(f"{name} was not among the statistics options asked for")
        value = self.raw[name]
        return None if value is None else float(value)

    @property
    def average(self) -> Optional[float]:
        return self._figure("average")

    @property
    def minimum(self) -> Optional[float]:
        return self._figure("minimum")

    @property
    def maximum(self) -> Optional[float]:
        return self._figure("maximum")

    @property
    def sum(self) -> Optional[float]:
        return self._figure("sum")

    @property
    def most_recent(self) -> Optional[float]:
        return self._figure("mostRecent")

    @property
    def by_source(self) -> Dict[str, "Statistics"]:
        """Device id → that device's figures (``separate_by_source=True``)."""
        sources = self.raw.get("bySource") or {}
        return {device: Statistics(dict(figures, start=self.raw.get("start"), end=self.raw.get("end")))
                for device, figures in sources.items()}

    def __repr__(self) -> str:
        return f"Statistics({self.raw!r})"


class StatisticsCollection(Sequence[Statistics]):
    """HKStatisticsCollection: every interval, in order, gathered over as many requests as
    strapd's reply size needed."""

    def __init__(self, type: str, unit: Optional[str], time_zone: Optional[str],
                 statistics: List[Statistics]) -> None:
        self.type = type
        self.unit = unit
        self.time_zone = time_zone
        self.statistics = statistics

    def __getitem__(self, index: Any) -> Any:
        return self.statistics[index]

    def __len__(self) -> int:
        return len(self.statistics)

    def __iter__(self) -> Iterator[Statistics]:
        return iter(self.statistics)

    def statistics_for(self, when: datetime) -> Optional[Statistics]:
        """The interval containing ``when`` (HKStatisticsCollection.statistics(for:))."""
        for s in self.statistics:
            if s.start <= when < s.end:
                return s
        return None


class LiveEvent:
    """One event of ``live.subscribe``: ``sample`` (:attr:`sample`), ``device``, ``link`` or
    ``dropped`` (``data["count"]`` events missed while this client did not read)."""

    __slots__ = ("kind", "data")

    def __init__(self, kind: str, data: JSONObject) -> None:
        self.kind = kind
        self.data = data

    @property
    def sample(self) -> Optional[Sample]:
        return Sample(self.data) if self.kind == "sample" else None

    def __repr__(self) -> str:
        return f"LiveEvent({self.kind!r}, {self.data!r})"


class WorkoutEvent:
    """One event of a followed workout session (``workout.live``): ``state`` (:attr:`from_state`,
    :attr:`to_state`), ``event`` (a lap or marker), ``message``, ``statistics``, ``saved``
    (:attr:`workout`), ``discarded`` or ``dropped``."""

    __slots__ = ("kind", "data")

    def __init__(self, kind: str, data: JSONObject) -> None:
        self.kind = kind
        self.data = data

    @property
    def from_state(self) -> Optional[str]:
        return self.data.get("from") if self.kind == "state" else None

    @property
    def to_state(self) -> Optional[str]:
        # workout.live says `to`; workout.watch says `state` (every watch event carries it).
        return self.data.get("to", self.data.get("state")) if self.kind == "state" else None

    @property
    def time(self) -> Optional[datetime]:
        text = self.data.get("time")
        return parse_time(text) if isinstance(text, str) else None

    @property
    def workout(self) -> Optional[Workout]:
        raw = self.data.get("workout")
        return Workout(raw) if self.kind == "saved" and isinstance(raw, dict) else None

    def __repr__(self) -> str:
        return f"WorkoutEvent({self.kind!r}, {self.data!r})"


class MaximumHeartRate:
    """The athlete's maximum heart rate; :attr:`estimated` when it came from the date of birth."""

    __slots__ = ("value", "estimated", "formula")

    def __init__(self, raw: Mapping[str, Any]) -> None:
        self.value = float(raw["value"])
        self.estimated = bool(raw.get("estimated", False))
        self.formula: Optional[str] = raw.get("formula")

    def __repr__(self) -> str:
        return f"MaximumHeartRate({self.value}, estimated={self.estimated})"


def interval_parameter(interval: Union[timedelta, Mapping[str, int]]) -> Dict[str, int]:
    """A collection interval: ``{"hours": 1}`` as the protocol writes it, or a timedelta of
    whole days, hours or minutes (calendar months and weeks need the mapping form)."""
    if isinstance(interval, timedelta):
        seconds = int(interval.total_seconds())
        if seconds <= 0 or seconds % 60 or interval.microseconds:
            raise ValueError(f"interval {interval} is not a positive whole number of minutes")
        for unit, size in (("days", 86400), ("hours", 3600), ("minutes", 60)):
            if seconds % size == 0:
                return {unit: seconds // size}
    if not isinstance(interval, Mapping) or len(interval) != 1:
        raise ValueError(f"interval must be one of minutes/hours/days/weeks/months, got {interval!r}")
    return dict(interval)


def parse_date(text: str) -> date:
    return date.fromisoformat(text)

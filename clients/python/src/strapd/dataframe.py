"""Samples as a pandas DataFrame. pandas is optional: imported only when asked for."""

from __future__ import annotations

import importlib
from typing import Any, Iterable

from .models import StoredObject

_COLUMNS = ("uuid", "anchor", "type", "value", "unit", "start", "end", "device", "metadata")


def to_dataframe(objects: Iterable[StoredObject]) -> Any:
    """One row per sample: uuid, anchor, type, value, unit, start and end (UTC timestamps),
    device (its id) and metadata (a dict). Workouts get the same columns, value and unit
    empty. Raises ImportError naming the fix when pandas is not installed."""
    try:
        pandas = importlib.import_module("pandas")
    except ImportError as e:
        raise ImportError("strapd.to_dataframe needs pandas, which is not installed: "
                          "pip install pandas (or pip install 'strapd[pandas]')") from e
    rows = []
    for o in objects:
        raw = o.raw
        device = raw.get("device")
        rows.append((raw.get("uuid"), raw.get("anchor"), raw.get("type"), raw.get("value"),
                     raw.get("unit"), raw.get("start"), raw.get("end"),
                     device.get("id") if isinstance(device, dict) else None, raw.get("metadata") or {}))
    frame = pandas.DataFrame.from_records(rows, columns=list(_COLUMNS))
    for column in ("start", "end"):
        frame[column] = pandas.to_datetime(frame[column], utc=True)
    return frame

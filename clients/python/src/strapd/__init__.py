"""strapd: the Python client of strapd's unix-socket protocol (docs/protocol.md).

``Store`` is the asyncio client (one connection, pipelined requests); ``connect()`` returns
its blocking twin. Names follow HealthKit's: anchored queries, statistics collections,
workout sessions, characteristics. Standard library only; pandas for ``to_dataframe``.
"""

from .dataframe import to_dataframe
from .errors import (AnchorAhead, AnchorExpired, BadRequest, Busy, ConnectionClosed, DaemonStopping,
                     Internal, InvalidOption, InvalidTransition, NoData, NotAuthorized, NotFound,
                     ProtocolError, StrapdError, Unavailable, UnknownOp)
from .models import (SAMPLE_TYPES, AnchoredBatch, DeletedObject, Device, LiveEvent, MaximumHeartRate,
                     Sample, SampleQueryResult, Statistics, StatisticsCollection, StoredObject,
                     Workout, WorkoutEvent)
from .store import DEFAULT_SOCKET, Store, default_socket
from .streams import EventStream
from .sync import Client, SyncStream, SyncTrainers, SyncWorkoutSession, connect
from .trainer import Trainer, Trainers
from .workout import WorkoutList, WorkoutSession, WorkoutSnapshot

__version__ = "0.1.0"

__all__ = [
    "AnchorAhead", "AnchorExpired", "AnchoredBatch", "BadRequest", "Busy", "Client",
    "ConnectionClosed", "DEFAULT_SOCKET", "DaemonStopping", "DeletedObject", "Device",
    "EventStream", "Internal", "InvalidOption", "InvalidTransition", "LiveEvent",
    "MaximumHeartRate", "NoData", "NotAuthorized", "NotFound", "ProtocolError", "SAMPLE_TYPES",
    "Sample", "SampleQueryResult", "Statistics", "StatisticsCollection", "Store", "StoredObject",
    "StrapdError", "SyncStream", "SyncTrainers", "SyncWorkoutSession", "Trainer", "Trainers", "Unavailable", "UnknownOp", "Workout",
    "WorkoutEvent", "WorkoutList", "WorkoutSession", "WorkoutSnapshot", "connect",
    "default_socket", "to_dataframe", "__version__",
]

"""A real ``strapd --simulate`` per test module (or per test, when a test restarts it).

Started as Tests/StrapDaemonTests/DaemonProcessTests.swift starts it: a temporary state
directory and socket, no socket group. ``STRAPD_BIN`` names the binary; the default is the
debug build of this checkout.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Awaitable, Dict, Iterator, List, Optional, TypeVar

import pytest

REPO = Path(__file__).resolve().parents[3]
T = TypeVar("T")


def run(awaitable: Awaitable[T], timeout: float = 60) -> T:
    """Runs a test's coroutine on a loop of its own, bounded so a lost reply fails, not hangs."""
    async def bounded() -> T:
        return await asyncio.wait_for(awaitable, timeout)
    return asyncio.run(bounded())


def strapd_binary() -> str:
    return os.environ.get("STRAPD_BIN") or str(REPO / ".build" / "debug" / "strapd")


class Daemon:
    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="strapd-py-")
        self.socket = os.path.join(self.directory, "s.sock")
        self.log_path = os.path.join(self.directory, "strapd.log")
        self.process: Optional[subprocess.Popen[bytes]] = None

    def start(self, arguments: List[str]) -> None:
        binary = strapd_binary()
        if not os.access(binary, os.X_OK):
            pytest.fail(f"no strapd at {binary}: build it (swift build) or set STRAPD_BIN")
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [binary, "--state-dir", os.path.join(self.directory, "state"), "--socket", self.socket,
                 "--set", "daemon.socket_group=", "--log-level", "warning", *arguments],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
        # A killed daemon leaves its socket behind: ready once a status call is answered.
        deadline = time.monotonic() + 30
        while True:
            try:
                self.call({"id": 0, "op": "status"})
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"strapd did not start; its log:\n{self.log()}") from None
                time.sleep(0.02)

    def call(self, request: Dict[str, Any]) -> Dict[str, Any]:
        """One request on a connection of its own, without the client under test."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(10)
            s.connect(self.socket)
            s.sendall(json.dumps(request).encode() + b"\n")
            data = b""
            while not data.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    raise OSError("closed")
                data += chunk
        reply = json.loads(data)
        assert isinstance(reply, dict)
        return reply

    def live_subscribers(self) -> int:
        return int(self.call({"id": 0, "op": "status"})["result"]["liveSubscribers"])

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None:
            return
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise
        self.process = None

    def log(self) -> str:
        try:
            return Path(self.log_path).read_text(errors="replace")
        except OSError:
            return ""

    def remove(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture(autouse=True)
def bounded_test() -> Iterator[None]:
    """A blocking call that never returns fails its test after two minutes instead of hanging."""
    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError("test still running after 120 s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def daemon() -> Iterator[Daemon]:
    """strapd simulating a heart-rate strap, a speed/cadence sensor and a foot pod."""
    d = Daemon()
    d.start(["--simulate=3"])
    yield d
    d.remove()


@pytest.fixture
def fresh_daemon() -> Iterator[Daemon]:
    """A daemon of the test's own, not started: the test chooses its arguments."""
    d = Daemon()
    yield d
    d.remove()

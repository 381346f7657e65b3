"""Catch-up rate of the Python client (stdlib json): samples per second read from a store.

Fills a throwaway store with simulated sensors at many times real time, restarts strapd on
it with one sensor at real time, then reads everything from anchor 0 three ways:

- ``raw``: a blocking socket, ``samples.anchored`` pages parsed with ``json.loads``, no objects
  (the floor of any stdlib client: strapd's paging plus JSON);
- ``follow``: ``Store.anchored(follow=True)``, the client's catch-up path;
- ``pages``: ``Store.anchored()`` without follow, one page request at a time.

    python bench/catchup.py [--samples 200000] [--strapd .build/release/strapd]
    python bench/catchup.py --socket PATH --json   # follow only, against a running strapd

``strap-bench client`` runs the second form against its own daemon, beside StrapKit.

Prints one line per method: the rate by the wall clock (what a reader sees, strapd's work
included) and by this process's CPU time (the client's own cost, less sensitive to other
load on the machine); medians of the rounds, then each round. docs/client.md keeps them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import strapd  # noqa: E402


def default_binary() -> str:
    release = REPO / ".build" / "release" / "strapd"
    return str(release if release.exists() else REPO / ".build" / "debug" / "strapd")


def status(path: str) -> Dict[str, Any]:
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(10)
        s.connect(path)
        s.sendall(b'{"id":0,"op":"status"}\n')
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                raise OSError("closed")
            data += chunk
    result = json.loads(data)["result"]
    assert isinstance(result, dict)
    return result


def start(binary: str, directory: str, arguments: List[str]) -> "subprocess.Popen[bytes]":
    sock = os.path.join(directory, "s.sock")
    process = subprocess.Popen([binary, "--state-dir", os.path.join(directory, "state"), "--socket", sock,
                                "--set", "daemon.socket_group=", "--log-level", "warning", *arguments],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while True:
        try:
            status(sock)
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("strapd did not start") from None
            time.sleep(0.02)


def raw(path: str, total: int) -> Tuple[float, float]:
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(path)
        reader = s.makefile("rb")
        anchor, count, began, cpu = 0, 0, time.perf_counter(), time.process_time()
        while count < total:
            s.sendall(b'{"id":1,"op":"samples.anchored","anchor":%d,"limit":100000}\n' % anchor)
            result = json.loads(reader.readline())["result"]
            if result["anchor"] == anchor:
                break
            count += len(result["added"])
            anchor = result["anchor"]
        return count / (time.perf_counter() - began), count / (time.process_time() - cpu)


async def follow(path: str, total: int) -> Tuple[float, float]:
    async with strapd.Store(path) as store:
        count, began, cpu = 0, time.perf_counter(), time.process_time()
        async for batch in store.anchored(anchor=0, follow=True, limit=100000):
            count += len(batch.added)
            if count >= total:
                break
        return count / (time.perf_counter() - began), count / (time.process_time() - cpu)


async def pages(path: str, total: int) -> Tuple[float, float]:
    async with strapd.Store(path) as store:
        count, began, cpu = 0, time.perf_counter(), time.process_time()
        async for batch in store.anchored(anchor=0, limit=100000):
            count += len(batch.added)
            if count >= total:
                break
        return count / (time.perf_counter() - began), count / (time.process_time() - cpu)


def main(argv: Optional[List[str]] = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=200_000)
    parser.add_argument("--strapd", default=os.environ.get("STRAPD_BIN") or default_binary())
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--socket", help="a running strapd's socket: no store is filled, only follow is measured")
    parser.add_argument("--json", action="store_true", help='one line {"follow": [samples/s per round], "cpu": [...]}')
    args = parser.parse_args(argv)
    if args.socket:
        runs = [asyncio.run(follow(args.socket, args.samples)) for _ in range(args.rounds)]
        if args.json:
            print(json.dumps({"follow": [r[0] for r in runs], "cpu": [r[1] for r in runs]}))
        else:
            print(f"follow {sorted(r[0] for r in runs)[len(runs) // 2] / 1000:5.0f} k samples/s")
        return
    directory = tempfile.mkdtemp(prefix="strapd-pybench-")
    sock = os.path.join(directory, "s.sock")
    try:
        filler = start(args.strapd, directory, ["--simulate=10", "--simulate-speed", "2000"])
        while status(sock)["store"]["latestAnchor"] < args.samples + 1000:
            time.sleep(0.2)
        filler.terminate()
        filler.wait(60)
        daemon = start(args.strapd, directory, ["--simulate=1"])
        try:
            stored = status(sock)["store"]["latestAnchor"]
            print(f"store: {stored} items; strapd {args.strapd}; Python {sys.version.split()[0]}")
            total: int = args.samples
            methods: List[Tuple[str, Callable[[], Tuple[float, float]]]] = [
                ("raw", lambda: raw(sock, total)),
                ("follow", lambda: asyncio.run(follow(sock, total))),
                ("pages", lambda: asyncio.run(pages(sock, total)))]
            for name, measure in methods:
                runs = [measure() for _ in range(args.rounds)]
                wall = sorted(r[0] for r in runs)
                cpu = sorted(r[1] for r in runs)
                middle = len(runs) // 2
                print(f"{name:7} {wall[middle] / 1000:5.0f} k samples/s ({', '.join(f'{r / 1000:.0f}' for r in wall)}); "
                      f"per client CPU second {cpu[middle] / 1000:5.0f} k ({', '.join(f'{r / 1000:.0f}' for r in cpu)})")
        finally:
            daemon.terminate()
            daemon.wait(60)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()

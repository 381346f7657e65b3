#!/usr/bin/python3
"""Log heart rate, cycling (CSC) and running (RSC) notifications of BLE sensors to SQLite.

The kind of script people run today instead of strapd, written plainly on bleak: find each
sensor, connect, subscribe to every measurement characteristic it has, and insert + commit
one row per notification. The lab's peer-bleak scenario measures it beside strapd
(docs/benchmarks.md, "strapd beside a bleak logger").

  bleak_logger.py --db log.sqlite [--adapter hci0] ADDRESS...

Runs until SIGINT/SIGTERM. Lab-only extras, outside the user's code path: --ready-file (written
once every sensor is subscribed) and --latency-log (each notification's CLOCK_MONOTONIC time
just after its commit, kept in memory and written at exit).
"""
import argparse
import asyncio
import json
import signal
import sqlite3
import time

from bleak import BleakClient, BleakScanner

MEASUREMENTS = {
    "00002a37-0000-1000-8000-00805f9b34fb": "heart_rate",
    "00002a5b-0000-1000-8000-00805f9b34fb": "csc",
    "00002a53-0000-1000-8000-00805f9b34fb": "rsc",
}

latency = []   # lab hook: (address, uuid, hex, monotonic time after commit)


def open_db(path):
    db = sqlite3.connect(path)
    db.execute("""CREATE TABLE IF NOT EXISTS notifications (
                    id INTEGER PRIMARY KEY,
                    received_at REAL NOT NULL,
                    address TEXT NOT NULL,
                    characteristic TEXT NOT NULL,
                    data BLOB NOT NULL)""")
    db.commit()
    return db


def handler(db, address, uuid, record_latency):
    def on_notification(sender, data: bytearray):
        db.execute("INSERT INTO notifications (received_at, address, characteristic, data) VALUES (?, ?, ?, ?)",
                   (time.time(), address, uuid, bytes(data)))
        db.commit()
        if record_latency:
            latency.append((address, uuid[4:8], data.hex(), time.monotonic()))
    return on_notification


async def connect(address, adapter, db, record_latency):
    device = await BleakScanner.find_device_by_address(address, timeout=60, bluez={"adapter": adapter})
    if device is None:
        raise SystemExit("sensor %s not found" % address)
    client = BleakClient(device, bluez={"adapter": adapter})
    await client.connect()
    names = []
    for service in client.services:
        for char in service.characteristics:
            if char.uuid in MEASUREMENTS and "notify" in char.properties:
                await client.start_notify(char, handler(db, address, char.uuid, record_latency))
                names.append(MEASUREMENTS[char.uuid])
    print("%s: connected, logging %s" % (address, ", ".join(names)), flush=True)
    return client


async def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("addresses", nargs="+")
    ap.add_argument("--db", default="sensors.sqlite")
    ap.add_argument("--adapter", default="hci0")
    ap.add_argument("--ready-file")
    ap.add_argument("--latency-log")
    args = ap.parse_args()

    db = open_db(args.db)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    clients = []
    for address in args.addresses:
        clients.append(await connect(address, args.adapter, db, args.latency_log is not None))
    if args.ready_file:
        with open(args.ready_file, "w") as f:
            f.write("subscribed\n")

    await stop.wait()
    for client in clients:
        await client.disconnect()
    db.close()
    if args.latency_log:
        with open(args.latency_log, "w") as f:
            for address, uuid, data, t in latency:
                f.write(json.dumps({"device": address, "uuid": uuid, "hex": data, "t": t}) + "\n")


if __name__ == "__main__":
    asyncio.run(main())

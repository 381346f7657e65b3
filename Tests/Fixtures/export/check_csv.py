#!/usr/bin/env python3
"""Reads a strapd CSV export with the standard library's csv module (RFC 4180 dialect
detection off: the file must parse as plain comma-separated text) and checks what it read
against the expectations the Swift test wrote.

usage: check_csv.py FILE.csv EXPECT.json

EXPECT.json (every key optional):
  columns   the header, in order
  rows      the number of data rows
  laps      the distinct lap numbers, in order of appearance
  paused    the number of rows flagged paused
  hr_rows   the number of rows with a heart rate
Every row must have as many fields as the header; `time` must parse as an RFC 3339 UTC time
one second after the previous row's; `elapsed_s` must count from 0; every other non-empty
cell must be a number (rr_ms: numbers separated by spaces).
Prints a JSON summary; exits 1 listing every mismatch on stderr.
"""
import csv
import datetime
import json
import sys


def main():
    path, expect_path = sys.argv[1], sys.argv[2]
    with open(expect_path) as f:
        expect = json.load(f)
    problems = []
    with open(path, newline="") as f:
        reader = csv.reader(f, strict=True)
        header = next(reader)
        rows = list(reader)
    previous = None
    laps, paused, hr_rows = [], 0, 0
    for i, row in enumerate(rows, start=2):
        if len(row) != len(header):
            problems.append(f"line {i}: {len(row)} fields, header has {len(header)}")
            continue
        cell = dict(zip(header, row))
        t = datetime.datetime.fromisoformat(cell["time"].replace("Z", "+00:00"))
        if t.utcoffset() != datetime.timedelta(0):
            problems.append(f"line {i}: time {cell['time']} is not UTC")
        if previous is not None and t - previous != datetime.timedelta(seconds=1):
            problems.append(f"line {i}: time {cell['time']} is not one second after the previous row")
        previous = t
        if int(cell["elapsed_s"]) != i - 2:
            problems.append(f"line {i}: elapsed_s {cell['elapsed_s']}, expected {i - 2}")
        for name, value in cell.items():
            if name == "time" or value == "":
                continue
            try:
                [float(v) for v in value.split(" ")] if name == "rr_ms" else float(value)
            except ValueError:
                problems.append(f"line {i}: {name} {value!r} is not a number")
        if cell["lap"] and (not laps or laps[-1] != int(cell["lap"])):
            laps.append(int(cell["lap"]))
        paused += cell["paused"] == "1"
        hr_rows += cell["heart_rate_bpm"] != ""
    summary = {"columns": header, "rows": len(rows), "laps": laps, "paused": paused, "hr_rows": hr_rows}
    for key, want in expect.items():
        if summary.get(key) != want:
            problems.append(f"{key}: read {summary.get(key)!r}, expected {want!r}")
    print(json.dumps(summary))
    if problems:
        print("\n".join(problems[:50]), file=sys.stderr)
        sys.exit(1)


main()

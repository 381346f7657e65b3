#!/usr/bin/env python3
"""Reads a strapd FIT export with Garmin's own FIT SDK (garmin-fit-sdk) and with fitdecode,
and compares what they read with the expectations the Swift test wrote.

usage: check_fit.py FILE.fit EXPECT.json

EXPECT.json (every key optional):
  records        [[unix_seconds, heart_rate_or_null], ...]   every record, in order
  record_count   number of records
  distance_last  the last record's distance (m)
  laps           [{start, timestamp, elapsed, timer, distance, calories, avg_hr, max_hr, min_hr}, ...]
  session        {sport, sub_sport, start, elapsed, timer, distance, calories, avg_hr, max_hr, num_laps}
  hrv_ms         every RR interval in order (ms, integers)
  events         [[event, event_type, unix_seconds], ...]
  sensors        number of device_info messages for sensors (device_index >= 1)
  local_offset   activity.local_timestamp - activity.timestamp (s)
  record_power   [[unix_seconds, power, accumulated_power, left_right_balance], ...] every record,
                 null where the record has no such field (both readers must read the same)
Power figures in laps and session (optional keys): avg_power, max_power, np (normalized_power),
work (total_work, J); session only: tss, if (intensity_factor), ftp (threshold_power),
power_zones (time_in_power_zone, s).
A key whose expected value is null must be absent (invalid) in the file.
Prints a JSON summary on stdout; exits 1 listing every mismatch on stderr.
"""
import json
import sys
import sys as _sys

from garmin_fit_sdk import Decoder, Stream
import fitdecode

FIT_EPOCH = 631065600
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def close(a, b, tol):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= tol


def sdk_read(path):
    integrity = Decoder(Stream.from_file(path))
    check(integrity.is_fit(), "garmin_fit_sdk: is_fit() is false")
    check(integrity.check_integrity(), "garmin_fit_sdk: check_integrity() is false (header/file CRC or size)")
    decoder = Decoder(Stream.from_file(path))
    messages, errors = decoder.read(convert_datetimes_to_dates=False, merge_heart_rates=False)
    check(errors == [], f"garmin_fit_sdk: decode errors {errors}")
    return messages


def fitdecode_read(path):
    frames = {"record": [], "lap": [], "session": [], "hrv": [], "crc_frames": 0}
    try:
        with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE,
                                 error_handling=fitdecode.ErrorHandling.RAISE) as fit:
            for frame in fit:
                if frame.frame_type == fitdecode.FIT_FRAME_CRC:
                    frames["crc_frames"] += 1
                    check(frame.matched, "fitdecode: file CRC does not match")
                elif frame.frame_type == fitdecode.FIT_FRAME_DATA and frame.name in frames:
                    frames[frame.name].append({f.name: f.value for f in frame.fields})
    except Exception as e:  # any complaint of the reader is a failure
        problems.append(f"fitdecode: {type(e).__name__}: {e}")
    check(frames["crc_frames"] == 1, f"fitdecode: {frames['crc_frames']} CRC frames, expected 1")
    return frames


def unix(raw):
    return None if raw is None else raw + FIT_EPOCH


def compare_segment(kind, got, want):
    pairs = [("start", "start_time", 0), ("timestamp", "timestamp", 0), ("elapsed", "total_elapsed_time", 0.0015),
             ("timer", "total_timer_time", 0.0015), ("distance", "total_distance", 0.015),
             ("calories", "total_calories", 0), ("avg_hr", "avg_heart_rate", 0), ("max_hr", "max_heart_rate", 0),
             ("min_hr", "min_heart_rate", 0), ("num_laps", "num_laps", 0), ("sport", "sport", 0),
             ("sub_sport", "sub_sport", 0), ("avg_speed", "avg_speed", 0.0015), ("avg_cadence", "avg_cadence", 0),
             ("avg_power", "avg_power", 0), ("max_power", "max_power", 0), ("np", "normalized_power", 0),
             ("work", "total_work", 0), ("tss", "training_stress_score", 0.05), ("if", "intensity_factor", 0.0005),
             ("ftp", "threshold_power", 0)]
    for key, field, tol in pairs:
        if key not in want:
            continue
        value = got.get(field)
        if field in ("start_time", "timestamp"):
            value = unix(value)
        if isinstance(want[key], str) or isinstance(value, str):
            check(value == want[key], f"{kind} {field}: file {value!r}, expected {want[key]!r}")
        else:
            check(close(value, want[key], tol), f"{kind} {field}: file {value!r}, expected {want[key]!r}")


def main(path, expect_path):
    with open(expect_path) as f:
        expect = json.load(f)
    sdk = sdk_read(path)
    fd = fitdecode_read(path)
    records = sdk.get("record_mesgs", [])
    laps = sdk.get("lap_mesgs", [])
    sessions = sdk.get("session_mesgs", [])
    activities = sdk.get("activity_mesgs", [])
    hrv = [v for m in sdk.get("hrv_mesgs", []) for v in m.get("time", []) if v is not None and v < 65.535]

    # Both readers read the same records and laps.
    check(len(fd["record"]) == len(records), f"fitdecode read {len(fd['record'])} records, the SDK {len(records)}")
    power_fields = ("power", "accumulated_power", "left_right_balance")
    for a, b in zip(records, fd["record"]):
        if a.get("heart_rate") != b.get("heart_rate") or any(a.get(k) != b.get(k) for k in power_fields):
            problems.append(f"readers disagree on a record: {a} / {b}")
            break
    check(len(fd["lap"]) == len(laps), "readers disagree on the lap count")
    check(len(sdk.get("file_id_mesgs", [])) == 1 and sdk["file_id_mesgs"][0].get("type") == "activity",
          "file_id: not exactly one activity file_id")
    check(len(sessions) == 1, f"{len(sessions)} session messages")
    check(len(activities) == 1, f"{len(activities)} activity messages")

    if "records" in expect:
        got = [[unix(r.get("timestamp")), r.get("heart_rate")] for r in records]
        want = expect["records"]
        check(len(got) == len(want), f"{len(got)} records, expected {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                problems.append(f"record {i}: file {g}, expected {w}")
                break
    if "record_count" in expect:
        check(len(records) == expect["record_count"], f"{len(records)} records, expected {expect['record_count']}")
    times = [r.get("timestamp") for r in records]
    check(all(a < b for a, b in zip(times, times[1:])), "record timestamps do not increase")
    if "record_power" in expect:
        got = [[unix(r.get("timestamp"))] + [r.get(k) for k in power_fields] for r in records]
        want = expect["record_power"]
        check(len(got) == len(want), f"{len(got)} records, expected {len(want)} (power)")
        for i, (g, w) in enumerate(zip(got, want)):
            if g != w:
                problems.append(f"record {i} [time, power, accumulated_power, left_right_balance]: file {g}, expected {w}")
                break
    if "distance_last" in expect and records:
        check(close(records[-1].get("distance"), expect["distance_last"], 0.015),
              f"last record distance {records[-1].get('distance')}, expected {expect['distance_last']}")
    if "laps" in expect:
        check(len(laps) == len(expect["laps"]), f"{len(laps)} laps, expected {len(expect['laps'])}")
        for i, (g, w) in enumerate(zip(laps, expect["laps"])):
            compare_segment(f"lap {i}", g, w)
    if "session" in expect and sessions:
        compare_segment("session", sessions[0], expect["session"])
        if "zones" in expect["session"]:
            got = sessions[0].get("time_in_hr_zone")
            want = expect["session"]["zones"]
            check(isinstance(got, (list, tuple)) and len(got) == len(want)
                  and all(close(g, w, 0.0015) for g, w in zip(got, want)),
                  f"session time_in_hr_zone: file {got!r}, expected {want!r}")
        if "power_zones" in expect["session"]:
            got = sessions[0].get("time_in_power_zone")
            want = expect["session"]["power_zones"]
            check(isinstance(got, (list, tuple)) and len(got) == len(want)
                  and all(close(g, w, 0.0015) for g, w in zip(got, want)),
                  f"session time_in_power_zone: file {got!r}, expected {want!r}")
        if activities:
            check(close(activities[0].get("total_timer_time"), expect["session"].get("timer"), 0.0015),
                  "activity total_timer_time differs from the session's")
    if "hrv_ms" in expect:
        got_ms = [round(v * 1000) for v in hrv]
        check(got_ms == expect["hrv_ms"], f"hrv: {len(got_ms)} intervals, expected {len(expect['hrv_ms'])}; "
              f"first difference at {next((i for i, (a, b) in enumerate(zip(got_ms, expect['hrv_ms'])) if a != b), None)}")
    if "events" in expect:
        got = [[e.get("event"), e.get("event_type"), unix(e.get("timestamp"))] for e in sdk.get("event_mesgs", [])]
        check(got == expect["events"], f"events {got}, expected {expect['events']}")
    if "sensors" in expect:
        sensors = [d for d in sdk.get("device_info_mesgs", []) if d.get("device_index") != "creator"]
        check(len(sensors) == expect["sensors"], f"{len(sensors)} sensor device_info, expected {expect['sensors']}")
    if "local_offset" in expect and activities:
        a = activities[0]
        check(a.get("local_timestamp") - a.get("timestamp") == expect["local_offset"], "activity local_timestamp offset")

    summary = {"records": len(records), "laps": len(laps), "hrv_values": len(hrv),
               "events": len(sdk.get("event_mesgs", [])), "device_info": len(sdk.get("device_info_mesgs", [])),
               "fitdecode_records": len(fd["record"])}
    print(json.dumps(summary))
    if problems:
        print("\n".join(problems), file=_sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

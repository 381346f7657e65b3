#!/usr/bin/env python3
"""Reads a strapd TCX export with tcxreader and with the standard library's XML parser, and
compares what they read with the expectations the Swift test wrote.

usage: check_tcx.py FILE.tcx EXPECT.json

EXPECT.json (every key optional):
  sport          "Running" | "Biking" | "Other"
  trackpoints    [[unix_seconds, heart_rate_or_null], ...]   every trackpoint, in order
  trackpoint_count
  distance       total distance (sum of the laps' DistanceMeters, what tcxreader reports)
  calories       total calories
  hr_max         the largest trackpoint heart rate
  laps           [{start (RFC 3339 text), total_time_s, distance, calories, avg_hr, max_hr, trackpoints}, ...]
  notes          the Activity's Notes text (after XML unescaping)
  watts          every trackpoint's TPX Watts, in order (null where it has none)
  lap_watts      [[AvgWatts, MaxWatts] or null, ...] each lap's LX power
Also checks the TrainingCenterDatabase v2 element order of Lap and Trackpoint children.
Prints a JSON summary; exits 1 listing every mismatch on stderr.
"""
import datetime
import json
import sys
import xml.etree.ElementTree as ET

from tcxreader.tcxreader import TCXReader

NS = "{http://www.garmin.com/xmlschemas/TrainingCenterDatabase/v2}"
LAP_ORDER = ["TotalTimeSeconds", "DistanceMeters", "MaximumSpeed", "Calories", "AverageHeartRateBpm",
             "MaximumHeartRateBpm", "Intensity", "Cadence", "TriggerMethod", "Track", "Notes", "Extensions"]
LAP_REQUIRED = ["TotalTimeSeconds", "DistanceMeters", "Calories", "Intensity", "TriggerMethod"]
POINT_ORDER = ["Time", "Position", "AltitudeMeters", "DistanceMeters", "HeartRateBpm", "Cadence", "SensorState",
               "Extensions"]
ACTIVITY_ORDER = ["Id", "Lap", "Notes", "Training", "Creator", "Extensions"]
AX = "{http://www.garmin.com/xmlschemas/ActivityExtension/v2}"
TPX_ORDER = ["Speed", "RunCadence", "Watts", "Extensions"]
LX_ORDER = ["AvgSpeed", "MaxBikeCadence", "AvgRunCadence", "MaxRunCadence", "Steps", "AvgWatts", "MaxWatts", "Extensions"]
problems = []


def check(cond, what):
    if not cond:
        problems.append(what)


def local(tag):
    return tag[len(NS):] if tag.startswith(NS) else tag


def in_order(children, order, what):
    names = [local(c.tag) for c in children]
    ranks = [order.index(n) if n in order else -1 for n in names]
    check(-1 not in ranks, f"{what}: unknown element among {names}")
    check(ranks == sorted(ranks), f"{what}: elements out of schema order: {names}")
    return names


def unix(text):
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())


def main(path, expect_path):
    with open(expect_path) as f:
        expect = json.load(f)
    root = ET.parse(path).getroot()
    check(root.tag == NS + "TrainingCenterDatabase", f"root element {root.tag}")
    activities = root.findall(f"{NS}Activities/{NS}Activity")
    check(len(activities) == 1, f"{len(activities)} activities")
    activity = activities[0]
    in_order(list(activity), ACTIVITY_ORDER, "Activity")
    laps = activity.findall(f"{NS}Lap")
    points = []
    watts = []
    lap_watts = []
    for i, lap in enumerate(laps):
        for lx in lap.findall(f"{NS}Extensions/{AX}LX"):
            check([c.tag[len(AX):] for c in lx] == [n for n in LX_ORDER if lx.find(AX + n) is not None],
                  f"Lap {i}: LX elements out of schema order: {[c.tag for c in lx]}")
        avg_w, max_w = lap.find(f"{NS}Extensions/{AX}LX/{AX}AvgWatts"), lap.find(f"{NS}Extensions/{AX}LX/{AX}MaxWatts")
        lap_watts.append(None if avg_w is None else [int(avg_w.text), int(max_w.text) if max_w is not None else None])
        names = in_order(list(lap), LAP_ORDER, f"Lap {i}")
        for required in LAP_REQUIRED:
            check(required in names, f"Lap {i}: no {required}")
        for track in lap.findall(f"{NS}Track"):
            tps = track.findall(f"{NS}Trackpoint")
            check(len(tps) > 0, f"Lap {i}: an empty Track")
            for tp in tps:
                in_order(list(tp), POINT_ORDER, "Trackpoint")
                for tpx in tp.findall(f"{NS}Extensions/{AX}TPX"):
                    check([c.tag[len(AX):] for c in tpx] == [n for n in TPX_ORDER if tpx.find(AX + n) is not None],
                          f"TPX elements out of schema order: {[c.tag for c in tpx]}")
                w = tp.find(f"{NS}Extensions/{AX}TPX/{AX}Watts")
                watts.append(int(w.text) if w is not None else None)
                hr = tp.find(f"{NS}HeartRateBpm/{NS}Value")
                points.append([unix(tp.find(f"{NS}Time").text), int(hr.text) if hr is not None else None])

    exercise = TCXReader().read(path, only_gps=False)
    check(len(exercise.trackpoints) == len(points), f"tcxreader read {len(exercise.trackpoints)} trackpoints, XML has {len(points)}")
    check(exercise.activity_type == expect.get("sport", exercise.activity_type), f"sport {exercise.activity_type}")
    if "trackpoints" in expect:
        check(points == expect["trackpoints"], "trackpoints differ: " + next(
            (f"#{i}: file {a}, expected {b}" for i, (a, b) in enumerate(zip(points, expect["trackpoints"])) if a != b),
            f"{len(points)} in the file, {len(expect['trackpoints'])} expected"))
    if "trackpoint_count" in expect:
        check(len(points) == expect["trackpoint_count"], f"{len(points)} trackpoints, expected {expect['trackpoint_count']}")
    if "distance" in expect:
        check(abs(exercise.distance - expect["distance"]) <= 0.015 * max(1, len(laps)),
              f"tcxreader distance {exercise.distance}, expected {expect['distance']}")
    if "calories" in expect:
        check(abs(exercise.calories - expect["calories"]) <= len(laps), f"tcxreader calories {exercise.calories}, expected {expect['calories']}")
    if "hr_max" in expect:
        check(exercise.hr_max == expect["hr_max"], f"tcxreader hr_max {exercise.hr_max}, expected {expect['hr_max']}")
    # Every lap as written (the XML), against the expectations.
    written = []
    for xml_lap in laps:
        def number(path):
            node = xml_lap.find(path)
            return None if node is None else float(node.text)
        hrs = [int(v.text) for v in xml_lap.findall(f"{NS}Track/{NS}Trackpoint/{NS}HeartRateBpm/{NS}Value")]
        avg = number(f"{NS}AverageHeartRateBpm/{NS}Value")
        written.append({
            "start": xml_lap.get("StartTime"), "total_time_s": number(f"{NS}TotalTimeSeconds"),
            "distance": number(f"{NS}DistanceMeters"), "calories": int(number(f"{NS}Calories")),
            "avg_hr": None if avg is None else int(avg),
            "max_hr": None if xml_lap.find(f"{NS}MaximumHeartRateBpm") is None else int(number(f"{NS}MaximumHeartRateBpm/{NS}Value")),
            "trackpoints": len(xml_lap.findall(f"{NS}Track/{NS}Trackpoint")), "trackpoint_hrs": hrs,
        })
    if "laps" in expect:
        check(len(written) == len(expect["laps"]), f"{len(written)} laps, expected {len(expect['laps'])}")
        for i, (got, want) in enumerate(zip(written, expect["laps"])):
            for key, value in want.items():
                ok = abs(got[key] - value) <= 0.015 if isinstance(value, float) and got[key] is not None else got[key] == value
                check(ok, f"lap {i} {key}: file {got[key]!r}, expected {value!r}")
    # tcxreader keeps only laps with trackpoints; those must read as written.
    with_points = [w for w in written if w["trackpoints"] > 0]
    check(len(exercise.laps) == len(with_points), f"tcxreader read {len(exercise.laps)} laps, {len(with_points)} have trackpoints")
    for i, (lap, w) in enumerate(zip(exercise.laps, with_points)):
        check(abs(lap.distance - w["distance"]) <= 1e-9 and lap.calories == w["calories"],
              f"tcxreader lap {i}: distance {lap.distance} calories {lap.calories}, written {w['distance']} {w['calories']}")
        check(len(lap.trackpoints) == w["trackpoints"], f"tcxreader lap {i}: {len(lap.trackpoints)} trackpoints")
        if w["trackpoint_hrs"]:
            check(lap.hr_max == max(w["trackpoint_hrs"]), f"tcxreader lap {i}: hr_max {lap.hr_max}")
            # The lap's average is the mean of its per-second values, the trackpoints carry
            # them rounded: they agree to within rounding.
            check(w["avg_hr"] is not None and abs(lap.hr_avg - w["avg_hr"]) <= 0.5 + 1e-9,
                  f"lap {i}: AverageHeartRateBpm {w['avg_hr']} but tcxreader's trackpoint mean is {lap.hr_avg}")
    if "watts" in expect:
        check(watts == expect["watts"], "watts differ: " + next(
            (f"#{i}: file {a}, expected {b}" for i, (a, b) in enumerate(zip(watts, expect["watts"])) if a != b),
            f"{len(watts)} in the file, {len(expect['watts'])} expected"))
        # tcxreader reads the TPX extension into each trackpoint's tpx_ext.
        read = [tp.tpx_ext.get("Watts") if tp.tpx_ext else None for tp in exercise.trackpoints]
        check([None if v is None else int(v) for v in read] == watts, f"tcxreader watts differ from the XML's: {read[:5]}…")
    if "lap_watts" in expect:
        check(lap_watts == expect["lap_watts"], f"lap watts: file {lap_watts}, expected {expect['lap_watts']}")
    if "notes" in expect:
        notes = activity.find(f"{NS}Notes")
        check(notes is not None and notes.text == expect["notes"], f"Notes {None if notes is None else notes.text!r}")

    print(json.dumps({"trackpoints": len(points), "laps": len(laps), "distance": exercise.distance,
                      "calories": exercise.calories, "hr_max": exercise.hr_max}))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))

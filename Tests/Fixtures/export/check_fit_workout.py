#!/usr/bin/env python3
"""Reads a FIT workout file (file type 5) that strapd wrote with Garmin's own FIT SDK
(garmin-fit-sdk) and with fitdecode, checks both read it without errors and read the same
steps, and prints what they read as JSON for the Swift test to compare with the plan:

  {"file_type": "workout", "sport": ..., "name": ..., "num_valid_steps": n,
   "steps": [{"index", "name", "duration_type", "duration", "target_type", "target_value",
              "low", "high", "intensity"}, ...]}

with Garmin's SDK's names and scaled values (duration in s or m, low/high raw so offsets show).

usage: check_fit_workout.py FILE.fit
"""
import json
import sys

from garmin_fit_sdk import Decoder, Stream
import fitdecode

path = sys.argv[1]
problems = []

stream = Stream.from_file(path)
decoder = Decoder(stream)
if not decoder.is_fit():
    problems.append("Garmin SDK: not a FIT file")
if not decoder.check_integrity():
    problems.append("Garmin SDK: integrity check failed")
# The checks above read the stream through: read the messages from a fresh one.
decoder = Decoder(Stream.from_file(path))
messages, errors = decoder.read(expand_sub_fields=True, convert_types_to_strings=True, expand_components=True)
for e in errors:
    problems.append(f"Garmin SDK: {e}")

file_id = (messages.get("file_id_mesgs") or [{}])[0]
workout = (messages.get("workout_mesgs") or [{}])[0]
steps = []
for s in messages.get("workout_step_mesgs", []):
    dtype = s.get("duration_type")
    duration = s.get("duration_time", s.get("duration_distance", s.get("duration_step")))
    steps.append({
        "index": s.get("message_index"),
        "name": s.get("wkt_step_name"),
        "duration_type": dtype,
        "duration": duration,
        "target_type": s.get("target_type"),
        "target_value": s.get("target_value", s.get("target_hr_zone", s.get("repeat_steps"))),
        "low": s.get("custom_target_value_low", s.get("custom_target_power_low", s.get("custom_target_heart_rate_low", s.get("custom_target_cadence_low")))),
        "high": s.get("custom_target_value_high", s.get("custom_target_power_high", s.get("custom_target_heart_rate_high", s.get("custom_target_cadence_high")))),
        "intensity": s.get("intensity"),
    })

# fitdecode: the same file, the same number of steps and the same raw durations and targets.
fd_steps = []
with fitdecode.FitReader(path, check_crc=fitdecode.CrcCheck.RAISE) as reader:
    for frame in reader:
        if isinstance(frame, fitdecode.FitDataMessage) and frame.name == "workout_step":
            fd_steps.append((frame.get_raw_value("duration_type"), frame.get_raw_value("duration_value"),
                             frame.get_raw_value("target_type"), frame.get_raw_value("custom_target_value_low"),
                             frame.get_raw_value("custom_target_value_high")))
if len(fd_steps) != len(steps):
    problems.append(f"fitdecode read {len(fd_steps)} steps, Garmin SDK {len(steps)}")
if workout.get("num_valid_steps") != len(steps):
    problems.append(f"num_valid_steps {workout.get('num_valid_steps')} but {len(steps)} steps")

print(json.dumps({"file_type": file_id.get("type"), "sport": workout.get("sport"), "name": workout.get("wkt_name"),
                  "num_valid_steps": workout.get("num_valid_steps"), "steps": steps, "fitdecode_steps": len(fd_steps)},
                 default=str))
if problems:
    print("\n".join(problems), file=sys.stderr)
    sys.exit(1)

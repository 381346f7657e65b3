#!/usr/bin/env python3
"""Computes a ride's power figures with GoldenCheetah's sweatpy and compares them with strapd's.

usage: check_power.py INPUT.json

INPUT.json:
  watts  one power per second (what strapd analysed, already sanitized)
  ftp    functional threshold power, W
  ours   {"average", "maximum", "np", "if", "tss", "work_kj", "zones": [7 seconds],
          "curve": {"5": W, ...}} as strapd computed them
sweatpy's rolling mean, mean-max curve, zone table, relative intensity and stress score give
the reference. Normalized power is GoldenCheetah's (coggan_np): a 30 s window that starts
filled with zeros, so the series goes into sweatpy's rolling mean behind 29 zeros, which are
dropped again. Prints the reference as JSON; exits 1 when a figure differs by more than 1e-6
(relative) or a zone's seconds differ at all.
"""
import importlib.util
import json
import pathlib
import sys
import sysconfig

import numpy as np


def sweat_module(name):
    # By path: the package's __init__ imports modules whose dependencies are not installed.
    path = pathlib.Path(sysconfig.get_paths()["purelib"]) / "sweat" / "metrics" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"sweat_metrics_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


core, power = sweat_module("core"), sweat_module("power")
data = json.load(open(sys.argv[1]))
watts = np.asarray(data["watts"], dtype=float)
ftp, ours = float(data["ftp"]), data["ours"]

padded = np.concatenate([np.zeros(29), watts])
rolling = core.rolling_mean(padded, window=30)[29:]
np_ = float(np.mean(np.power(rolling, 4)) ** 0.25)
intensity = power.relative_intensity(np_, ftp)
curve = core.mean_max(watts.copy())  # index t-1 is the best t seconds, t < len
zones = core.time_in_zones(watts, ftp=ftp)
ref = {
    "average": float(np.mean(watts)),
    "maximum": float(np.max(watts)),
    "np": np_,
    "if": intensity,
    "tss": power.stress_score(np_, ftp, len(watts)),
    "work_kj": float(np.sum(watts)) / 1000,
    "zones": [int(z) for z in zones],
    "curve": {str(t): float(curve[t - 1]) for t in map(int, ours["curve"]) if t < len(watts)},
    "wap_sweatpy": float(core.weighted_average_power(watts)),
}
print(json.dumps(ref))

problems = []
for key in ("average", "maximum", "np", "if", "tss", "work_kj"):
    if not np.isclose(ours[key], ref[key], rtol=1e-6, atol=1e-9):
        problems.append(f"{key}: ours {ours[key]} sweatpy {ref[key]}")
# Depending on pandas, sweatpy lists all seven zones or only those that occur; strapd all seven.
ours_zones = [int(s) for s in ours["zones"]]
if (ours_zones if len(ref["zones"]) == 7 else [s for s in ours_zones if s > 0]) != ref["zones"]:
    problems.append(f"time in zones: ours {ours['zones']} sweatpy {ref['zones']}")
for t, w in ref["curve"].items():
    if not np.isclose(ours["curve"][t], w, rtol=1e-9, atol=1e-9):
        problems.append(f"best {t} s: ours {ours['curve'][t]} sweatpy {w}")
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)

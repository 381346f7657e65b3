#!/usr/bin/env python3
"""Computes hrv-analysis's time-domain features on the NN series strapd analysed and compares
them with strapd's figures.

usage: check_hrv.py INPUT.json

INPUT.json:
  series   the analysed series in order: an accepted interval's ms, or null for a rejected
           interval or a run break (the form hrv-analysis itself gives removed beats: NaN)
  ours     {"mean_nni", "sdnn", "rmssd", "nni_50", "pnni_50"} as strapd computed them
  raw      optional: the raw RR ms before filtering, whose out-of-range count
           (hrvanalysis.remove_outliers, 300-2000 ms) must equal ours["out_of_range"]
Prints hrv-analysis's figures as JSON; exits 1 when one differs by more than 0.1 ms
(counts exactly, pNN50 by more than 0.01 percentage points).
"""
import contextlib
import io
import json
import math
import sys

# nolds 0.6.3 (an hrv-analysis dependency, used only for sample entropy) calls
# importlib.resources.files() with a module, which Python 3.12 accepts and Debian 12's 3.11
# does not. Fall back to the module's package: the same directory 3.12 would use.
if sys.version_info < (3, 12):
    import importlib.resources as _resources

    _files = _resources.files

    def _files_of_module_or_package(anchor=None):
        try:
            return _files(anchor)
        except TypeError:
            return _files(anchor.rpartition(".")[0])

    _resources.files = _files_of_module_or_package

from hrvanalysis import get_time_domain_features, remove_outliers  # noqa: E402


def main(path):
    with open(path) as f:
        data = json.load(f)
    series = [math.nan if v is None else float(v) for v in data["series"]]
    ref = get_time_domain_features(series)
    ours = data["ours"]
    problems = []
    for key in ("mean_nni", "sdnn", "rmssd"):
        if abs(float(ref[key]) - ours[key]) > 0.1:
            problems.append(f"{key}: hrv-analysis {float(ref[key])!r}, strapd {ours[key]!r}")
    if int(ref["nni_50"]) != ours["nni_50"]:
        problems.append(f"nni_50: hrv-analysis {int(ref['nni_50'])}, strapd {ours['nni_50']}")
    if abs(float(ref["pnni_50"]) - ours["pnni_50"]) > 0.01:
        problems.append(f"pnni_50: hrv-analysis {float(ref['pnni_50'])!r}, strapd {ours['pnni_50']!r}")
    result = {k: float(ref[k]) for k in ("mean_nni", "sdnn", "rmssd", "pnni_50", "mean_hr")}
    result["nni_50"] = int(ref["nni_50"])
    if "raw" in data:
        with contextlib.redirect_stdout(io.StringIO()):
            cleaned = remove_outliers(data["raw"], verbose=False, low_rri=300, high_rri=2000)
        out_of_range = sum(1 for v in cleaned if math.isnan(v))
        result["out_of_range"] = out_of_range
        if out_of_range != ours.get("out_of_range"):
            problems.append(f"out of range: hrv-analysis {out_of_range}, strapd {ours.get('out_of_range')}")
    print(json.dumps(result))
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

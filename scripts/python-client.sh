#!/usr/bin/env bash
# The Python client (clients/python, docs/client.md): mypy --strict over the package (for its
# Python 3.9 floor) and the tests, pytest against the debug strapd (`--simulate`, started per
# test module), then the wheel built with `python -m build` and installed into a fresh venv,
# where it is imported and reads live heart rate from a strapd of its own (the smoke check).
# The tools come pinned from PyPI into .build/pyclient-venv (scripts/pyvenv.sh); the package
# needs none of them. Run by scripts/test.sh after `swift build`. Closes with
#   python-client: N passed, N failed (pytest P passed, F failed; mypy ok|FAILED; wheel ok|FAILED)
# where mypy and the wheel count as one check each, like the ASan run in scripts/test.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$PWD
venv=$top/.build/pyclient-venv
dist=$top/.build/pyclient-dist
smoke=$top/.build/pyclient-smoke
strapd_bin=${STRAPD_BIN:-$top/.build/debug/strapd}
log=$(mktemp)
work=$(mktemp -d /tmp/strapd-pyclient-XXXXXX)
daemon=
cleanup() {
  [ -n "$daemon" ] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
  rm -rf "$log" "$work"
}
trap cleanup EXIT

scripts/pyvenv.sh "$venv" clients/python/requirements-dev.txt || { echo "python-client: 0 passed, 1 failed (the tools venv could not be built)"; exit 1; }
py=$venv/bin/python
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
cd clients/python
export PYTHONDONTWRITEBYTECODE=1 STRAPD_BIN=$strapd_bin

# The package for its floor (pyproject.toml: python_version 3.9); tests and benchmark for
# the interpreter they run on (pytest itself needs a newer one).
mypy_ok=1
"$py" -m mypy --strict --no-incremental || mypy_ok=0
PYTHONPATH=src "$py" -m mypy --strict --no-incremental --python-version "$pyver" tests bench || mypy_ok=0

PYTHONPATH=src "$py" -m pytest -q -p no:cacheprovider 2>&1 | tee "$log"
pytest_status=${PIPESTATUS[0]}
closing=$(grep -E '^=*.*[0-9]+ (passed|failed|errors?)' "$log" | tail -1)
py_passed=$(grep -oE '[0-9]+ passed' <<<"$closing" | grep -oE '[0-9]+' || echo 0)
py_failed=$(( $(grep -oE '[0-9]+ failed' <<<"$closing" | grep -oE '[0-9]+' || echo 0) + $(grep -oE '[0-9]+ errors?' <<<"$closing" | grep -oE '[0-9]+' || echo 0) ))
[ "$pytest_status" -eq 0 ] || [ "$py_failed" -gt 0 ] || py_failed=1

# The wheel, from the pinned backend (no isolated build environment, no download), into a
# venv that has nothing else; then the README's loop against a strapd of its own.
wheel_ok=0
rm -rf "$dist" "$smoke"
if "$py" -m build --wheel --no-isolation --outdir "$dist" . >"$work/build.log" 2>&1 \
   && /usr/bin/python3 -m venv "$smoke" \
   && "$smoke/bin/pip" install --disable-pip-version-check --no-input -q --no-index "$dist"/strapd-*.whl; then
  "$strapd_bin" --state-dir "$work/state" --socket "$work/s.sock" --set daemon.socket_group= \
    --log-level warning --simulate=1 2>"$work/strapd.log" &
  daemon=$!
  for _ in $(seq 300); do [ -S "$work/s.sock" ] && break; sleep 0.05; done
  if (cd "$work" && STRAPD_SOCKET="$work/s.sock" timeout 60 "$smoke/bin/python" - <<'EOF'
import strapd, strapd.sync
assert strapd.__file__.startswith(__import__("sys").prefix), strapd.__file__  # the installed wheel
with strapd.connect() as client:
    values = []
    for event in client.live(["heartRate"]):
        if event.sample is not None and event.sample.value is not None:
            values.append(event.sample.value)
            if len(values) == 3:
                break
print(f"smoke: strapd {strapd.__version__} from the wheel read live heart rate {values}")
EOF
  ); then wheel_ok=1; fi
else
  cat "$work/build.log"
fi
wheel_name=$(basename "$(ls "$dist"/strapd-*.whl 2>/dev/null | head -1)" 2>/dev/null)

echo "pytest: $closing"
echo "python-client: $(( py_passed + mypy_ok + wheel_ok )) passed, $(( py_failed + (1 - mypy_ok) + (1 - wheel_ok) )) failed (pytest $py_passed passed, $py_failed failed; mypy $([ $mypy_ok -eq 1 ] && echo ok || echo FAILED); wheel ${wheel_name:-none} $([ $wheel_ok -eq 1 ] && echo ok || echo FAILED))"
[ "$py_failed" -eq 0 ] && [ $mypy_ok -eq 1 ] && [ $wheel_ok -eq 1 ]

#!/usr/bin/env bash
# Creates .build/venv with the pinned Python readers the export tests use to check strapd's
# FIT/TCX/CSV files and HRV figures (Tests/Fixtures/export/requirements.txt, docs/export.md).
# Idempotent: a stamp holds the hash of the requirements; nothing is done when it matches.
# Needs Debian's python3-venv (scripts/deps.sh) and PyPI.
#
#   scripts/pyvenv.sh [VENV REQUIREMENTS]   another venv from another pinned list (paths from
#                                           the repository's top; Benchmarks/bleak-host.sh,
#                                           scripts/test.sh's .build/web-venv for the browser tests and
#                                           .build/api-venv for the OpenAPI tests)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-.build/venv}
req=${2:-Tests/Fixtures/export/requirements.txt}
# Beside the pinned list, packages installed without their declared dependencies (the file says why).
nodeps=${req%.txt}-nodeps.txt
stamp=$venv/.strapd-requirements
want=$(cat "$req" $( [ -f "$nodeps" ] && echo "$nodeps" ) | sha256sum | cut -d' ' -f1)
if [ -x "$venv/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; then
  echo "pyvenv: $venv up to date"
  exit 0
fi
# Debian's interpreter by its full path: the python3 first on PATH may be another build.
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)
mkdir -p .build
"$python" -m venv "$venv"
"$venv/bin/pip" install --disable-pip-version-check --no-input -q -r "$req"
if [ -f "$nodeps" ]; then
  "$venv/bin/pip" install --disable-pip-version-check --no-input -q --no-deps -r "$nodeps"
fi
echo "$want" > "$stamp"
echo "pyvenv: $venv ready ($("$venv/bin/python" --version))"

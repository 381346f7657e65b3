#!/usr/bin/env bash
# The double-close check of the plain `swift test` run (docs/testing.md):
#   scripts/fdcheck.sh prepare   builds Tests/Fixtures/fdcheck/closecheck.c into a new
#                                world-readable directory (tests run binaries as nobody, and a
#                                clone may sit in a 0700 directory) and prints that directory;
#   scripts/fdcheck.sh report D  prints, symbolized, every close() that failed with EBADF in
#                                one of strapd's own programs (test binary included), and exits
#                                1 if there was one; removes D.
# Run a command under it with LD_PRELOAD=D/closecheck.so FDCHECK_LOG=D.
set -uo pipefail
cd "$(dirname "$0")/.."
ours='^(strapd|strapctl|strapd-web|strap-bench|strapdPackageTe)$'

case "${1:-}" in
prepare)
  dir=$(mktemp -d /tmp/strapd-fdcheck.XXXXXX) || exit 1
  # Sticky and world-writable like /tmp: programs run as nobody record there too; the
  # preload opens its files O_NOFOLLOW, so a planted link loses a record, nothing more.
  chmod 1777 "$dir"
  clang -shared -fPIC -O1 -o "$dir/closecheck.so" Tests/Fixtures/fdcheck/closecheck.c -ldl || exit 1
  chmod 0755 "$dir/closecheck.so"
  echo "$dir"
  ;;
report)
  dir=${2:?usage: fdcheck.sh report DIR}
  found=0
  for f in "$dir"/ebadf.*; do
    [ -e "$f" ] || continue
    while IFS= read -r line; do
      case "$line" in
      "=== "*)
        name=${line##* in }
        if [[ $name =~ $ours ]]; then keep=1; found=$((found + 1)); echo "fdcheck: ${line#=== }"; else keep=0; fi
        ;;
      *)
        [ "$keep" = 1 ] || continue
        # "path(+0xOFFSET)[address]": a frame of a position-independent binary.
        if [[ $line =~ ^([^\(]+)\(\+0x([0-9a-f]+)\) ]] && [ -f "${BASH_REMATCH[1]}" ]; then
          offset=$(printf '0x%x' $((16#${BASH_REMATCH[2]} - 1)))
          echo "  $(addr2line -f -e "${BASH_REMATCH[1]}" "$offset" | head -1 | swift demangle --simplified | cut -c1-160)"
        fi
        ;;
      esac
    done < "$f"
  done
  rm -rf "$dir"
  if [ "$found" -gt 0 ]; then
    echo "fdcheck: $found close() calls on a descriptor that was not open (closed twice?)"
    exit 1
  fi
  echo "fdcheck: no descriptor closed twice"
  ;;
*)
  echo "usage: scripts/fdcheck.sh prepare | report DIR" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# The Debian package's stage of `make test`: builds it (scripts/deb.sh, which reuses a .deb
# already built from this commit and fails on any lintian error or warning), then checks what
# dpkg-deb says is in it. Ends with "deb: N passed, N failed" (docs/packaging.md).
set -uo pipefail
cd "$(dirname "$0")/.."
passed=0 failed=0
check() { # NAME OK|FAIL DETAIL
	if [ "$2" = OK ]; then
		passed=$((passed + 1)); echo "deb-check: $1: ok${3:+ ($3)}"
	else
		failed=$((failed + 1)); echo "deb-check: $1: FAILED: $3"
	fi
}
ok() { "$@" > /dev/null 2>&1 && echo OK || echo FAIL; }

start=$(date +%s)
dir=${DEB_DIR:-$PWD/.build/deb}
mkdir -p "$dir"
scripts/deb.sh 2>&1 | tee "$dir/check.log"
rc=${PIPESTATUS[0]}
check build-and-lintian "$([ "$rc" -eq 0 ] && echo OK || echo FAIL)" "$(grep -E '^deb: ' "$dir/check.log" | grep -v lintian | sed 's/^deb: //' | paste -sd';')"
version=$(sed -n 's/.*static let version = "\([^"]*\)".*/\1/p' Sources/StrapDaemon/Daemon.swift)
deb=$dir/strapd_${version}_$(dpkg --print-architecture).deb
if [ ! -f "$deb" ]; then
	check package-exists FAIL "no $deb"
	echo "deb: $passed passed, $failed failed"
	exit 1
fi

contents=$(dpkg-deb -c "$deb" | awk '{print $NF}')
missing=
for f in usr/bin/strapd usr/bin/strapctl lib/systemd/system/strapd.service lib/systemd/system/strapd.socket \
	usr/lib/sysusers.d/strapd.conf usr/lib/tmpfiles.d/strapd.conf lib/udev/rules.d/60-strapd.rules \
	etc/strapd/strapd.conf usr/share/man/man1/strapctl.1.gz usr/share/man/man5/strapd.conf.5.gz \
	usr/share/man/man8/strapd.8.gz usr/share/doc/strapd/copyright usr/share/doc/strapd/changelog.gz; do
	grep -qx "\./$f" <<< "$contents" || missing+=" $f"
done
check files "$([ -z "$missing" ] && echo OK || echo FAIL)" "${missing:+missing:$missing}"
conffiles=$(dpkg-deb -I "$deb" conffiles 2>&1)
check conffile "$([ "$conffiles" = /etc/strapd/strapd.conf ] && echo OK || echo FAIL)" "conffiles: $(echo "$conffiles" | paste -sd' ')"
field() { dpkg-deb -f "$deb" "$1"; }
depends=$(field Depends)
check control "$([ "$(field Version)" = "$version" ] && [ "$(field Package)" = strapd ] &&
	grep -q 'systemd,' <<< "$depends" && grep -q libsystemd0 <<< "$depends" && ! grep -qi swift <<< "$depends" && echo OK || echo FAIL)" \
	"Version $(field Version), Depends: $depends"

# The maintainer scripts' order and rules (docs/packaging.md "Maintainer scripts").
postinst=$(dpkg-deb -I "$deb" postinst)
users=$(grep -n 'systemd-sysusers' <<< "$postinst" | head -1 | cut -d: -f1)
dirs=$(grep -n 'systemd-tmpfiles' <<< "$postinst" | head -1 | cut -d: -f1)
check postinst "$([ -n "$users" ] && [ -n "$dirs" ] && [ "$users" -lt "$dirs" ] &&
	grep -q "enable 'strapd.service'" <<< "$postinst" && grep -q "_dh_action=restart" <<< "$postinst" && echo OK || echo FAIL)" \
	"sysusers at line ${users:-none}, tmpfiles at ${dirs:-none}; enables and (re)starts the service"
prerm=$(dpkg-deb -I "$deb" prerm)
check prerm-stops-on-remove-only "$(grep -q '"$1" = remove' <<< "$prerm" && ! grep -q 'upgrade' <<< "$prerm" && echo OK || echo FAIL)" \
	"an upgrade leaves strapd running until the new postinst restarts it"
postrm=$(dpkg-deb -I "$deb" postrm)
check postrm-purge-only "$(awk '/^purge\)/{p=1} p&&/rm -rf \/var\/lib\/strapd/{print; exit}' <<< "$postrm" | grep -q . && echo OK || echo FAIL)" \
	"rm -rf /var/lib/strapd under purge) only"

# The packaged binaries run without the Swift toolchain and search no private library path.
T=$(mktemp -d)
dpkg-deb -x "$deb" "$T"
needed=$(readelf -d "$T/usr/bin/strapd" "$T/usr/bin/strapctl")
check binaries "$(! grep -qE 'RUNPATH|RPATH|libswift|libFoundation' <<< "$needed" &&
	[ "$(env -i PATH=/usr/bin:/bin "$T/usr/bin/strapd" --version 2>&1 | grep -c "$version")" -ge 1 ] && echo OK || echo FAIL)" \
	"$(env -i PATH=/usr/bin:/bin "$T/usr/bin/strapd" --version 2>&1 | head -1); no RUNPATH, no Swift library needed"
rm -rf "$T"
echo "deb: $passed passed, $failed failed ($(( $(date +%s) - start )) s)"
[ "$failed" -eq 0 ]

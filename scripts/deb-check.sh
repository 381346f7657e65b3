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
webdeb=$dir/strapd-web_${version}_$(dpkg --print-architecture).deb
for d in "$deb" "$webdeb"; do
	if [ ! -f "$d" ]; then
		check package-exists FAIL "no $d"
		echo "deb: $passed passed, $failed failed"
		exit 1
	fi
done

# Each package's files, and none of the other's: strapd-web (and its HTTP library) is a
# package of its own, so a headless recorder installs no web server.
files_of() { # DEB FILE...: the FILEs missing from DEB
	local contents f missing=
	contents=$(dpkg-deb -c "$1" | awk '{print $NF}'); shift
	for f in "$@"; do grep -qx "\./$f" <<< "$contents" || missing+=" $f"; done
	echo "$missing"
}
missing=$(files_of "$deb" usr/bin/strapd usr/bin/strapctl lib/systemd/system/strapd.service lib/systemd/system/strapd.socket \
	usr/lib/sysusers.d/strapd.conf usr/lib/tmpfiles.d/strapd.conf lib/udev/rules.d/60-strapd.rules \
	etc/strapd/strapd.conf usr/share/man/man1/strapctl.1.gz usr/share/man/man5/strapd.conf.5.gz \
	usr/share/man/man8/strapd.8.gz usr/share/doc/strapd/copyright usr/share/doc/strapd/changelog.gz)
webmissing=$(files_of "$webdeb" usr/bin/strapd-web lib/systemd/system/strapd-web.service lib/systemd/system/strapd-web.socket \
	usr/share/man/man1/strapd-web.1.gz usr/share/doc/strapd-web/copyright usr/share/doc/strapd-web/changelog.gz)
stray=$(dpkg-deb -c "$deb" | awk '{print $NF}' | grep -E 'strapd-web(\.1\.gz|\.service|\.socket)?$' | paste -sd' ')
check files "$([ -z "$missing$webmissing$stray" ] && echo OK || echo FAIL)" \
	"${missing:+strapd misses:$missing; }${webmissing:+strapd-web misses:$webmissing; }${stray:+strapd has strapd-web files: $stray}"
conffiles=$(dpkg-deb -I "$deb" conffiles 2>&1)
check conffile "$([ "$conffiles" = /etc/strapd/strapd.conf ] && echo OK || echo FAIL)" "conffiles: $(echo "$conffiles" | paste -sd' ')"
field() { dpkg-deb -f "$deb" "$1"; }
depends=$(field Depends)
check control "$([ "$(field Version)" = "$version" ] && [ "$(field Package)" = strapd ] &&
	grep -q 'systemd,' <<< "$depends" && grep -q libsystemd0 <<< "$depends" && ! grep -q libmicrohttpd <<< "$depends" &&
	! grep -qi swift <<< "$depends" && echo OK || echo FAIL)" \
	"Version $(field Version), Depends: $depends"
webdepends=$(dpkg-deb -f "$webdeb" Depends)
check web-control "$([ "$(dpkg-deb -f "$webdeb" Version)" = "$version" ] && grep -q "strapd (= $version)" <<< "$webdepends" &&
	grep -q libmicrohttpd12 <<< "$webdepends" && ! grep -qi swift <<< "$webdepends" && echo OK || echo FAIL)" \
	"strapd-web Depends: $webdepends"

# The maintainer scripts' order and rules (docs/packaging.md "Maintainer scripts").
postinst=$(dpkg-deb -I "$deb" postinst)
users=$(grep -n 'systemd-sysusers' <<< "$postinst" | head -1 | cut -d: -f1)
dirs=$(grep -n 'systemd-tmpfiles' <<< "$postinst" | head -1 | cut -d: -f1)
check postinst "$([ -n "$users" ] && [ -n "$dirs" ] && [ "$users" -lt "$dirs" ] &&
	grep -q "enable 'strapd.service'" <<< "$postinst" && grep -q "_dh_action=restart" <<< "$postinst" && echo OK || echo FAIL)" \
	"sysusers at line ${users:-none}, tmpfiles at ${dirs:-none}; enables and (re)starts the service"
postinst=$(dpkg-deb -I "$webdeb" postinst)
# strapd-web is installed, not enabled (docs/web.md, "Under systemd"). dh_installsystemd
# --no-enable still writes an enable, but only inside `debian-installed` (an upgrade) and
# `was-enabled` (the administrator had enabled it): a first install enables nothing.
web_enables=$(grep -B2 "deb-systemd-helper enable 'strapd-web" <<< "$postinst" | grep -c "was-enabled 'strapd-web")
check web-units-not-enabled "$(grep -q "debian-installed 'strapd-web.service'" <<< "$postinst" &&
	grep -q "debian-installed 'strapd-web.socket'" <<< "$postinst" && [ "$web_enables" -eq 2 ] &&
	[ "$(grep -c "deb-systemd-helper enable 'strapd-web" <<< "$postinst")" -eq 2 ] && echo OK || echo FAIL)" \
	"an enable of strapd-web's units only where they were enabled before an upgrade"
prerm=$(dpkg-deb -I "$deb" prerm)
check prerm-stops-on-remove-only "$(grep -q '"$1" = remove' <<< "$prerm" && ! grep -q 'upgrade' <<< "$prerm" && echo OK || echo FAIL)" \
	"an upgrade leaves strapd running until the new postinst restarts it"
postrm=$(dpkg-deb -I "$deb" postrm)
check postrm-purge-only "$(awk '/^purge\)/{p=1} p&&/rm -rf \/var\/lib\/strapd/{print; exit}' <<< "$postrm" | grep -q . && echo OK || echo FAIL)" \
	"rm -rf /var/lib/strapd under purge) only"
webpostrm=$(dpkg-deb -I "$webdeb" postrm)
check postrm-purges-web-state "$(awk '/^purge\)/{p=1} p&&/rm -rf \/var\/lib\/strapd-web \/var\/lib\/private\/strapd-web/{print; exit}' <<< "$webpostrm" | grep -q . && echo OK || echo FAIL)" \
	"strapd-web's token goes with a purge, through its DynamicUser= symlink and the private directory"

# The packaged binaries run without the Swift toolchain and search no private library path.
T=$(mktemp -d)
dpkg-deb -x "$deb" "$T"
dpkg-deb -x "$webdeb" "$T"
needed=$(readelf -d "$T/usr/bin/strapd" "$T/usr/bin/strapctl" "$T/usr/bin/strapd-web")
check binaries "$(! grep -qE 'RUNPATH|RPATH|libswift|libFoundation' <<< "$needed" &&
	[ "$(env -i PATH=/usr/bin:/bin "$T/usr/bin/strapd" --version 2>&1 | grep -c "$version")" -ge 1 ] && echo OK || echo FAIL)" \
	"$(env -i PATH=/usr/bin:/bin "$T/usr/bin/strapd" --version 2>&1 | head -1); no RUNPATH, no Swift library needed"
check strapd-web-runs "$(env -i PATH=/usr/bin:/bin "$T/usr/bin/strapd-web" --help 2>&1 | grep -q '^usage: strapd-web' && echo OK || echo FAIL)" \
	"the extracted strapd-web --help runs with an empty environment"
# The grant: strapd-web.service's primary group exists (sysusers.d) and the shipped
# strapd.conf grants it read (docs/web.md, "The grant").
group=$(sed -n 's/^Group=//p' "$T/lib/systemd/system/strapd-web.service")
check web-grant "$([ -n "$group" ] && grep -qE "^g +$group " "$T/usr/lib/sysusers.d/strapd.conf" &&
	grep -qx "read = group:$group" "$T/etc/strapd/strapd.conf" && grep -qx 'DynamicUser=yes' "$T/lib/systemd/system/strapd-web.service" && echo OK || echo FAIL)" \
	"DynamicUser=yes, Group=${group:-none}, in sysusers.d and granted read in strapd.conf"
# The packaged units as systemd reads them (an unknown key or a bad value is a warning, so
# any output fails), the ExecStart= pointed at the extracted binary.
if command -v systemd-analyze > /dev/null; then
	mkdir "$T/verify"
	cp "$T/lib/systemd/system/strapd-web.socket" "$T/verify/"
	sed "s|^ExecStart=/usr/bin/|ExecStart=$T/usr/bin/|" "$T/lib/systemd/system/strapd-web.service" > "$T/verify/strapd-web.service"
	verify=$(systemd-analyze verify --man=no "$T/verify/strapd-web.socket" "$T/verify/strapd-web.service" 2>&1)
	check web-units-verify "$([ -z "$verify" ] && echo OK || echo FAIL)" "${verify:-systemd-analyze verify: nothing to say}"
fi
rm -rf "$T"
echo "deb: $passed passed, $failed failed ($(( $(date +%s) - start )) s)"
[ "$failed" -eq 0 ]

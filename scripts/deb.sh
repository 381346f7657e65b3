#!/usr/bin/env bash
# Builds strapd's Debian package with Debian's tooling (dpkg-buildpackage, debhelper) from a
# commit, then checks it with lintian (docs/packaging.md).
#
#   scripts/deb.sh [REF]     REF: a commit, tag or branch (default HEAD)
#
# DEB_DIR: where the snapshot, its release build and the .deb go (default .build/deb). The
# packages are strapd_<version>_<arch>.deb and strapd-web_<version>_<arch>.deb there (a commit
# before the split, such as 0.1.0, has only the first), <version> being Daemon.version. Packages
# already built from the same commit are reused (DEB_REBUILD=1 builds them again).
# Exit: 0 built and lintian-clean, 1 failed.
set -euo pipefail
cd "$(dirname "$0")/.."
ref=${1:-HEAD}
commit=$(git rev-parse --verify "$ref^{commit}")
short=${commit:0:12}
dir=${DEB_DIR:-$PWD/.build/deb}
src=$dir/src
mkdir -p "$src"
dir=$(cd "$dir" && pwd)

# A snapshot of the commit, not the working tree: the package is what was committed, and edits
# in progress neither enter it nor break its build. read-tree -u against the snapshot's own
# index rewrites only the files that changed, so the release build in $src/.build stays
# incremental; the repository's own index and work tree are not touched.
GIT_INDEX_FILE=$dir/src.index git --work-tree="$src" read-tree --reset -u "$commit"
if [ "$ref" = HEAD ] && ! git diff --quiet HEAD --; then
	echo "deb: packaging HEAD ($short); uncommitted changes are not in it"
fi

version=$(sed -n 's/.*static let version = "\([^"]*\)".*/\1/p' "$src/Sources/StrapDaemon/Daemon.swift")
changelog_version=$(cd "$src" && dpkg-parsechangelog -S Version)
if [ "$version" != "$changelog_version" ]; then
	echo "deb: Daemon.version is $version but debian/changelog says $changelog_version: add a changelog entry for $version" >&2
	exit 1
fi
deb=$dir/strapd_${version}_$(dpkg --print-architecture).deb
# strapd-web is a binary package of its own, built from the same source in the same run, since
# the split after 0.1.0 (which shipped no strapd-web).
webdeb=
grep -qx 'Package: strapd-web' "$src/debian/control" && webdeb=$dir/strapd-web_${version}_$(dpkg --print-architecture).deb

if [ "${DEB_REBUILD:-0}" != 1 ] && [ -f "$deb" ] && { [ -z "$webdeb" ] || [ -f "$webdeb" ]; } && [ "$(cat "$dir/built-from" 2>/dev/null)" = "$commit" ]; then
	echo "deb: $deb already built from $short"
else
	rm -f "$dir/built-from"
	start=$(date +%s)
	# A clean work tree at that commit (CI's clone): build in the repository's own .build, where
	# `make install` and the lab's stage-binaries.sh build the same release binaries (the flag
	# below only changes the link), so CI compiles the release build once. Otherwise (edits in
	# progress, another commit) the snapshot builds in its own .build.
	if [ "$commit" = "$(git rev-parse HEAD)" ] && [ -z "$(git status --porcelain --untracked-files=no)" ] &&
		[ "${DEB_OWN_BUILD:-0}" != 1 ]; then
		for p in strapd strapctl strapd-web; do
			"${SWIFT:-swift}" build -c release --static-swift-stdlib --disable-local-rpath --product $p > "$dir/swift-build.log" 2>&1 ||
				{ tail -n 20 "$dir/swift-build.log" >&2; echo "deb: the release build failed" >&2; exit 1; }
		done
		export STRAPD_PREBUILT=$PWD/.build/release
		echo "deb: release build of the work tree (clean at $short) in $(( $(date +%s) - start )) s"
	fi
	(cd "$src" && dpkg-buildpackage -b -us -uc) > "$dir/build.log" 2>&1 || {
		tail -n 40 "$dir/build.log" >&2
		echo "deb: dpkg-buildpackage failed (all of it in $dir/build.log)" >&2
		exit 1
	}
	echo "$commit" > "$dir/built-from"
	echo "deb: built $deb from $short in $(( $(date +%s) - start )) s"
fi

echo "$deb" > "$dir/built-deb"
echo "$webdeb" > "$dir/built-web-deb"

# Errors and warnings fail.
lintian --fail-on error,warning --info "$deb" ${webdeb:+"$webdeb"}
echo "deb: lintian: no errors, no warnings ($(basename "$deb")${webdeb:+, $(basename "$webdeb")})"

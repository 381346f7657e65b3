#!/bin/bash
# Build the strapd lab guest once into $LAB_CACHE (never inside the repository):
#   vmlinuz       Debian bookworm kernel (CONFIG_BT=m, CONFIG_BT_HCIVHCI=m)
#   initrd.img    the whole guest root fs as an initramfs (cpio)
#   image.stamp   line 1: the inputs (kernel package + version, hashes of the package list,
#                 the pip pins, this script and guest/stub-init); then versions and timings
#   rootfs/       the unpacked root fs, kept for inspection (chroot rootfs bash)
# Rebuilds only when line 1 of image.stamp changes (or LAB_FORCE=1).
# Needs root (debootstrap, chroot) and Debian's apt archive; PyPI only for the pip pins.
#
# Environment:
#   LAB_CACHE       artifacts (default ${XDG_CACHE_HOME:-$HOME/.cache}/strapd-lab)
#   LAB_MIRROR      Debian mirror (default http://deb.debian.org/debian)
#   LAB_SUITE       Debian suite (default bookworm)
#   LAB_KERNEL_PKG  kernel package (default: what linux-image-amd64 depends on)
#   LAB_EXTRA_PKGS  extra Debian packages, comma-separated (part of the stamp)
#   LAB_PIP_PKGS    PyPI packages, space-separated; default: image/pip-requirements.txt
#   LAB_FORCE=1     rebuild even if up to date
# Exit codes: 0 ready, 1 build failed, 2 not root.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
LAB_CACHE=${LAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/strapd-lab}
LAB_MIRROR=${LAB_MIRROR:-http://deb.debian.org/debian}
LAB_SUITE=${LAB_SUITE:-bookworm}

strip_comments() { sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$1" | awk 'NF'; }
PKGS=$(strip_comments "$HERE/image/debian-packages.txt" | paste -sd, -)
[ -n "${LAB_EXTRA_PKGS:-}" ] && PKGS="$PKGS,$LAB_EXTRA_PKGS"
if [ -z "${LAB_PIP_PKGS+set}" ]; then
	LAB_PIP_PKGS=$(strip_comments "$HERE/image/pip-requirements.txt" | paste -sd' ' -)
fi

# Kernel module directories copied into the guest (relative to lib/modules/KVER/kernel).
MODDIRS="net/bluetooth drivers/bluetooth net/rfkill crypto arch/x86/crypto lib
net/9p fs/9p fs/netfs fs/fscache drivers/virtio drivers/char/virtio_console.ko
drivers/block/virtio_blk.ko fs/ext4 fs/jbd2 fs/mbcache.ko"

log() { echo "[build-image $(date +%T)] $*" >&2; }
need() { command -v "$1" >/dev/null 2>&1; }

[ "$(id -u)" = 0 ] || { echo "build-image.sh: must run as root (debootstrap, chroot)" >&2; exit 2; }

missing=""
for t in debootstrap:debootstrap qemu-system-x86_64:qemu-system-x86 depmod:kmod cpio:cpio; do
	need "${t%%:*}" || missing="$missing ${t#*:}"
done
if [ -n "$missing" ]; then
	log "installing host packages:$missing"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# shellcheck source=lock.sh
. "$HERE/lock.sh"
lab_lock || exit 1
mkdir -p "$LAB_CACHE"
cd "$LAB_CACHE"
T0=$(date +%s)

KPKG=${LAB_KERNEL_PKG:-$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}')}
[ -n "$KPKG" ] || { apt-get update -qq; KPKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{print $2; exit}'); }
[ -n "$KPKG" ] || { echo "build-image.sh: cannot resolve the kernel package" >&2; exit 1; }
KVER=${KPKG#linux-image-}
KDEBVER=$(apt-cache policy "$KPKG" | awk '/Candidate:/{print $2}')
h() { sha256sum | cut -c1-12; }
SPEC="kernel=$KPKG/$KDEBVER suite=$LAB_SUITE pkgs=$(echo "$PKGS" | h) pip=$(echo "$LAB_PIP_PKGS" | h)"
SPEC="$SPEC script=$(h < "$HERE/build-image.sh") init=$(h < "$HERE/guest/stub-init")"

if [ -z "${LAB_FORCE:-}" ] && [ -f image.stamp ] && [ -f vmlinuz ] && [ -f initrd.img ] &&
   [ "$(head -1 image.stamp)" = "$SPEC" ]; then
	log "image up to date in $LAB_CACHE ($KPKG); LAB_FORCE=1 rebuilds"
	exit 0
fi
log "building into $LAB_CACHE: $SPEC"

# 1. Kernel: download the .deb, extract, keep vmlinuz + the modules we need.
log "kernel: $KPKG $KDEBVER"
rm -rf kernel.tmp && mkdir -p kernel.tmp
(cd kernel.tmp && apt-get download "$KPKG" >/dev/null 2>&1) || (cd kernel.tmp && apt-get download "$KPKG")
dpkg -x kernel.tmp/"$KPKG"_*.deb kernel.tmp/x
for opt in BT BT_HCIVHCI BT_LE NET_9P_VIRTIO 9P_FS VIRTIO_PCI; do
	grep -Eq "^CONFIG_$opt=" kernel.tmp/x/boot/config-"$KVER" || { echo "kernel lacks CONFIG_$opt" >&2; exit 1; }
done
cp kernel.tmp/x/boot/vmlinuz-"$KVER" vmlinuz.new
T1=$(date +%s)

# 2. Guest root fs (minbase + our packages).
log "debootstrap $LAB_SUITE minbase + $PKGS"
rm -rf rootfs.tmp
debootstrap --variant=minbase --include="$PKGS" "$LAB_SUITE" rootfs.tmp "$LAB_MIRROR" > debootstrap.log 2>&1 ||
	{ tail -30 debootstrap.log >&2; exit 1; }
T2=$(date +%s)

# 3. Kernel modules subset + depmod inside the guest tree.
R=rootfs.tmp
M=kernel.tmp/x/lib/modules/$KVER
mkdir -p "$R/lib/modules/$KVER/kernel"
cp "$M"/modules.order "$M"/modules.builtin "$M"/modules.builtin.modinfo "$R/lib/modules/$KVER/"
for d in $MODDIRS; do
	mkdir -p "$R/lib/modules/$KVER/kernel/$(dirname "$d")"
	cp -a "$M/kernel/$d" "$R/lib/modules/$KVER/kernel/$d"
done
depmod -b "$R" "$KVER"

# 4. PyPI packages (binary wheels for the guest's python), precompiled. A failure (PyPI
#    unreachable) is not fatal: the scenarios that need them skip; the stamp says so and
#    the next build retries.
PIPNOTE=""
if [ -n "$LAB_PIP_PKGS" ]; then
	PYV=$(chroot "$R" python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	log "pip: $LAB_PIP_PKGS (guest python $PYV)"
	# shellcheck disable=SC2086
	if python3 -m pip install -q --disable-pip-version-check --target "$R/usr/local/lib/python$PYV/dist-packages" \
		--python-version "$PYV" --platform manylinux2014_x86_64 --only-binary=:all: --no-compile $LAB_PIP_PKGS; then
		chroot "$R" python3 -m compileall -q "/usr/local/lib/python$PYV/dist-packages" > /dev/null || true
	else
		log "WARNING: pip install failed; scenarios needing $LAB_PIP_PKGS will skip"
		PIPNOTE=" pip-failed"
	fi
fi
T3=$(date +%s)

# 5. Trim what a test VM never reads (keeps the bluez-test-scripts examples).
rm -rf "$R"/var/cache/apt/archives/*.deb "$R"/var/lib/apt/lists/* "$R"/usr/share/locale/* \
	"$R"/usr/share/man/* "$R"/usr/share/info/* "$R"/usr/lib/udev/hwdb.bin
find "$R"/usr/share/doc -mindepth 1 -maxdepth 1 ! -name bluez-test-scripts -exec rm -rf {} +

# 6. Our PID-1 stub, mount points, identity.
install -m 0755 "$HERE/guest/stub-init" "$R/init"
mkdir -p "$R/lab" "$R/out" "$R/host"
echo strapd-lab > "$R/etc/hostname"
chroot "$R" dbus-uuidgen > "$R/etc/machine-id"

{
	echo "$SPEC$PIPNOTE"
	echo "built: $(date -u +%FT%TZ) into $LAB_CACHE"
	echo "debian packages: $PKGS"
	echo "pip: ${LAB_PIP_PKGS:-(none)}$PIPNOTE"
	chroot "$R" dpkg-query -W -f '${Package} ${Version}\n' bluez bluez-test-tools bluez-test-scripts dbus systemd python3 libc6
	ls "$R"/usr/local/lib/python*/dist-packages 2>/dev/null | sed -n 's/\.dist-info$/ (pip)/p'
} > image.stamp.new

# 7. Pack the whole root fs as the initramfs (uncompressed: boots faster under TCG).
log "packing initramfs"
(cd "$R" && find . -print0 | cpio --null -o -H newc --quiet) > initrd.img.new
T4=$(date +%s)

rm -rf rootfs && mv "$R" rootfs
mv vmlinuz.new vmlinuz
mv initrd.img.new initrd.img
rm -rf kernel.tmp
{
	echo "timings: kernel=$((T1 - T0))s debootstrap=$((T2 - T1))s pip=$((T3 - T2))s trim+pack=$((T4 - T3))s total=$((T4 - T0))s"
	echo "sizes: vmlinuz=$(du -h vmlinuz | cut -f1) initrd.img=$(du -h initrd.img | cut -f1) rootfs=$(du -sh rootfs | cut -f1)"
} >> image.stamp.new
mv image.stamp.new image.stamp
log "done in $((T4 - T0))s"
cat image.stamp >&2

# strapd — build, test, benchmark, fuzz. `make help` lists the targets.
SWIFT        ?= swift
FUZZ_SECONDS ?= 60
PREFIX       ?= /usr
DESTDIR      ?=

.PHONY: help deps build release test torture bench bench-bleak bench-notification fuzz fuzz-ci demo demo-mqtt install deb clean lab lab-peer lab-powercut

help:
	@echo "make deps      install the Debian packages building strapd needs (idempotent; scripts/deps.sh test|bench for more)"
	@echo "make build     debug build"
	@echo "make release   release build"
	@echo "make test      the whole test suite (what .ci/run runs)"
	@echo "make torture   the store's crash/corruption tests at full counts (STRAP_TORTURE=1)"
	@echo "make demo      the main job: see README (with strapd-web's dashboard; DEMO_WEB_PORT, default 0: a free port)"
	@echo "make demo-mqtt strapd publishing to a throwaway mosquitto, watched with mosquitto_sub -v"
	@echo "make bench     strap-bench (the Benchmarks/ package), release build; BENCH_SECTIONS=... (default all)"
	@echo "make bench-bleak  strapd beside the lab's bleak + SQLite logger on this host (mock BlueZ, no VM); BLEAK_SECS"
	@echo "make bench-notification  callgrind's instructions and allocations per BlueZ notification (mock BlueZ); NOTE_SECS"
	@echo "make deb       the Debian packages of HEAD, lintian-checked: .build/deb/strapd{,-web}_<version>_<arch>.deb (docs/packaging.md)"
	@echo "make fuzz      libFuzzer on every decoder family, FUZZ_SECONDS each"
	@echo "make lab       the end-to-end lab, every scenario (root; docs/testing.md)"
	@echo "make lab-powercut  power cuts of the lab VM, POWERCUT_CUTS per sync mode (default 20), prints the table (root)"
	@echo "make lab-peer  strapd beside a bleak + SQLite logger in the lab VM, prints the table (root; PEER_SECS)"

deps:
	@scripts/deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

test:
	@scripts/deps.sh test deb
	scripts/test.sh

torture: deps
	$(SWIFT) build --build-tests
	STRAP_TORTURE=1 $(SWIFT) test --skip-build --disable-xctest --filter StrapStoreTests

# The benchmark is its own package (Benchmarks/, depending on this one by path); the strapd it
# measures is the --static-swift-stdlib one `make install` ships, built here and put next to
# strap-bench as strapd-shipped. Results go to bench-results.json at the top.
BENCH_BIN = Benchmarks/.build/release
BENCH_SECTIONS ?= all
bench:
	@scripts/deps.sh bench test
	@scripts/pyvenv.sh
	$(SWIFT) build -c release --static-swift-stdlib --product strapd
	$(SWIFT) build --package-path Benchmarks -c release --product strap-bench
	cp .build/release/strapd $(BENCH_BIN)/strapd-shipped
	$(BENCH_BIN)/strap-bench $(BENCH_SECTIONS)

# docs/benchmarks.md, "The floors, in the VM and on the host".
BLEAK_SECS ?= 60
bench-bleak:
	@scripts/deps.sh test deb
	Benchmarks/bleak-host.sh $(BLEAK_SECS)

# docs/benchmarks.md, "Instructions and allocations per notification".
NOTE_SECS ?= 40
bench-notification:
	@scripts/deps.sh test bench
	Benchmarks/notification-cost.sh $(NOTE_SECS)

fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-ci: deps
	scripts/fuzz.sh 20

demo: deps
	scripts/demo.sh

# strapd publishing to a throwaway mosquitto, watched with mosquitto_sub -v (docs/mqtt.md).
demo-mqtt: deps
	@scripts/deps.sh test deb
	scripts/mqtt-demo.sh

# Installs into DESTDIR (packaging) or / : static-stdlib release binaries, units, sysusers,
# tmpfiles, udev rule, man pages. Binaries need only glibc, libsystemd0, libbluetooth3, zlib1g (and libmosquitto1 for [mqtt]);
# strapd-web libmicrohttpd12 too. Its units are installed, not enabled (docs/web.md, "Under systemd").
BINDIR     ?= $(PREFIX)/bin
UNITDIR    ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR?= /usr/lib/sysusers.d
TMPFILESDIR?= /usr/lib/tmpfiles.d
UDEVDIR    ?= $(PREFIX)/lib/udev/rules.d
MANDIR     ?= $(PREFIX)/share/man
install:
	$(SWIFT) build -c release --static-swift-stdlib --product strapd
	$(SWIFT) build -c release --static-swift-stdlib --product strapctl
	$(SWIFT) build -c release --static-swift-stdlib --product strapd-web
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR) \
	  $(DESTDIR)$(UDEVDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)/etc/strapd
	install -m 0755 -s .build/release/strapd .build/release/strapctl .build/release/strapd-web $(DESTDIR)$(BINDIR)/
	install -m 0644 systemd/strapd.service systemd/strapd.socket systemd/strapd-web.service systemd/strapd-web.socket \
	  $(DESTDIR)$(UNITDIR)/
	install -m 0644 systemd/sysusers.d/strapd.conf $(DESTDIR)$(SYSUSERSDIR)/strapd.conf
	install -m 0644 systemd/tmpfiles.d/strapd.conf $(DESTDIR)$(TMPFILESDIR)/strapd.conf
	install -m 0644 udev/60-strapd.rules $(DESTDIR)$(UDEVDIR)/
	install -m 0644 docs/man/strapctl.1 docs/man/strapd-web.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 docs/man/strapd.conf.5 $(DESTDIR)$(MANDIR)/man5/
	install -m 0644 docs/man/strapd.8 $(DESTDIR)$(MANDIR)/man8/
	[ -e $(DESTDIR)/etc/strapd/strapd.conf ] || install -m 0644 docs/strapd.conf.example $(DESTDIR)/etc/strapd/strapd.conf

# The Debian package (docs/packaging.md): dpkg-buildpackage in a snapshot of HEAD (DEB_REF=
# another commit or tag), the static release build in the snapshot's own .build, lintian after.
DEB_REF ?= HEAD
deb:
	@scripts/deps.sh deb
	scripts/deb.sh $(DEB_REF)

# End-to-end lab: real bluetoothd in a qemu VM (root; docs/testing.md). Every scenario.
lab: deps
	Tests/lab/selftest.sh

# strapd beside a bleak + SQLite logger on the same four sensors, one VM (root; not in `lab`
# or CI; docs/benchmarks.md). PEER_SECS: measured seconds per side; PEER_OUT: results.
PEER_SECS ?= 90
PEER_OUT ?= $${LAB_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/strapd-lab}/out/peer
lab-peer: deps
	LAB_SCENARIOS="peer-bleak|peer-bleak $(PEER_SECS) 0.5|$$(( $(PEER_SECS) * 2 + 600 ))" Tests/lab/selftest.sh $(PEER_OUT); \
	rc=$$?; cat $(PEER_OUT)/peer-bleak/peer-table.md 2>/dev/null || echo "lab-peer: no table (see $(PEER_OUT)/peer-bleak.txt)"; exit $$rc

# Power cuts (sysrq b) of the lab VM with the store on its own virtual disk, POWERCUT_CUTS per
# sync mode; CI runs 3 per mode in `lab` (docs/testing.md, docs/storage.md).
POWERCUT_CUTS ?= 20
POWERCUT_OUT ?= $${LAB_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/strapd-lab}/out/powercut
lab-powercut: deps
	LAB_SCENARIOS="powercut|powercut $(POWERCUT_CUTS)|$$(( $(POWERCUT_CUTS) * 3 * 90 + 600 ))" Tests/lab/selftest.sh $(POWERCUT_OUT); \
	rc=$$?; cat $(POWERCUT_OUT)/powercut/powercut-table.md 2>/dev/null || echo "lab-powercut: no table (see $(POWERCUT_OUT)/powercut.txt)"; exit $$rc

clean:
	rm -rf .build Benchmarks/.build fuzz/bin

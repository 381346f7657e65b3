# strapd — build, test, benchmark, fuzz. `make help` lists the targets.
SWIFT        ?= swift
FUZZ_SECONDS ?= 60
PREFIX       ?= /usr
DESTDIR      ?=

.PHONY: help deps build release test bench fuzz fuzz-ci demo clean lab

help:
	@echo "make deps      install the Debian packages strapd needs (idempotent)"
	@echo "make build     debug build"
	@echo "make release   release build"
	@echo "make test      the whole test suite (what .ci/run runs)"
	@echo "make demo      the main job: see README"
	@echo "make bench     strap-bench, every section, release build"
	@echo "make fuzz      libFuzzer on every decoder family, FUZZ_SECONDS each"

deps:
	@scripts/deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

test: deps
	scripts/test.sh

bench: deps
	$(SWIFT) build -c release --product strap-bench
	.build/release/strap-bench all

fuzz: deps
	scripts/fuzz.sh $(FUZZ_SECONDS)

fuzz-ci: deps
	scripts/fuzz.sh 20

demo: deps
	scripts/demo.sh

# End-to-end lab: real bluetoothd in a qemu VM (root; docs/testing.md). Every scenario.
lab: deps
	Tests/lab/selftest.sh

clean:
	rm -rf .build fuzz/bin

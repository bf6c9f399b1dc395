# kgc - top-level build. Sub-makefiles own their directories:
#   kmod/ (Kbuild, kgc.ko)   lib/ (libkgc + lib/test)   selftests/ (VM rig)
#   bench/ (make bench)      demo/ (make demo)      examples/ (klisp, make check-examples)
#   tools/ (kgcstat)         man/ (man pages)       install.mk (make install / uninstall)
.PHONY: all kmod lib check check-lib check-examples check-kmod check-dkms check-install check-tools \
	check-front-door tools demo bench clean deps deps-build deps-check deps-bench soak

# Every target that compiles installs what it needs first (scripts/deps.sh:
# quiet and quick when all is there; one line naming the missing packages
# when it cannot install). A prerequisite, so it runs before any compile
# under make -j too; check-front-door fails if a target loses it.
deps-build:
	@bash scripts/deps.sh build
deps-check:
	@bash scripts/deps.sh check
deps-bench:
	@bash scripts/deps.sh bench

all: lib kmod tools

lib: deps-build
	$(MAKE) -C lib

# Builds kgc.ko against KDIR (default: running kernel, else newest 6.12 headers
# in the VM cache); skips with a message when no kernel build tree exists.
kmod: deps-build
	$(MAKE) -C kmod

check: check-front-door check-lib check-examples check-tools check-install check-kmod check-dkms

check-lib: deps-check
	$(MAKE) -C lib check

# The front door on a fresh machine: every top-level target that compiles
# runs scripts/deps.sh before its first compile (make -n's order in a clean
# copy of the tree), and deps.sh's answers when it cannot install.
check-front-door:
	bash scripts/front-door-check.sh

# klisp (examples/): a small interpreter built on the libraries through
# pkg-config, its programs in plain, KGC_CHECK+VERIFY and KGC_STALE_CHECK modes (~15 s)
check-examples: deps-check lib
	$(MAKE) -C examples check

check-kmod: deps-check
	bash selftests/vm/run.sh

# The randomized shadow-model stress test for minutes (lib/Makefile: SOAK_SECONDS,
# SOAK_MODES, SOAK_JOBS, ...). Run it before each submission that touches the collector.
soak: deps-build
	$(MAKE) -C lib soak

# kgcstat (tools/) against a live process that publishes its heap (~5 s)
tools: lib
	$(MAKE) -C tools

check-tools: deps-check lib
	$(MAKE) -C tools check

# make install into a temporary DESTDIR, an out-of-tree program built with
# pkg-config only and run, the man pages linted and matched against the
# exported symbols, make uninstall leaving no file (scripts/install-check.sh).
check-install: deps-check lib
	bash scripts/install-check.sh

# dkms build of kgc.ko against the VM rig's 6.12 headers (dkms.conf).
check-dkms: deps-check
	bash scripts/dkms-check.sh

demo: deps-build
	$(MAKE) -C demo run

bench: deps-bench
	$(MAKE) -C bench run

deps:
	bash scripts/deps.sh all

clean:
	-$(MAKE) -C lib clean
	-$(MAKE) -C kmod clean
	-$(MAKE) -C demo clean
	-$(MAKE) -C examples clean
	-$(MAKE) -C bench clean
	-$(MAKE) -C tools clean

include install.mk

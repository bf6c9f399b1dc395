# kgc - top-level build. Sub-makefiles own their directories:
#   kmod/ (Kbuild, kgc.ko)   lib/ (libkgc + lib/test)   selftests/ (VM rig)
#   bench/ (make bench)      demo/ (make demo)      examples/ (klisp, make check-examples)
#   tools/ (kgcstat)         man/ (man pages)       install.mk (make install / uninstall)
.PHONY: all kmod lib check check-lib check-examples check-kmod check-dkms check-install check-tools tools demo bench clean deps soak

all: lib kmod tools

lib:
	$(MAKE) -C lib

# Builds kgc.ko against KDIR (default: running kernel, else newest 6.12 headers
# in the VM cache); skips with a message when no kernel build tree exists.
kmod:
	$(MAKE) -C kmod

check: check-lib check-examples check-tools check-install check-kmod check-dkms

check-lib:
	$(MAKE) -C lib check

# klisp (examples/): a small interpreter built on the libraries through
# pkg-config, its programs in plain, KGC_CHECK+VERIFY and KGC_STALE_CHECK modes (~15 s)
check-examples: lib
	$(MAKE) -C examples check

check-kmod:
	bash selftests/vm/run.sh

# The randomized shadow-model stress test for minutes (lib/Makefile: SOAK_SECONDS,
# SOAK_MODES, SOAK_JOBS, ...). Run it before each submission that touches the collector.
soak:
	$(MAKE) -C lib soak

# kgcstat (tools/) against a live process that publishes its heap (~5 s)
tools: lib
	$(MAKE) -C tools

check-tools: lib
	$(MAKE) -C tools check

# make install into a temporary DESTDIR, an out-of-tree program built with
# pkg-config only and run, the man pages linted and matched against the
# exported symbols, make uninstall leaving no file (scripts/install-check.sh).
check-install: lib
	bash scripts/install-check.sh

# dkms build of kgc.ko against the VM rig's 6.12 headers (dkms.conf).
check-dkms:
	bash scripts/dkms-check.sh

demo:
	$(MAKE) -C demo run

bench:
	$(MAKE) -C bench run

deps:
	bash scripts/deps.sh

clean:
	-$(MAKE) -C lib clean
	-$(MAKE) -C kmod clean
	-$(MAKE) -C demo clean
	-$(MAKE) -C examples clean
	-$(MAKE) -C bench clean
	-$(MAKE) -C tools clean

include install.mk

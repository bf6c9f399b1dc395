# install.mk - make install / make uninstall (included by the top-level Makefile).
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [LIBDIR=$(PREFIX)/lib]
#                [INCLUDEDIR=$(PREFIX)/include] [MANDIR=$(PREFIX)/share/man]
#                [BINDIR=$(PREFIX)/bin] [PKGCONFIGDIR=$(LIBDIR)/pkgconfig]
#                [DKMSDIR=/usr/src] [UDEVDIR=/usr/lib/udev/rules.d]
#                [SYSUSERSDIR=/usr/lib/sysusers.d]
#   make uninstall   (same variables) removes exactly the files install wrote,
#                    and the one directory tree only kgc uses: the DKMS
#                    sources /usr/src/kgc-<ver>.
# DKMS sources, the udev rule and the sysusers group live where the system
# looks for them, not under PREFIX (DESTDIR still applies).
PREFIX       ?= /usr/local
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
BINDIR       ?= $(PREFIX)/bin
MANDIR       ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DKMSDIR      ?= /usr/src
UDEVDIR      ?= /usr/lib/udev/rules.d
SYSUSERSDIR  ?= /usr/lib/sysusers.d
INSTALL      ?= install

KGC_VERSION  := $(shell sed -n 's/^Version: *//p' lib/libkgc.pc.in)
DKMS_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
LIBS_SO      := libkgc libkgc-native libkgc-jni
HEADERS      := $(wildcard lib/include/*.h)
MANPAGES     := $(wildcard man/*.[1-8])
TOOLS        := $(if $(wildcard tools/Makefile),$(shell $(MAKE) -s --no-print-directory -C tools list))
DKMS_SRCS    := dkms.conf uapi/kgc.h kmod/Kbuild $(wildcard kmod/*.c kmod/*.h)
D            := $(DESTDIR)
DKMS_DEST    := $(D)$(DKMSDIR)/kgc-$(DKMS_VERSION)

.PHONY: install uninstall install-build
install-build: deps-build
	$(MAKE) -C lib
	$(MAKE) -C lib -B build/libkgc.pc build/libkgc-native.pc build/libkgc-jni.pc \
		PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR)
	$(if $(TOOLS),$(MAKE) -C tools)

install: install-build
	$(INSTALL) -d $(D)$(LIBDIR) $(D)$(INCLUDEDIR)/linux $(D)$(PKGCONFIGDIR) $(D)$(BINDIR) \
		$(D)$(UDEVDIR) $(D)$(SYSUSERSDIR)
	$(foreach l,$(LIBS_SO),\
		$(INSTALL) -m 0755 lib/build/rel/$(l).so $(D)$(LIBDIR)/$(l).so.$(KGC_VERSION) && \
		ln -sf $(l).so.$(KGC_VERSION) $(D)$(LIBDIR)/$(l).so.0 && \
		ln -sf $(l).so.0 $(D)$(LIBDIR)/$(l).so && \
		$(INSTALL) -m 0644 lib/build/rel/$(l).a $(D)$(LIBDIR)/$(l).a && \
		$(INSTALL) -m 0644 lib/build/$(l).pc $(D)$(PKGCONFIGDIR)/$(l).pc &&) true
	$(INSTALL) -m 0644 $(HEADERS) $(D)$(INCLUDEDIR)/
	$(INSTALL) -m 0644 uapi/kgc.h $(D)$(INCLUDEDIR)/linux/kgc.h
	$(foreach s,$(sort $(MANPAGES:man/%=%)),\
		$(INSTALL) -D -m 0644 man/$(s) $(D)$(MANDIR)/man$(subst .,,$(suffix $(s)))/$(s) &&) true
	$(foreach t,$(TOOLS),$(INSTALL) -m 0755 tools/build/$(t) $(D)$(BINDIR)/$(t) &&) true
	$(foreach f,$(DKMS_SRCS),$(INSTALL) -D -m 0644 $(f) $(DKMS_DEST)/$(f) &&) true
	$(INSTALL) -m 0644 udev/70-kgc.rules $(D)$(UDEVDIR)/70-kgc.rules
	$(INSTALL) -m 0644 udev/kgc.sysusers $(D)$(SYSUSERSDIR)/kgc.conf

# Removes the files install wrote (never a directory others may use), then
# the DKMS tree it created; empty directories of the prefix stay.
uninstall:
	rm -f $(foreach l,$(LIBS_SO),$(addprefix $(D)$(LIBDIR)/$(l),.so.$(KGC_VERSION) .so.0 .so .a) \
		$(D)$(PKGCONFIGDIR)/$(l).pc)
	rm -f $(HEADERS:lib/include/%=$(D)$(INCLUDEDIR)/%) $(D)$(INCLUDEDIR)/linux/kgc.h
	rm -f $(foreach s,$(MANPAGES:man/%=%),$(D)$(MANDIR)/man$(subst .,,$(suffix $(s)))/$(s))
	rm -f $(TOOLS:%=$(D)$(BINDIR)/%)
	rm -f $(DKMS_SRCS:%=$(DKMS_DEST)/%)
	rmdir $(DKMS_DEST)/kmod $(DKMS_DEST)/uapi $(DKMS_DEST) 2>/dev/null || true
	rm -f $(D)$(UDEVDIR)/70-kgc.rules $(D)$(SYSUSERSDIR)/kgc.conf

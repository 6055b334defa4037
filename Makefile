# SPDX-License-Identifier: GPL-2.0-only
# varsymfs - variant symbolic links for Linux.
#
#   make            build the programs: build/varsymfs, build/varsym
#   make kmod       build varsymfs.ko for each Debian kernel of kernels.list
#   make demo       show a variant link at work (sets itself up)
#   make test       unit tests, the FUSE conformance suite, a short fuzz:
#                   the edit-compile-test loop, no packages, no guests
#   make unit       the unit tests alone
#   make conformance  the conformance suite against the FUSE program here
#   make check      every kernel branch and mechanism once (sets itself up;
#                   what CI runs)
#   make check-full everything in every kernel's guest: before a release,
#                   and before resolving a change to kmod/, fuse/exec_hooks*,
#                   core/exec_rule.h, core/execve_nrs.h or scripts/vm-*
#   make check-kernels [NEWEST=1]  the module in a guest of each kernel of
#                   kernels.list, or of the newest kernel of each suite
#   make check-arm64  everything again in arm64 guests (kernels-arm64.list)
#   make kmod-arm64 varsymfs.ko for each kernel of kernels-arm64.list
#   make arm64      the programs and test helpers for arm64, in build/arm64/
#   make fuzz       libFuzzer on the core's parsers (FUZZ_SECONDS each)
#   make bench      benchmarks into docs/PERFORMANCE.md (not part of check)
#   make use-case-packages  the Debian packages docs/USE-CASES.md's recipes
#                   run, downloaded once into build/use-cases/
#   make install    the programs, man pages and docs under PREFIX
#   make install-dkms  the module's sources in /usr/src, for DKMS
#   make deb        Debian packages varsymfs and varsymfs-dkms in build/deb/
#   make clean
#
# The shared core (core/) is compiled into every program here and, by
# kbuild, into the kernel module (kmod/).

# The one version: dkms.conf's (DKMS wants it there); the module's Kbuild
# reads it too, and scripts/build-deb checks debian/changelog against it.
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
B := build
PYTHON := /usr/bin/python3

CC ?= cc
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter
CPPFLAGS += -Icore -DVARSYM_VERSION='"$(VERSION)"'
FUSE_CFLAGS = $(shell pkg-config --cflags fuse3 libbpf) -I$(B)
FUSE_LIBS = $(shell pkg-config --libs fuse3 libbpf)

CORE_SRC := core/caller.c core/conf.c core/env.c core/options.c core/process.c \
	core/exec_mode.c core/procfs.c \
	core/resolve.c core/scope.c core/search.c core/template.c
CORE_HDR := core/varsym_core.h core/varsym_port.h core/internal.h \
	core/varsym_proc.h core/execve_nrs.h core/exec_rule.h core/exec_mode.h
FUSE_SRC := fuse/main.c fuse/fs.c fuse/readlink.c fuse/xattr.c fuse/dir.c \
	fuse/caller.c fuse/reader.c fuse/pool.c fuse/cache.c fuse/exec_hooks.c \
	fuse/exec_hooks_set.c fuse/exec_hooks_read.c fuse/scopes.c fuse/search.c
FUSE_HDR := fuse/fs.h fuse/dir.h fuse/caller.h fuse/reader.h fuse/pool.h \
	fuse/cache.h fuse/exec_hooks.h fuse/scopes.h fuse/search.h \
	$(B)/exec_hooks.skel.h

.DEFAULT_GOAL := all
.PHONY: all deps-build deps-test deps-kmod deps-fuzz deps-arm64 arm64 kmod kmod-arm64 \
	check-arm64 module demo \
	check check-full check-kernels test unit conformance sanitized tsan fuzz clean bench \
	use-case-packages

TEST_BIN := $(B)/test_core $(B)/test_daemon $(B)/vsprobe $(B)/fake-loader \
	$(B)/fake-loader-shadow

# The attack tests' helpers (tests/conformance/test_abi_matrix.py and
# test_bounded.py), test helpers like the others; the 32-bit callers are
# built without libc (no gcc-multilib here). The sanitized and tsan runs
# find every helper through links in their own directories.
ATTACK_BIN := $(B)/vsattack $(B)/vs32-i386 $(B)/vs32-x32 $(B)/stallfs
TEST_BIN += $(ATTACK_BIN)
NOLIBC := -O2 $(WARN) -nostdlib -static -ffreestanding -fno-pic \
	-fno-stack-protector -fno-asynchronous-unwind-tables

$(B)/vsattack: tests/helpers/vsattack.c tools/errno_name.h | $(B)
	$(CC) $(CFLAGS) $(WARN) -Itools -o $@ $< -lpthread
$(B)/vs32-i386: tests/helpers/vs32.c | $(B)
	$(CC) -m32 $(NOLIBC) -o $@ $<
$(B)/vs32-x32: tests/helpers/vs32.c | $(B)
	$(CC) -mx32 $(NOLIBC) -o $@ $<
$(B)/vs32-arm: tests/helpers/vs32.c | $(B)
	arm-linux-gnueabihf-gcc -marm $(NOLIBC) -o $@ $<
$(B)/stallfs: tests/helpers/stallfs.c | $(B)
	$(CC) $(CFLAGS) $(WARN) $(FUSE_CFLAGS) -o $@ $< $(FUSE_LIBS)


all: $(B)/varsymfs $(B)/varsym

# The programs and test helpers for the arm64 guests (make check-arm64),
# cross-built into build/arm64/ by Debian's aarch64-linux-gnu-gcc against
# the arm64 root (scripts/foreign-root): its C library, libfuse3 and libbpf.
# vs32-arm is the AArch32 caller of the ABI matrix.
SYSROOT ?=
ARM64_BIN := varsymfs varsym bench/varsymfs bench/vsbench vsprobe vsattack \
	stallfs fake-loader fake-loader-shadow vs32-arm
arm64: deps-arm64
	@root=$$(scripts/foreign-root arm64) && \
	PKG_CONFIG_SYSROOT_DIR=$$root \
	PKG_CONFIG_LIBDIR=$$root/usr/lib/aarch64-linux-gnu/pkgconfig:$$root/usr/share/pkgconfig \
	$(MAKE) --no-print-directory B=$(B)/arm64 SYSROOT=$$root \
		CC="aarch64-linux-gnu-gcc --sysroot=$$root" \
		$(addprefix $(B)/arm64/,$(ARM64_BIN))

deps-build:
	@scripts/deps build

deps-test: deps-build
	@scripts/deps test

deps-kmod: deps-build
	@scripts/deps kmod

deps-fuzz: deps-build
	@scripts/deps fuzz

deps-arm64: deps-build
	@scripts/deps arm64

# NEWEST=1: instead of kernels.list's pinned kernels, the newest kernel of
# each of its suites today, listed in build/kernels.newest.list.
ifeq ($(NEWEST),1)
export KERNELS_LIST := $(abspath $(B))/kernels.newest.list
endif

# One varsymfs.ko per kernel of kernels.list, in build/kmod/<release>/,
# each built with the kernel's own compiler: on this machine, or in a
# trixie or sid root (build/roots/) for kernels whose kbuild tools need a
# newer C library.  W=1, and no warning is acceptable.
#
# make kmod ARCH=arm64 (or make kmod-arm64): the same for Debian's arm64
# kernels of kernels-arm64.list, cross-built here with Debian's cross
# compilers into build/kmod/<release>/.
ifeq ($(ARCH),arm64)
kmod: kmod-arm64
else
kmod: deps-kmod
	@scripts/kernels prepare
	@scripts/build-kmod
endif

ARM64_LIST := $(CURDIR)/kernels-arm64.list
kmod-arm64: deps-kmod deps-arm64
	@KERNELS_LIST=$(ARM64_LIST) scripts/kernels prepare
	@KERNELS_LIST=$(ARM64_LIST) scripts/build-kmod

# For a kernel of your own: make module KDIR=/path/to/kernel/build
KDIR ?= /lib/modules/$(shell uname -r)/build
module:
	@scripts/build-kmod $(KDIR) $(B)/kmod/custom

$(B):
	mkdir -p $@

# The daemon's BPF program (fuse/exec_hooks.bpf.c): compiled by clang for
# the BPF target, wrapped by bpftool into a header the daemon includes.
BPF_CLANG ?= clang
BPFTOOL ?= /usr/sbin/bpftool
# -mcpu=v3: compare-and-swap (Linux 5.12+).
BPF_ARCH := $(shell $(CC) -dumpmachine | sed 's/-.*//; s/x86_64/x86/; s/aarch64/arm64/')
BPF_SRC := fuse/exec_hooks.bpf.c fuse/exec_hooks.h core/execve_nrs.h \
	core/exec_rule.h
BPF_CC = $(BPF_CLANG) -O2 -g -Wall -target bpf -mcpu=v3 \
	-D__TARGET_ARCH_$(BPF_ARCH) \
	-I$(SYSROOT)/usr/include/$(shell $(CC) -print-multiarch)
$(B)/exec_hooks.bpf.o: $(BPF_SRC) | $(B)
	$(BPF_CC) -c -o $@ $<
$(B)/exec_hooks.skel.h: $(B)/exec_hooks.bpf.o
	$(BPFTOOL) gen skeleton $< name exec_hooks_bpf >$@.tmp && mv $@.tmp $@
# The tests' build of it: task storage that can be made to fail.
$(B)/bench/exec_hooks.bpf.o: $(BPF_SRC)
	@mkdir -p $(B)/bench
	$(BPF_CC) -DVSFUSE_FAULTS -c -o $@ $<
$(B)/bench/exec_hooks.skel.h: $(B)/bench/exec_hooks.bpf.o
	$(BPFTOOL) gen skeleton $< name exec_hooks_bpf >$@.tmp && mv $@.tmp $@

$(B)/varsymfs: $(CORE_SRC) $(FUSE_SRC) $(CORE_HDR) $(FUSE_HDR) | $(B)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(FUSE_CFLAGS) $(LDFLAGS) -o $@ \
		$(CORE_SRC) $(FUSE_SRC) $(FUSE_LIBS)

# The benchmarks' and tests' daemon: the same, with --naive and --constant=
# (VSFUSE_BENCH: bench/run), and the faults --fail-exec-state and
# --fail-exec-files (VSFUSE_FAULTS: tests/conformance/test_exec_state.py)
# with its own build of the BPF program.
$(B)/bench/varsymfs: $(CORE_SRC) $(FUSE_SRC) $(CORE_HDR) $(FUSE_HDR) \
		$(B)/bench/exec_hooks.skel.h
	@mkdir -p $(B)/bench
	$(CC) $(CPPFLAGS) -DVSFUSE_BENCH -DVSFUSE_FAULTS $(CFLAGS) $(WARN) \
		-I$(B)/bench $(FUSE_CFLAGS) $(LDFLAGS) -o $@ $(CORE_SRC) \
		$(FUSE_SRC) $(FUSE_LIBS)

# The benchmarks' timer (bench/run builds the host's own; this rule, the
# arm64 guests').
$(B)/bench/vsbench: bench/vsbench.c
	@mkdir -p $(B)/bench
	$(CC) $(CFLAGS) $(WARN) -o $@ $<

# The command-line tool: explains a path walk through variant links.
VARSYM_SRC := tools/varsym.c tools/scopes.c tools/conffile.c
VARSYM_HDR := tools/varsym.h tools/errno_name.h

$(B)/varsym: $(CORE_SRC) $(CORE_HDR) $(VARSYM_SRC) $(VARSYM_HDR) | $(B)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(LDFLAGS) -o $@ $(CORE_SRC) $(VARSYM_SRC)

# The same programs with AddressSanitizer and UBSan, for make check.
SAN := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
$(B)/asan/varsymfs: $(CORE_SRC) $(FUSE_SRC) $(CORE_HDR) $(FUSE_HDR)
	@mkdir -p $(B)/asan
	$(CC) $(CPPFLAGS) $(SAN) $(WARN) $(FUSE_CFLAGS) -o $@ \
		$(CORE_SRC) $(FUSE_SRC) $(FUSE_LIBS)

$(B)/asan/varsym: $(CORE_SRC) $(CORE_HDR) $(VARSYM_SRC) $(VARSYM_HDR)
	@mkdir -p $(B)/asan
	$(CC) $(CPPFLAGS) $(SAN) $(WARN) -o $@ $(CORE_SRC) $(VARSYM_SRC)

# The suite takes a directory of programs: the helpers are the plain ones.
sanitized: $(B)/asan/varsymfs $(B)/asan/varsym $(TEST_BIN)
	@ln -sf $(patsubst $(B)/%,../%,$(TEST_BIN)) $(B)/asan/

# The daemon with ThreadSanitizer, for make check: its locking, checked.
TSAN := -O1 -g -fno-omit-frame-pointer -fsanitize=thread
$(B)/tsan/varsymfs: $(CORE_SRC) $(FUSE_SRC) $(CORE_HDR) $(FUSE_HDR)
	@mkdir -p $(B)/tsan
	$(CC) $(CPPFLAGS) $(TSAN) $(WARN) $(FUSE_CFLAGS) -o $@ \
		$(CORE_SRC) $(FUSE_SRC) $(FUSE_LIBS)

tsan: $(B)/tsan/varsymfs $(B)/varsym $(TEST_BIN)
	@ln -sf ../varsym $(patsubst $(B)/%,../%,$(TEST_BIN)) $(B)/tsan/

# libFuzzer on every parser of the core; FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 300
fuzz: deps-fuzz
	scripts/fuzz $(FUZZ_SECONDS)

# The unit tests always run with AddressSanitizer and UBSan.
$(B)/test_core: $(CORE_SRC) $(CORE_HDR) tests/unit/test_core.c tests/unit/check.h | $(B)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ $(CORE_SRC) tests/unit/test_core.c

# How the daemon reads /proc/TID/syscall, in every ABI, and a published
# snapshot.
DAEMON_PARSERS := fuse/caller.c fuse/reader.c fuse/exec_hooks_read.c
$(B)/test_daemon: $(CORE_SRC) $(CORE_HDR) $(DAEMON_PARSERS) fuse/caller.h fuse/reader.h \
		fuse/exec_hooks.h tests/unit/test_daemon.c \
		tests/unit/check.h | $(B)
	$(CC) $(CPPFLAGS) -Ifuse -I$(B) $(CFLAGS) $(WARN) \
		-fsanitize=address,undefined -fno-sanitize-recover=all -o $@ \
		$(CORE_SRC) $(DAEMON_PARSERS) tests/unit/test_daemon.c -lbpf

$(B)/vsprobe: tests/helpers/vsprobe.c tools/errno_name.h | $(B)
	$(CC) $(CFLAGS) $(WARN) -Itools -o $@ $< -lpthread

# A stand-in dynamic loader: static PIE, no libc (see the file).
$(B)/fake-loader: tests/helpers/fake_loader.c | $(B)
	$(CC) -O2 $(WARN) -static-pie -nostdlib -fPIE -o $@ $<
$(B)/fake-loader-shadow: tests/helpers/fake_loader.c | $(B)
	$(CC) -O2 $(WARN) -DTRY_SHADOW -static-pie -nostdlib -fPIE -o $@ $<

demo: deps-build
	@$(MAKE) --no-print-directory all
	@scripts/demo $(B)/varsymfs

unit: $(B)/test_core $(B)/test_daemon
	$(B)/test_core
	$(B)/test_daemon

conformance: all $(TEST_BIN) $(B)/bench/varsymfs
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/conformance --impl=fuse

# The edit-compile-test loop: installs nothing, boots nothing (the packages
# it needs are make check's; without clang, the fuzz part says so).
FUZZ_TEST_SECONDS ?= 3
test: unit conformance
	@if command -v clang >/dev/null; then scripts/fuzz $(FUZZ_TEST_SECONDS); \
	else echo "fuzz: skipped, no clang (make check installs it)"; fi

# use-case-packages: the recipes' Debian packages (tests/conformance/test_use_cases.py)
CHECK_BUILD := all $(TEST_BIN) $(B)/bench/varsymfs kmod sanitized tsan kmod-arm64 arm64 \
	use-case-packages
check: deps-test deps-kmod deps-fuzz deps-package deps-arm64
	@$(MAKE) --no-print-directory $(CHECK_BUILD)
	@scripts/check

# The whole matrix (scripts/check full): ThreadSanitizer on the whole
# suite, the whole suite in every kernel's guest, DKMS and its guest for
# every kernel.
check-full: deps-test deps-kmod deps-fuzz deps-package deps-arm64
	@$(MAKE) --no-print-directory $(CHECK_BUILD)
	@scripts/check full

# Debian's arm64 kernels, in arm64 guests (qemu-system-aarch64, TCG): the
# whole suite against the module as root and as nobody, the FUSE cases,
# DKMS and make deb there (about 70 minutes); make check runs a part.
check-arm64: deps-test deps-arm64 deps-package
	@$(MAKE) --no-print-directory kmod-arm64 arm64
	@scripts/check arm64

# The module's conformance suite in a guest of each kernel; with NEWEST=1,
# of whatever Debian ships today, so a new kernel's breakage shows the day
# it appears.
check-kernels: deps-test
	@if [ "$(NEWEST)" = 1 ]; then \
		KERNELS_LIST=kernels.list scripts/kernels newest $(KERNELS_LIST); fi
	@$(MAKE) --no-print-directory all $(TEST_BIN) kmod
	@scripts/check kernels

# Variant links against their floors, on the host and in a guest of the
# oldest and the newest kernel (~27 minutes): docs/PERFORMANCE.md, docs/performance.png, raw
# numbers in build/bench/.  bench/run --quick is a seconds-long smoke test.
bench: deps-build deps-kmod
	@scripts/deps bench
	@$(MAKE) --no-print-directory all kmod $(B)/bench/varsymfs $(B)/bench/vsbench
	@scripts/use-case-packages >/dev/null
	@bench/run
	@bench/real

# make install: the FUSE program, the varsym command, man pages, docs and
# examples under PREFIX, and the module's mount helper where mount(8)
# finds it, staged under DESTDIR as packagers do.  varsymfs
# goes in sbin because mount(8) runs mount.fuse3 with an empty environment,
# whose shell then searches only the default PATH
# (/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin).
# The kernel module is not installed here: DKMS builds it for each kernel,
# and again for each new one (make install-dkms, then dkms).
PREFIX ?= /usr/local
sbindir = $(PREFIX)/sbin
# mount(8) runs mount.TYPE helpers from /sbin only (util-linux's search
# path, /sbin:/sbin/fs.d:/sbin/fs), whatever PREFIX is: there, or in
# /usr/sbin for PREFIX=/usr, where Debian (whose /sbin is /usr/sbin)
# wants a package's files.
ifeq ($(PREFIX),/usr)
helperdir ?= /usr/sbin
else
helperdir ?= /sbin
endif
bindir = $(PREFIX)/bin
mandir = $(PREFIX)/share/man
docdir = $(PREFIX)/share/doc/varsymfs
DOCS := README.md $(wildcard docs/*.md)
EXAMPLES := examples/fstab examples/systemd/universe.mount \
	examples/tmpfiles.d/varsym.conf examples/modules-load.d/varsymfs.conf
# uninstall removes these if they are empty, the deepest first
DOC_DIRS := $(addprefix $(docdir)/,docs examples/systemd \
	examples/tmpfiles.d examples/modules-load.d examples) $(docdir)

.PHONY: install uninstall install-dkms uninstall-dkms deb deps-package

install: $(B)/varsymfs $(B)/varsym
	install -d $(DESTDIR)$(sbindir) $(DESTDIR)$(bindir) \
		$(DESTDIR)$(mandir)/man1 $(DESTDIR)$(mandir)/man5 \
		$(DESTDIR)$(mandir)/man8
	install -m 755 $(B)/varsymfs $(DESTDIR)$(sbindir)/varsymfs
	install -d $(DESTDIR)$(helperdir)
	sed -e 's|^varsym=.*|varsym=$${VARSYM:-$(bindir)/varsym}|' \
		-e 's|^version=.*|version=$(VERSION)|' tools/mount.varsymfs \
		>$(DESTDIR)$(helperdir)/mount.varsymfs
	chmod 755 $(DESTDIR)$(helperdir)/mount.varsymfs
	install -m 755 $(B)/varsym $(DESTDIR)$(bindir)/varsym
	install -m 644 man/varsym.1 $(DESTDIR)$(mandir)/man1/varsym.1
	install -m 644 man/varsymfs.5 $(DESTDIR)$(mandir)/man5/varsymfs.5
	install -m 644 man/varsym.conf.5 $(DESTDIR)$(mandir)/man5/varsym.conf.5
	install -m 644 man/varsymfs.8 $(DESTDIR)$(mandir)/man8/varsymfs.8
	install -m 644 man/mount.varsymfs.8 $(DESTDIR)$(mandir)/man8/mount.varsymfs.8
	for f in $(DOCS) $(EXAMPLES); do \
		install -D -m 644 $$f $(DESTDIR)$(docdir)/$$f || exit; \
	done

uninstall:
	rm -f $(DESTDIR)$(sbindir)/varsymfs $(DESTDIR)$(bindir)/varsym \
		$(DESTDIR)$(helperdir)/mount.varsymfs \
		$(DESTDIR)$(mandir)/man1/varsym.1 \
		$(DESTDIR)$(mandir)/man5/varsymfs.5 \
		$(DESTDIR)$(mandir)/man5/varsym.conf.5 \
		$(DESTDIR)$(mandir)/man8/varsymfs.8 \
		$(DESTDIR)$(mandir)/man8/mount.varsymfs.8 \
		$(addprefix $(DESTDIR)$(docdir)/,$(DOCS) $(EXAMPLES))
	for d in $(DOC_DIRS); do \
		[ ! -d $(DESTDIR)$$d ] || \
		rmdir --ignore-fail-on-non-empty $(DESTDIR)$$d; \
	done

# The module's sources where DKMS looks for them, whatever PREFIX is; then
# dkms add, build and install varsymfs/$(VERSION) (README.md).
DKMS_SRC := /usr/src/varsymfs-$(VERSION)
install-dkms:
	install -d $(DESTDIR)$(DKMS_SRC)/core $(DESTDIR)$(DKMS_SRC)/kmod
	install -m 644 dkms.conf Kbuild $(DESTDIR)$(DKMS_SRC)/
	install -m 644 core/*.[ch] $(DESTDIR)$(DKMS_SRC)/core/
	install -m 644 kmod/*.[ch] $(DESTDIR)$(DKMS_SRC)/kmod/

# Sources that DKMS still uses cannot go: it could not remove its modules.
uninstall-dkms:
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null && \
	    dkms status -m varsymfs -v $(VERSION) | grep -q .; then \
		echo "first: dkms remove varsymfs/$(VERSION) --all" >&2; exit 1; \
	fi
	rm -rf $(DESTDIR)$(DKMS_SRC)

# Two versions of real Debian packages, unpacked (never installed) for the
# recipes of examples/use-cases/; a second run downloads nothing.
use-case-packages:
	@scripts/use-case-packages

deps-package: deps-build
	@scripts/deps package

deb: deps-package
	@scripts/build-deb

clean:
	rm -rf $(B)

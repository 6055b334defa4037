# SPDX-License-Identifier: GPL-2.0-only
# varsymfs - variant symbolic links for Linux.
#
#   make            build the FUSE program build/varsymfs
#   make kmod       build varsymfs.ko for each installed Debian kernel
#   make demo       show a variant link at work (sets itself up)
#   make check      unit tests and the conformance suite (sets itself up)
#   make bench      benchmarks into docs/PERFORMANCE.md (not part of check)
#   make clean
#
# The shared core (core/) is compiled into every program here and, by
# kbuild, into the kernel module (kmod/).

VERSION := 0.1.0
B := build
PYTHON := /usr/bin/python3

CC ?= cc
CFLAGS ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter
CPPFLAGS += -Icore -DVARSYM_VERSION='"$(VERSION)"'
FUSE_CFLAGS = $(shell pkg-config --cflags fuse3)
FUSE_LIBS = $(shell pkg-config --libs fuse3)

CORE_SRC := core/env.c core/options.c core/resolve.c core/template.c
CORE_HDR := core/varsym.h core/varsym_port.h core/internal.h
FUSE_SRC := fuse/main.c fuse/fs.c fuse/caller.c fuse/cache.c
FUSE_HDR := fuse/fs.h fuse/vsfuse.h fuse/cache.h

.PHONY: all deps-build deps-test deps-kmod kmod module demo check unit \
	conformance clean bench

TEST_BIN := $(B)/test_core $(B)/vsprobe $(B)/fake-loader

all: $(B)/varsymfs $(B)/varsym $(TEST_BIN)

deps-build:
	@scripts/deps build

deps-test: deps-build
	@scripts/deps test

deps-kmod: deps-build
	@scripts/deps kmod

# One varsymfs.ko per installed Debian kernel header set, in
# build/kmod/<kernel version>/; W=1, and no warning is acceptable.
kmod: deps-kmod
	@scripts/build-kmod

# For a kernel of your own: make module KDIR=/path/to/kernel/build
KDIR ?= /lib/modules/$(shell uname -r)/build
module:
	@scripts/build-kmod $(KDIR) $(B)/kmod/custom

$(B):
	mkdir -p $@

$(B)/varsymfs: $(CORE_SRC) $(FUSE_SRC) $(CORE_HDR) $(FUSE_HDR) | $(B)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) $(FUSE_CFLAGS) -o $@ \
		$(CORE_SRC) $(FUSE_SRC) $(FUSE_LIBS)

# The command-line tool: explains a path walk through variant links.
$(B)/varsym: $(CORE_SRC) $(CORE_HDR) tools/varsym.c | $(B)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -o $@ $(CORE_SRC) tools/varsym.c

# The unit tests always run with AddressSanitizer and UBSan.
$(B)/test_core: $(CORE_SRC) $(CORE_HDR) tests/unit/test_core.c | $(B)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -fsanitize=address,undefined \
		-fno-sanitize-recover=all -o $@ $(CORE_SRC) tests/unit/test_core.c

$(B)/vsprobe: tests/helpers/vsprobe.c | $(B)
	$(CC) $(CFLAGS) $(WARN) -o $@ $< -lpthread

# A stand-in dynamic loader: static PIE, no libc (see the file).
$(B)/fake-loader: tests/helpers/fake_loader.c | $(B)
	$(CC) -O2 $(WARN) -static-pie -nostdlib -fPIE -o $@ $<

demo: deps-build
	@$(MAKE) --no-print-directory all
	@scripts/demo $(B)/varsymfs

unit: $(B)/test_core
	$(B)/test_core

conformance: all
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/conformance --impl=fuse

check: deps-test deps-kmod
	@$(MAKE) --no-print-directory all kmod
	@scripts/check

# Variant links against their floors, on the host and in a guest per
# kernel (~15 minutes): docs/PERFORMANCE.md, docs/performance.png, raw
# numbers in build/bench/.  bench/run --quick is a seconds-long smoke test.
bench: deps-build deps-kmod
	@scripts/deps bench
	@$(MAKE) --no-print-directory all kmod
	@bench/run

clean:
	rm -rf $(B)

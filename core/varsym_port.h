/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * varsym_port.h - the one place where the shared core meets its host.
 *
 * The core is compiled twice: into varsymfs.ko by kbuild and into the
 * user-space programs by the Makefile.  It uses only the handful of
 * definitions below, so nothing else in core/ includes a system header.
 */
#ifndef VARSYM_PORT_H
#define VARSYM_PORT_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/stdarg.h>
#include <linux/limits.h>
#include <linux/string.h>
#include <linux/types.h>
#include <asm/unistd.h>

#define VARSYM_PRINTF(fmt, args) __printf(fmt, args)
/* execve(2) and execveat(2) in the build's own system-call ABI */
#define VARSYM_NR_EXECVE __NR_execve
#define VARSYM_NR_EXECVEAT __NR_execveat
#else
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>

#define VARSYM_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#define VARSYM_NR_EXECVE SYS_execve
#define VARSYM_NR_EXECVEAT SYS_execveat
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#endif

/* Both hosts agree on 4096; the core relies on it only through this name. */
#define VARSYM_PATH_MAX PATH_MAX

#endif /* VARSYM_PORT_H */

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * check.h - the unit tests' one assertion: counts, and says what failed.
 * The last line a test program prints is "unit: N passed, N failed".
 */
#ifndef VARSYM_UNIT_CHECK_H
#define VARSYM_UNIT_CHECK_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int passed, failed;

static void __attribute__((format(printf, 2, 3)))
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		passed++;
		return;
	}
	failed++;
	fprintf(stderr, "FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int report(void)
{
	printf("unit: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}

#endif /* VARSYM_UNIT_CHECK_H */

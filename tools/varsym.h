/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * varsym.h - what the varsym command's files share.
 */
#ifndef VARSYM_TOOL_H
#define VARSYM_TOOL_H

#include <stdbool.h>
#include <stdio.h>

#include "varsym_core.h"

enum {
	EXIT_RESOLVES = 0,	/* explained path resolves, link shown, done */
	EXIT_UNRESOLVED = 1,	/* it does not, not a variant link, unset */
	EXIT_USAGE = 2,		/* bad command line, or a system error */
	EXIT_REFUSED = 3,	/* a change or a line refused, or not allowed */
};

/* varsym.c */
void put_bytes(const char *s, size_t len);
void usage(FILE *f);
int bad_usage(const char *what, const char *arg);
int bad_option(int c, char **argv);

/* scopes.c: the verbs on a mount's scopes */
int cmd_set(int argc, char **argv);
int cmd_unset(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_get(int argc, char **argv);
int cmd_load(int argc, char **argv);

#endif /* VARSYM_TOOL_H */

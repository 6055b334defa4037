/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * varsym.h - what the varsym command's files share.
 */
#ifndef VARSYM_TOOL_H
#define VARSYM_TOOL_H

#include <limits.h>
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
/*
 * The lines of the sections of the system's configuration file for the
 * mount at root that a load skips, as the file reads now (the mount keeps
 * no record of its load): each as a varsym_conf_note() to show(), or on
 * standard error when show is NULL.  Returns how many; none of a file
 * that a load would refuse.
 */
unsigned int conf_skipped(const char *root,
			  void (*show)(void *ctx, const char *note),
			  void *ctx);
int cmd_load(int argc, char **argv);

/*
 * conffile.c: --save, a change made to the configuration file in two
 * steps.  conf_prepare() writes the new text beside the file; 0, or
 * -errno after a message naming the file and the errno (or, for a link
 * or a file varsym will not write, why).  conf_commit() puts it in
 * place: 0 or -errno (no message).  conf_abandon() drops it.  After
 * conf_prepare() succeeds, one of the two ends it.
 */
struct conf_rewrite {
	char path[PATH_MAX];	/* the file, at the end of its links */
	char name[NAME_MAX + 1];	/* its name in dir */
	char tmp[NAME_MAX + 1];	/* its new text's name in dir, until committed */
	int dir;		/* its directory, held open from the walk on */
};

int conf_prepare(struct conf_rewrite *w, const char *path, const char *mount,
		 const char *edits, size_t edits_len);
int conf_commit(struct conf_rewrite *w);
void conf_abandon(struct conf_rewrite *w);

#endif /* VARSYM_TOOL_H */

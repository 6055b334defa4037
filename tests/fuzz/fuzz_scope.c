// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_scope.c - libFuzzer target: a change of a scope (setxattr's value,
 * from any user) and /etc/varsym.conf's parser (docs/SPEC.md section 4).
 *
 * Input: a split byte, then an old scope and a change (the old scope is
 * first made valid by applying it as a change to an empty one).  A change
 * either fails whole, or gives a scope in which each name it sets has its
 * value, each name it unsets is gone, every other old entry is kept, and
 * every entry is well formed, once.  The whole input is also read as a
 * configuration file, whose answer must be a valid change, each line it
 * skips or doubts reported with its number and why.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "varsym_core.h"

static char old[VARSYM_SCOPE_MAX], out[VARSYM_SCOPE_MAX];
static char conf[VARSYM_SCOPE_MAX];

/* The entry named like e in block, or NULL. */
static bool find(const char *block, size_t len,
		 const struct varsym_scope_entry *e,
		 struct varsym_scope_entry *found)
{
	size_t pos = 0;

	while (varsym_scope_next(block, len, &pos, found))
		if (found->name_len == e->name_len &&
		    !memcmp(found->name, e->name, e->name_len))
			return true;
	return false;
}

static void check_block(const char *block, size_t len)
{
	struct varsym_scope_entry e, f;
	size_t pos = 0, count = 0, at;

	if (len > VARSYM_SCOPE_MAX || (len && block[len - 1] != '\0'))
		abort();
	while (varsym_scope_next(block, len, &pos, &e)) {
		for (at = 0; at < e.value_len; at++)
			if ((unsigned char)e.value[at] < 0x20 ||
			    e.value[at] == 0x7f)
				abort();	/* a control byte */
		at = pos;
		if (!e.has_value || !e.value_len ||
		    e.value_len >= VARSYM_PATH_MAX ||
		    !varsym_name_valid(e.name, e.name_len) ||
		    ++count > VARSYM_SCOPE_ENTRIES_MAX)
			abort();
		if (find(block + at, len - at, &e, &f))
			abort();		/* a name twice */
	}
}

/* Every report of a line names it, and says why. */
static void report(void *ctx, unsigned int line, bool skipped,
		   const char *why)
{
	if (!line || !why[0])
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *in = (const char *)data + 1, *edits;
	struct varsym_scope_entry e, f;
	char msg[VARSYM_MSG_MAX];
	size_t split, edits_len, pos;
	ssize_t old_len, n;

	if (size < 1 || size > 2 * VARSYM_SCOPE_MAX)
		return 0;
	size--;
	split = size ? data[0] * size / 256 : 0;
	old_len = varsym_scope_edit("", 0, in, split, old, sizeof(old), msg,
				    sizeof(msg));
	if (old_len < 0)
		old_len = 0;
	check_block(old, old_len);
	edits = in + split;
	edits_len = size - split;
	n = varsym_scope_edit(old, old_len, edits, edits_len, out, sizeof(out),
			      msg, sizeof(msg));
	if (n < 0 && n != -EINVAL && n != -E2BIG)
		abort();
	if (n < 0 && !msg[0])
		abort();			/* every refusal says why */
	if (n >= 0) {
		check_block(out, n);
		for (pos = 0; varsym_scope_next(edits, edits_len, &pos, &e);) {
			bool there = find(out, n, &e, &f);

			if (e.has_value != there || (there &&
			    (f.value_len != e.value_len ||
			     memcmp(f.value, e.value, e.value_len))))
				abort();
		}
		for (pos = 0; varsym_scope_next(old, old_len, &pos, &e);)
			if (!find(edits, edits_len, &e, &f) &&
			    (!find(out, n, &e, &f) ||
			     f.value_len != e.value_len ||
			     memcmp(f.value, e.value, e.value_len)))
				abort();
	}
	/* the input as a configuration file, for the mount "/a" */
	n = varsym_conf_section(in, size, "/a", conf, sizeof(conf), report,
				NULL);
	if (n > 0) {
		check_block(conf, n);
		if (varsym_scope_edit("", 0, conf, n, out, sizeof(out), msg,
				      sizeof(msg)) != n)
			abort();
	}
	return 0;
}

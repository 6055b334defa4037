// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_search.c - libFuzzer target: search mode's walk over a PATH (any
 * user's environment; docs/SPEC.md section 8).
 *
 * Input: a byte saying at which try the probe answers "found" (0: never),
 * then a name, a NUL, and the PATH's value.  Every path probed must be an
 * absolute entry of the value, whole within its first
 * VARSYM_SEARCH_BYTES_MAX bytes, or of the fallback, in their order, with
 * its trailing '/' dropped, then '/' and the name; at most
 * VARSYM_SEARCH_DIRS_MAX of the value's; and the result must be the path
 * found, or ENOENT.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "varsym_core.h"

/* mount options refuse relative entries: the fallback has none */
#define FALLBACK "/fb1:/fb2//:/"

static char env[VARSYM_ENV_MAX / 64], value[VARSYM_SEARCH_VALUE_MAX];
static char out[VARSYM_PATH_MAX];

struct run {
	const char *name;
	size_t name_len;
	const char *list;	/* the value's searchable part, then FALLBACK */
	size_t list_len, pos;	/* where the next probe may match */
	unsigned int tries, found_at, from_value;
	size_t value_end;	/* list[0, value_end) is the value's */
	size_t value_cap;	/* where its VARSYM_SEARCH_DIRS_MAX-th absolute
				 * entry ends: the search goes no further */
	char last[VARSYM_PATH_MAX];
};

static ssize_t get(void *ctx, const char *name, size_t len, char *buf,
		   size_t size)
{
	size_t *env_len = ctx;

	return varsym_env_lookup(env, *env_len, name, len, buf, size);
}

/* DIR of path (path less "/NAME"), as the search would write an entry. */
static bool entry_matches(const char *e, size_t elen, const char *dir,
			  size_t dlen)
{
	while (elen > 1 && e[elen - 1] == '/')
		elen--;
	if (elen == 1)
		elen = 0;
	return elen == dlen && !memcmp(e, dir, dlen);
}

static int probe(void *ctx, const char *path)
{
	struct run *r = ctx;
	size_t len = strlen(path), dlen;

	if (len < r->name_len + 1 || path[0] != '/' ||
	    memcmp(path + len - r->name_len, r->name, r->name_len) ||
	    path[len - r->name_len - 1] != '/')
		abort();
	dlen = len - r->name_len - 1;
	/* the next absolute entry of the list that gives this DIR */
	for (;;) {
		const char *e, *colon;
		size_t elen;

		/* past the value's last searched entry: the fallback's turn
		 * (the fallback may name a directory the value names later) */
		if (r->pos >= r->value_cap && r->pos < r->value_end)
			r->pos = r->value_end;
		if (r->pos >= r->list_len)
			abort();	/* probed what no entry names */
		e = r->list + r->pos;
		colon = memchr(e, ':', r->list_len - r->pos);
		elen = colon ? (size_t)(colon - e) : r->list_len - r->pos;
		r->pos += elen + 1;
		if (elen && e[0] == '/' && entry_matches(e, elen, path, dlen)) {
			if (e < r->list + r->value_end &&
			    ++r->from_value > VARSYM_SEARCH_DIRS_MAX)
				abort();
			break;
		}
	}
	memcpy(r->last, path, len + 1);
	return ++r->tries == r->found_at;
}

/* The end of the VARSYM_SEARCH_DIRS_MAX-th absolute entry of list[0, len). */
static size_t value_cap(const char *list, size_t len)
{
	unsigned int n = 0;
	size_t i = 0, end;

	while (i < len) {
		for (end = i; end < len && list[end] != ':'; end++)
			;
		if (end > i && list[i] == '/' && ++n == VARSYM_SEARCH_DIRS_MAX)
			return end;
		i = end + 1;
	}
	return len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char list[VARSYM_SEARCH_BYTES_MAX + sizeof(FALLBACK) + 1];
	const char *in = (const char *)data + 1, *nul, *v;
	struct varsym_caller c = { .getenv = get };
	struct run r = { 0 };
	struct varsym_opts o;
	char msg[VARSYM_MSG_MAX];
	size_t env_len, vlen, cut;
	ssize_t n;

	if (size < 2 || size > sizeof(env) - 8)
		return 0;
	r.found_at = data[0];
	nul = memchr(in, '\0', size - 1);
	if (!nul)
		return 0;
	r.name = in;
	r.name_len = nul - in;
	v = nul + 1;
	vlen = size - 1 - (r.name_len + 1);
	if (memchr(v, '\0', vlen))
		return 0;
	memcpy(env, "PATH=", 5);
	memcpy(env + 5, v, vlen);
	env_len = 5 + vlen;
	c.ctx = &env_len;
	varsym_opts_init(&o);
	if (varsym_opts_parse_one(&o, "search", NULL, msg, sizeof(msg)) ||
	    varsym_opts_parse_one(&o, "fallback", FALLBACK, msg, sizeof(msg)))
		abort();
	/* the reference's list: the value's whole entries, then the fallback */
	cut = vlen;
	if (vlen > VARSYM_SEARCH_BYTES_MAX) {
		cut = VARSYM_SEARCH_BYTES_MAX;
		if (v[cut] != ':')
			while (cut && v[cut - 1] != ':')
				cut--;
	}
	memcpy(list, v, cut);
	r.value_end = cut;
	r.value_cap = value_cap(list, cut);
	memcpy(list + cut, ":/fb1:/fb2//:/", 14);
	r.list = list;
	r.list_len = cut + 14;
	n = varsym_search(&o, &c, r.name, r.name_len, probe, &r, value, out,
			  sizeof(out));
	if (!varsym_search_name_valid(r.name, r.name_len)) {
		if (n != -ENOENT || r.tries)
			abort();
		return 0;
	}
	if (r.found_at && r.tries == r.found_at) {
		if (n != (ssize_t)strlen(r.last) || strcmp(out, r.last))
			abort();
	} else if (n != -ENOENT) {
		abort();
	}
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * search.c - search mode (docs/SPEC.md section 3): a name's target is the
 * first DIR/NAME that the caller may execute, DIR running over the
 * directories of the caller's search variable, then the fallback list.
 *
 * The core decides which directories are tried, in which order, and how
 * many; the layer's probe() decides whether a file is there, with the
 * caller's credentials, mount namespace and root, and refuses any walk that
 * leads back into a search mount.
 */
#include "internal.h"

bool varsym_search_name_valid(const char *name, size_t len)
{
	if (!len || len > VARSYM_NAME_BYTES_MAX || memchr(name, '/', len) ||
	    memchr(name, '\0', len))
		return false;
	return !(name[0] == '.' && (len == 1 || (len == 2 && name[1] == '.')));
}

struct search {
	const char *name;
	size_t name_len;
	int (*probe)(void *ctx, const char *path);
	void *ctx;
	char *out;
	size_t size;
};

/* The end of the entry of list[0, len) that starts at start. */
static size_t entry_end(const char *list, size_t len, size_t start)
{
	const char *colon = memchr(list + start, ':', len - start);

	return colon ? (size_t)(colon - list) : len;
}

void varsym_search_span(const char *value, size_t len,
			struct varsym_search_span *span)
{
	size_t limit = len, start, end;

	*span = (struct varsym_search_span){ 0 };
	/*
	 * Longer than VARSYM_SEARCH_BYTES_MAX bytes: the entries whole in
	 * those bytes, which the next byte, read too, tells.
	 */
	if (len > VARSYM_SEARCH_BYTES_MAX) {
		span->bytes_cut = true;
		limit = VARSYM_SEARCH_BYTES_MAX;
		if (value[limit] != ':')
			while (limit && value[limit - 1] != ':')
				limit--;
	}
	span->len = limit;
	for (start = 0; start < len; start = end + 1) {
		end = entry_end(value, len, start);
		/* empty ("::") and relative entries name the cwd: skipped */
		if (end == start || value[start] != '/')
			continue;
		span->all_dirs++;
		if (end > limit)
			continue;
		if (span->dirs < VARSYM_SEARCH_DIRS_MAX) {
			span->dirs++;
		} else if (!span->dirs_cut) {
			/* the last searched entry ends at its ':' */
			span->dirs_cut = true;
			span->len = start - 1;
		}
	}
}

/*
 * Tries each directory of list[0, len): 1 when found (s->out holds the
 * path), 0 when not, -errno from the probe to end the search.
 */
static int search_list(struct search *s, const char *list, size_t len)
{
	size_t start, end, dlen;
	int ret;

	for (start = 0; start < len; start = end + 1) {
		end = entry_end(list, len, start);
		dlen = end - start;
		/* empty ("::") and relative entries name the cwd: skipped */
		if (!dlen || list[start] != '/')
			continue;
		/* "/" + NAME, no "//": the target a person would write */
		while (dlen > 1 && list[start + dlen - 1] == '/')
			dlen--;
		if (dlen == 1)
			dlen = 0;
		if (dlen + 1 + s->name_len >= s->size)
			continue;
		memcpy(s->out, list + start, dlen);
		s->out[dlen] = '/';
		memcpy(s->out + dlen + 1, s->name, s->name_len);
		s->out[dlen + 1 + s->name_len] = '\0';
		ret = s->probe(s->ctx, s->out);
		if (ret)
			return ret;
	}
	return 0;
}

ssize_t varsym_search(const struct varsym_opts *o,
		      const struct varsym_caller *c, const char *name,
		      size_t name_len,
		      int (*probe)(void *ctx, const char *path), void *ctx,
		      char *value, char *out, size_t size)
{
	struct search s = {
		.name = name, .name_len = name_len, .probe = probe,
		.ctx = ctx, .out = out, .size = size,
	};
	struct varsym_search_span span;
	enum varsym_source from;
	ssize_t n;
	int ret;

	if (!varsym_search_name_valid(name, name_len))
		return -ENOENT;
	n = varsym_value(c, o->var, o->var_len, value, VARSYM_SEARCH_VALUE_MAX,
			 &from);
	if (n < 0 && n != -ENAMETOOLONG)
		return n;
	/* too long for the buffer: it holds the value's first bytes */
	varsym_search_span(value, n < 0 ? VARSYM_SEARCH_VALUE_MAX : (size_t)n,
			   &span);
	varsym_note(c, o->var, o->var_len,
		    span.len ? from : VARSYM_FROM_NOTHING, value, span.len);
	ret = search_list(&s, value, span.len);
	/* the fallback's bound is checked at mount time */
	if (!ret && (o->given & VARSYM_OPT_FALLBACK))
		ret = search_list(&s, o->dflt, o->dflt_len);
	if (ret < 0)
		return ret;
	return ret ? (ssize_t)strlen(out) : -ENOENT;
}

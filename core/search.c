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
	unsigned int tried;	/* directories probed: VARSYM_SEARCH_DIRS_MAX */
};

/*
 * Tries each directory of list[0, len): 1 when found (s->out holds the
 * path), 0 when not, -errno from the probe to end the search.
 */
static int search_list(struct search *s, const char *list, size_t len)
{
	size_t start = 0, end, dlen;
	int ret;

	while (start < len) {
		end = start;
		while (end < len && list[end] != ':')
			end++;
		dlen = end - start;
		/* empty ("::") and relative entries name the cwd: skipped */
		if (dlen && list[start] == '/') {
			if (s->tried++ >= VARSYM_SEARCH_DIRS_MAX)
				return 0;
			/* "/" + NAME, no "//": the target a person would write */
			while (dlen > 1 && list[start + dlen - 1] == '/')
				dlen--;
			if (dlen == 1)
				dlen = 0;
			if (dlen + 1 + s->name_len < s->size) {
				memcpy(s->out, list + start, dlen);
				s->out[dlen] = '/';
				memcpy(s->out + dlen + 1, s->name, s->name_len);
				s->out[dlen + 1 + s->name_len] = '\0';
				ret = s->probe(s->ctx, s->out);
				if (ret)
					return ret;
			}
		}
		start = end + 1;
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
	enum varsym_source from;
	size_t len = 0;
	ssize_t n;
	int ret;

	if (!varsym_search_name_valid(name, name_len))
		return -ENOENT;
	n = varsym_value(c, o->var, o->var_len, value, VARSYM_SEARCH_VALUE_MAX,
			 &from);
	if (n < 0 && n != -ENAMETOOLONG)
		return n;
	len = n;
	/*
	 * Longer than VARSYM_SEARCH_VALUE_MAX - 1 bytes: the directories whole
	 * in those bytes, which the next byte, read too, tells.
	 */
	if (n == -ENAMETOOLONG || n == VARSYM_SEARCH_VALUE_MAX) {
		len = VARSYM_SEARCH_VALUE_MAX - 1;
		if (value[len] != ':')
			while (len && value[len - 1] != ':')
				len--;
	}
	varsym_note(c, o->var, o->var_len, len ? from : VARSYM_FROM_NOTHING,
		    value, len);
	ret = search_list(&s, value, len);
	/* the fallback's own bound is checked at mount time */
	s.tried = 0;
	if (!ret && (o->given & VARSYM_OPT_FALLBACK))
		ret = search_list(&s, o->dflt, o->dflt_len);
	if (ret < 0)
		return ret;
	return ret ? (ssize_t)strlen(out) : -ENOENT;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * resolve.c - the answer of a seed-mode link: prefix + value, or the default.
 *
 * The rules of docs/SPEC.md sections 1, 4, 5 and 6 in one function, so that the kernel
 * and the daemon cannot disagree on what a value, a prefix or a secure-exec
 * caller gives.
 */
#include "internal.h"

/*
 * True when a ".." component of path[0, len) holds a byte at or after
 * index from: the value's bytes, with a prefix ending in "." counted in.
 */
static bool dotdot_from(const char *path, size_t len, size_t from)
{
	size_t start = 0, end;

	while (start < len) {
		for (end = start; end < len && path[end] != '/'; end++)
			;
		if (end > from && end - start == 2 && path[start] == '.' &&
		    path[start + 1] == '.')
			return true;
		start = end + 1;
	}
	return false;
}

ssize_t varsym_resolve_seed(const struct varsym_opts *o,
			    const struct varsym_caller *c, char *out,
			    size_t size)
{
	size_t plen = o->prefix_len;
	enum varsym_source from;
	ssize_t n;

	if (size <= plen)
		return -ENAMETOOLONG;
	n = varsym_value(c, o->var, o->var_len, out + plen, size - 1 - plen,
			 &from);
	if (n > 0) {
		memcpy(out, o->prefix, plen);
		out[plen + n] = '\0';
		if (plen && dotdot_from(out, plen + n, plen)) {
			varsym_note(c, o->var, o->var_len, VARSYM_FROM_REFUSED,
				    out + plen, n);
			return -EACCES;
		}
		varsym_note(c, o->var, o->var_len, from, out + plen, n);
		return plen + n;
	}
	if (n < 0)
		return n;
	if (!(o->given & VARSYM_OPT_DEFAULT)) {
		varsym_note(c, o->var, o->var_len, VARSYM_FROM_NOTHING, NULL, 0);
		return c->secure ? -EACCES : -ENOENT;
	}
	if (plen + o->dflt_len >= size)
		return -ENAMETOOLONG;
	varsym_note(c, o->var, o->var_len, VARSYM_FROM_DEFAULT, o->dflt, o->dflt_len);
	memcpy(out, o->prefix, plen);
	memcpy(out + plen, o->dflt, o->dflt_len + 1);
	return plen + o->dflt_len;
}

bool varsym_same_result(ssize_t a, const char *out_a, ssize_t b,
			const char *out_b)
{
	return a == b && (a <= 0 || !memcmp(out_a, out_b, a));
}

bool varsym_is_answer(ssize_t result)
{
	return result >= 0 || result == -ENOENT || result == -EACCES ||
	       result == -ENAMETOOLONG || result == -EINVAL;
}

ssize_t varsym_interp_answer(char *out, ssize_t n, const char *secure,
			     ssize_t m, int (*may_follow)(void *ctx),
			     void *ctx)
{
	int follow;

	if (!varsym_is_answer(n) || varsym_same_result(n, out, m, secure))
		return n;
	follow = may_follow(ctx);
	if (follow > 0)
		return n;
	if (follow < 0)
		return follow;
	if (m >= 0)
		memcpy(out, secure, m + 1);
	return m;
}

bool varsym_may_keep(ssize_t result, unsigned int used, bool ruid_keyed,
		     bool search, bool search_keyed)
{
	if (!varsym_is_answer(result) || (used & VARSYM_USED_BUILTIN))
		return false;
	if ((used & VARSYM_USED_USER) && !ruid_keyed)
		return false;
	return !search || search_keyed;
}

bool varsym_link_reads_builtin(const struct varsym_opts *o, const char *tmpl,
			       size_t len)
{
	size_t i;

	if (!tmpl)
		return o->var[0] == '@';
	for (i = 0; i + 3 <= len; i++)
		if (tmpl[i] == '$' && tmpl[i + 1] == '{' && tmpl[i + 2] == '@')
			return true;
	return false;
}

ssize_t varsym_link_target(const struct varsym_opts *o, const char *tmpl,
			   size_t len, const struct varsym_caller *caller,
			   char *out, size_t size)
{
	if (tmpl)
		return varsym_template_expand(tmpl, len, caller, out, size);
	return varsym_resolve_seed(o, caller, out, size);
}

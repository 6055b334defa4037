// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_template.c - libFuzzer target: template checking and expansion.
 *
 * Input: flags byte, output size byte, a template up to the first NUL, and
 * after it an environment block.  The core's one-pass expander is compared
 * with a plain recursive reading of docs/SPEC.md sections 2 and 4 written
 * here, and symlink(2)'s check must agree with the expander on what is
 * malformed.  Flags: 1 a secure-exec caller, 2 the block is the system
 * scope too (which a secure caller reads), 4 built-ins are known.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "varsym_core.h"

struct env {
	const char *block;
	size_t len;
};

static ssize_t block_getenv(void *ctx, const char *name, size_t len,
			    char *buf, size_t size)
{
	const struct env *e = ctx;

	return varsym_env_lookup(e->block, e->len, name, len, buf, size);
}

/* The reference: recursive descent, straight from docs/SPEC.md section 2. */
struct ref {
	const char *t;
	size_t len, i;
	const struct env *env;
	bool secure, system, builtins;
	char out[2 * VARSYM_PATH_MAX];
	size_t olen;
	int err;		/* first error in emitting text, or 0 */
};

static bool name_char(char c, bool first)
{
	return c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (!first && c >= '0' && c <= '9');
}

/* The built-ins the fuzzed caller has, when flag 4 says so. */
static const char *const builtin[][2] = {
	{ "@uid", "1" }, { "@gid", "2" }, { "@ruid", "3" }, { "@rgid", "4" },
	{ "@hostname", "host" }, { "@machine", "m" }, { "@osrelease", "r" },
};

static const struct varsym_builtins fuzz_builtins = {
	.uid = 1, .gid = 2, .ruid = 3, .rgid = 4,
	.hostname = "host", .machine = "m", .osrelease = "r",
};

/* The value of the built-in at t (n bytes): 1 and *v, 0 unset, -1 none. */
static int builtin_value(const struct ref *r, const char *t, size_t n,
			 const char **v)
{
	size_t i;

	for (i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++) {
		if (strlen(builtin[i][0]) != n || memcmp(builtin[i][0], t, n))
			continue;
		*v = builtin[i][1];
		/* the real ids are the invoker's: unset when secure */
		return r->builtins && !(r->secure && (i == 2 || i == 3));
	}
	return -1;
}

static void emit(struct ref *r, const char *s, size_t n, bool on)
{
	if (!on || r->err)
		return;
	if (r->olen + n >= VARSYM_PATH_MAX) {
		r->err = -ENAMETOOLONG;
		return;
	}
	memcpy(r->out + r->olen, s, n);
	r->olen += n;
}

/* Parses text until the end, or a '}' when depth > 0; -EINVAL if bad. */
static int word(struct ref *r, int depth, bool on)
{
	while (r->i < r->len) {
		const char *t = r->t;
		size_t start, nlen;
		char value[VARSYM_PATH_MAX];
		ssize_t v = 0;
		const char *bvalue;
		bool dflt, is_builtin;

		if (t[r->i] == '}' && depth)
			return 0;
		if (t[r->i] != '$' || r->i + 1 == r->len ||
		    (t[r->i + 1] != '{' && t[r->i + 1] != '$')) {
			emit(r, t + r->i++, 1, on);
			continue;
		}
		if (t[r->i + 1] == '$') {
			emit(r, "$", 1, on);
			r->i += 2;
			continue;
		}
		if (depth == VARSYM_NEST_MAX)
			return -EINVAL;
		start = r->i += 2;
		if (r->i < r->len && t[r->i] == '@') {
			r->i++;
			while (r->i < r->len && t[r->i] >= 'a' && t[r->i] <= 'z')
				r->i++;
		} else {
			while (r->i < r->len &&
			       name_char(t[r->i], r->i == start))
				r->i++;
		}
		nlen = r->i - start;
		if (!nlen || nlen > VARSYM_NAME_MAX)
			return -EINVAL;
		is_builtin = t[start] == '@';
		if (is_builtin &&
		    builtin_value(r, t + start, nlen, &bvalue) < 0)
			return -EINVAL;
		if (r->i < r->len && t[r->i] == '}')
			dflt = false;
		else if (r->i + 1 < r->len && t[r->i] == ':' &&
			 t[r->i + 1] == '-')
			dflt = true;
		else
			return -EINVAL;
		r->i += dflt ? 2 : 1;
		if (on && is_builtin) {
			if (builtin_value(r, t + start, nlen, &bvalue) > 0) {
				v = strlen(bvalue);
				memcpy(value, bvalue, v);
			}
		} else if (on && (!r->secure || r->system)) {
			/* the environment, else the system scope: one block */
			v = varsym_env_lookup(r->env->block, r->env->len,
					      t + start, nlen, value,
					      sizeof(value) - 1);
			if (v == -ENOENT)
				v = 0;
			if (v < 0 && !r->err)
				r->err = (int)v;
			if (v < 0)
				v = 0;
		}
		emit(r, value, v > 0 ? v : 0, on && v > 0);
		if (!dflt) {
			if (on && v == 0 && !r->err)
				r->err = r->secure ? -EACCES : -ENOENT;
			continue;
		}
		if (word(r, depth + 1, on && v == 0))
			return -EINVAL;
		if (r->i == r->len)
			return -EINVAL;
		r->i++;			/* the '}' */
	}
	return depth ? -EINVAL : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ref r;
	struct env e;
	struct varsym_caller c = { .getenv = block_getenv, .ctx = &e };
	const char *t, *nul;
	size_t tlen, outsize;
	char *out;
	ssize_t got;
	int checked;

	if (size < 2)
		return 0;
	c.secure = data[0] & 1;
	if (data[0] & 4)
		c.builtins = &fuzz_builtins;
	outsize = data[1] & 1 ? VARSYM_PATH_MAX : (size_t)data[1] * 16 + 1;
	t = (const char *)data + 2;
	size -= 2;
	nul = memchr(t, '\0', size);
	tlen = nul ? (size_t)(nul - t) : size;
	e.block = nul ? nul + 1 : t + size;
	e.len = nul ? size - tlen - 1 : 0;
	if (data[0] & 2) {
		c.system_scope = e.block;
		c.system_scope_len = e.len;
	}

	out = malloc(outsize);
	checked = varsym_template_check(t, tlen);
	got = varsym_template_expand(t, tlen, &c, out, outsize);
	if (checked && got != -EINVAL)
		abort();
	if (!checked && got == -EINVAL)
		abort();
	if (got >= 0 && ((size_t)got >= outsize || out[got] != '\0' ||
			 strlen(out) > (size_t)got))
		abort();

	/* the reference, with a PATH_MAX output, when lengths allow */
	if (!checked && outsize == VARSYM_PATH_MAX && tlen < VARSYM_PATH_MAX) {
		r = (struct ref){ .t = t, .len = tlen, .env = &e,
				  .secure = c.secure, .system = data[0] & 2,
				  .builtins = data[0] & 4 };
		if (word(&r, 0, true))
			abort();		/* check() said it was fine */
		if (!r.err && r.olen == 0)
			r.err = -ENOENT;
		if (r.err ? got != r.err :
		    (got != (ssize_t)r.olen || memcmp(out, r.out, r.olen)))
			abort();
	}
	free(out);
	return 0;
}

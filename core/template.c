// SPDX-License-Identifier: GPL-2.0-only
/*
 * template.c - parsing and expanding link templates (docs/SPEC.md section 2).
 *
 *   ${NAME}        the value; unset or empty makes the link unresolvable
 *   ${@name}       a built-in's value (@uid, @hostname...: scope.c)
 *   ${NAME:-WORD}  the value, or WORD (itself a template) when unset or empty
 *   $$             a literal '$'; any other '$' is literal too
 *
 * One left-to-right walk, run(), serves both jobs: with no caller it only
 * checks the syntax (what symlink(2) does before storing), with a caller it
 * expands.  Expansion makes two passes, a check then the expansion: an
 * expanding pass stops at the first variable that leaves the link
 * unresolved, before it has seen the rest, so only the check first makes a
 * malformed template -EINVAL in any environment.
 * Nesting is bounded by VARSYM_NEST_MAX, so a pass keeps its open
 * ${NAME:- frames in a small array instead of recursing.
 */
#include "internal.h"

struct frame {
	const char *name;	/* the variable whose WORD we are inside */
	size_t name_len;
	size_t out_start;	/* where the WORD's expansion begins in out */
	bool outer_emit;	/* whether the text around the frame is used */
};

struct expansion {
	const struct varsym_caller *caller;	/* NULL: check only */
	char *out;
	size_t size;
	size_t len;
};

static int put(struct expansion *x, char c)
{
	if (x->len + 1 >= x->size)
		return -ENAMETOOLONG;
	x->out[x->len++] = c;
	return 0;
}

/* Appends the variable's value: its length, 0 if unset or empty, or -errno. */
static ssize_t put_value(struct expansion *x, const char *name, size_t len)
{
	const struct varsym_caller *c = x->caller;
	enum varsym_source from;
	ssize_t n;

	n = varsym_value(c, name, len, x->out + x->len, x->size - 1 - x->len,
			 &from);
	if (n > 0) {
		varsym_note(c, name, len, from, x->out + x->len, n);
		x->len += n;
	}
	return n;
}

/*
 * Length of the variable name at t[0, len), 0 if there is none: a
 * variable, or "@" and a built-in's name (checked by the caller).
 */
static size_t name_length(const char *t, size_t len)
{
	size_t n = 0;

	if (len && t[0] == '@') {
		for (n = 1; n < len && n <= VARSYM_NAME_MAX &&
		     t[n] >= 'a' && t[n] <= 'z'; n++)
			;
		return n;
	}
	while (n < len && n <= VARSYM_NAME_MAX &&
	       varsym_name_char(t[n], n == 0))
		n++;
	return n;
}

static ssize_t run(const char *t, size_t len, struct expansion *x)
{
	struct frame frames[VARSYM_NEST_MAX];
	unsigned int depth = 0;
	bool emit = x->caller;
	size_t i = 0;
	ssize_t n;

	if (len >= VARSYM_PATH_MAX)
		return -EINVAL;
	while (i < len) {
		const char *name;
		size_t name_len;

		if (t[i] == '}' && depth) {		/* end of a WORD */
			struct frame *f = &frames[--depth];

			if (emit)
				varsym_note(x->caller, f->name, f->name_len,
					    VARSYM_FROM_DEFAULT,
					    x->out + f->out_start,
					    x->len - f->out_start);
			emit = f->outer_emit;
			i++;
			continue;
		}
		if (t[i] != '$' || i + 1 == len ||
		    (t[i + 1] != '{' && t[i + 1] != '$')) {
			if (emit && put(x, t[i]))
				return -ENAMETOOLONG;
			i++;
			continue;
		}
		if (t[i + 1] == '$') {
			if (emit && put(x, '$'))
				return -ENAMETOOLONG;
			i += 2;
			continue;
		}
		/* "${": a name, then "}" or ":-" */
		if (depth == VARSYM_NEST_MAX)
			return -EINVAL;
		name = t + i + 2;
		name_len = name_length(name, len - i - 2);
		if (!name_len || name_len > VARSYM_NAME_MAX ||
		    (name[0] == '@' && varsym_builtin_id(name, name_len) < 0))
			return -EINVAL;
		i += 2 + name_len;
		if (i < len && t[i] == '}') {
			i++;
			if (!emit)
				continue;
			n = put_value(x, name, name_len);
			if (n < 0)
				return n;
			if (n == 0) {
				varsym_note(x->caller, name, name_len,
					    VARSYM_FROM_NOTHING, NULL, 0);
				/* each enclosing variable was unset too */
				while (depth--)
					varsym_note(x->caller,
						    frames[depth].name,
						    frames[depth].name_len,
						    VARSYM_FROM_DEFAULT, NULL, 0);
				return x->caller->secure ? -EACCES : -ENOENT;
			}
			continue;
		}
		if (i + 1 >= len || t[i] != ':' || t[i + 1] != '-')
			return -EINVAL;
		i += 2;
		frames[depth] = (struct frame){
			.name = name,
			.name_len = name_len,
			.out_start = x->len,
			.outer_emit = emit,
		};
		depth++;
		if (emit) {
			n = put_value(x, name, name_len);
			if (n < 0)
				return n;
			emit = n == 0;		/* the WORD is used */
		}
	}
	if (depth)
		return -EINVAL;			/* an unclosed "${" */
	if (!x->caller)
		return 0;
	if (!x->len)
		return -ENOENT;
	x->out[x->len] = '\0';
	return x->len;
}

int varsym_template_check(const char *tmpl, size_t len)
{
	struct expansion x = { 0 };

	return run(tmpl, len, &x);
}

ssize_t varsym_template_expand(const char *tmpl, size_t len,
			       const struct varsym_caller *caller, char *out,
			       size_t size)
{
	struct expansion x = {
		.caller = caller,
		.out = out,
		.size = size,
	};
	int ret;

	/* A malformed template is -EINVAL whatever the environment holds. */
	ret = varsym_template_check(tmpl, len);
	if (ret)
		return ret;
	if (!size)
		return -ENAMETOOLONG;
	return run(tmpl, len, &x);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * scope.c - where a variable's value comes from (docs/SPEC.md section 4):
 * the caller's environment, its user scope, the mount's system scope, or
 * a built-in name; and the edits that make a new scope.
 *
 * A scope is a block laid out as an environment: NUL-terminated
 * NAME=VALUE entries, each name once.  The file systems publish a new
 * block for every change and never change one in place, so a resolution
 * that holds a block sees every value of one change or none of them.
 */
#include "internal.h"

static const char *const builtin_names[VARSYM_BUILTIN_COUNT] = {
	[VARSYM_BUILTIN_UID] = "@uid",
	[VARSYM_BUILTIN_GID] = "@gid",
	[VARSYM_BUILTIN_RUID] = "@ruid",
	[VARSYM_BUILTIN_RGID] = "@rgid",
	[VARSYM_BUILTIN_HOSTNAME] = "@hostname",
	[VARSYM_BUILTIN_MACHINE] = "@machine",
	[VARSYM_BUILTIN_OSRELEASE] = "@osrelease",
};

int varsym_builtin_id(const char *name, size_t len)
{
	int i;

	for (i = 0; i < VARSYM_BUILTIN_COUNT; i++)
		if (strlen(builtin_names[i]) == len &&
		    !memcmp(builtin_names[i], name, len))
			return i;
	return -1;
}

static ssize_t put_text(const char *text, char *buf, size_t size)
{
	size_t len = text ? strlen(text) : 0;

	if (!len)
		return -ENOENT;
	if (len > size)
		return -ENAMETOOLONG;
	memcpy(buf, text, len);
	return len;
}

static ssize_t put_number(unsigned int n, char *buf, size_t size)
{
	char num[16];

	snprintf(num, sizeof(num), "%u", n);
	return put_text(num, buf, size);
}

/* A built-in's value; the real ids are the invoker's: unset when secure. */
static ssize_t builtin_value(const struct varsym_caller *c, int id,
			     char *buf, size_t size)
{
	const struct varsym_builtins *b = c->builtins;

	if (!b)
		return -ENOENT;
	switch (id) {
	case VARSYM_BUILTIN_UID:
		return put_number(b->uid, buf, size);
	case VARSYM_BUILTIN_GID:
		return put_number(b->gid, buf, size);
	case VARSYM_BUILTIN_RUID:
		return c->secure ? -ENOENT : put_number(b->ruid, buf, size);
	case VARSYM_BUILTIN_RGID:
		return c->secure ? -ENOENT : put_number(b->rgid, buf, size);
	case VARSYM_BUILTIN_HOSTNAME:
		return put_text(b->hostname, buf, size);
	case VARSYM_BUILTIN_MACHINE:
		return put_text(b->machine, buf, size);
	default:
		return put_text(b->osrelease, buf, size);
	}
}

static ssize_t scope_value(const char *block, size_t len, const char *name,
			   size_t name_len, char *buf, size_t size)
{
	if (!block)
		return -ENOENT;
	return varsym_env_lookup(block, len, name, name_len, buf, size);
}

ssize_t varsym_value(const struct varsym_caller *c, const char *name,
		     size_t len, char *buf, size_t size,
		     enum varsym_source *from)
{
	ssize_t n;
	int id = name[0] == '@' ? varsym_builtin_id(name, len) : -1;

	if (id >= 0) {
		if (c->used)
			*c->used |= VARSYM_USED_BUILTIN;
		*from = VARSYM_FROM_BUILTIN;
		n = builtin_value(c, id, buf, size);
		return n == -ENOENT ? 0 : n;
	}
	if (!c->secure) {
		*from = VARSYM_FROM_ENV;
		n = c->getenv(c->ctx, name, len, buf, size);
		if (n && n != -ENOENT)
			return n;
		if (c->used)
			*c->used |= VARSYM_USED_USER;
		*from = VARSYM_FROM_USER;
		n = scope_value(c->user_scope, c->user_scope_len, name, len,
				buf, size);
		if (n && n != -ENOENT)
			return n;
	}
	*from = VARSYM_FROM_SYSTEM;
	n = scope_value(c->system_scope, c->system_scope_len, name, len, buf,
			size);
	return n == -ENOENT ? 0 : n;
}

bool varsym_scope_next(const char *block, size_t len, size_t *pos,
		       struct varsym_scope_entry *e)
{
	const char *p, *nul, *eq;

	if (*pos >= len)
		return false;
	p = block + *pos;
	nul = memchr(p, '\0', len - *pos);
	if (!nul)
		nul = block + len;
	eq = memchr(p, '=', nul - p);
	e->name = p;
	e->name_len = eq ? (size_t)(eq - p) : (size_t)(nul - p);
	e->value = eq ? eq + 1 : nul;
	e->value_len = eq ? (size_t)(nul - eq - 1) : 0;
	e->has_value = eq;
	*pos = nul - block + 1;
	return true;
}

static VARSYM_PRINTF(3, 4) int refuse(char *msg, size_t size, const char *fmt,
				      ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Whether block holds an entry named name (edits: "NAME" counts too). */
static bool names(const char *block, size_t len, const char *name,
		  size_t name_len, size_t end)
{
	struct varsym_scope_entry e;
	size_t pos = 0;

	while (pos < end && varsym_scope_next(block, len, &pos, &e))
		if (e.name_len == name_len && !memcmp(e.name, name, name_len))
			return true;
	return false;
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* The first control byte of s (len bytes), or NULL. */
static const char *control_in(const char *s, size_t len)
{
	const char *end = s + len;

	for (; s < end; s++)
		if (is_control(*s))
			return s;
	return NULL;
}

/*
 * A control byte in an entry: refused with one message wherever a name or
 * a value comes in (docs/SPEC.md section 4, "Bounds").  What is shown of
 * the name stops before the byte, so that the message holds none itself.
 */
static int check_printable(const struct varsym_scope_entry *e, char *msg,
			   size_t size)
{
	const char *in_name = control_in(e->name, e->name_len);
	const char *p = in_name;
	size_t shown = in_name ? (size_t)(in_name - e->name) : e->name_len;

	if (!p && e->has_value)
		p = control_in(e->value, e->value_len);
	if (!p)
		return 0;
	return refuse(msg, size,
		      "control character 0x%02x in '%.*s%s': names and values are printable text",
		      (unsigned char)*p, (int)(shown > 64 ? 64 : shown),
		      e->name, in_name ? "..." : "=...");
}

int varsym_entry_check(const struct varsym_scope_entry *e, char *msg,
		       size_t size)
{
	int err = check_printable(e, msg, size);

	if (err)
		return err;
	if (e->name_len && e->name[0] == '@' &&
	    varsym_builtin_id(e->name, e->name_len) >= 0)
		return refuse(msg, size,
			      "'%.*s' is a built-in name: nobody sets it",
			      (int)e->name_len, e->name);
	if (!varsym_name_valid(e->name, e->name_len))
		return refuse(msg, size, "invalid variable name '%.*s'",
			      (int)(e->name_len > 64 ? 64 : e->name_len),
			      e->name);
	if (e->has_value && !e->value_len)
		return refuse(msg, size,
			      "empty value for '%.*s' (unset it instead)",
			      (int)e->name_len, e->name);
	if (e->value_len >= VARSYM_PATH_MAX)
		return refuse(msg, size,
			      "value of '%.*s' is longer than PATH_MAX - 1 bytes",
			      (int)e->name_len, e->name);
	return 0;
}

/* Each edit: a valid, settable name, a value in bounds, each name once. */
static int check_edits(const char *edits, size_t len, char *msg,
		       size_t size)
{
	struct varsym_scope_entry e;
	size_t pos = 0, at, count = 0;
	int err;

	if (len && edits[len - 1] == '\0')
		len--;
	if (!len)
		return refuse(msg, size, "no NAME=VALUE or NAME given");
	for (at = 0; varsym_scope_next(edits, len, &pos, &e); at = pos) {
		if (++count > VARSYM_SCOPE_ENTRIES_MAX)
			return refuse(msg, size,
				      "more than %d names in one change",
				      VARSYM_SCOPE_ENTRIES_MAX);
		err = varsym_entry_check(&e, msg, size);
		if (err)
			return err;
		if (names(edits, len, e.name, e.name_len, at))
			return refuse(msg, size, "'%.*s' given twice",
				      (int)e.name_len, e.name);
	}
	return 0;
}

static bool append(char *out, size_t size, size_t *len, const char *entry,
		   size_t entry_len)
{
	if (*len + entry_len + 1 > size)
		return false;
	memcpy(out + *len, entry, entry_len);
	out[*len + entry_len] = '\0';
	*len += entry_len + 1;
	return true;
}

ssize_t varsym_scope_edit(const char *old, size_t old_len, const char *edits,
			  size_t edits_len, char *out, size_t size, char *msg,
			  size_t msg_size)
{
	struct varsym_scope_entry e;
	size_t pos = 0, len = 0, count = 0;
	int err;

	err = check_edits(edits, edits_len, msg, msg_size);
	if (err)
		return err;
	if (size > VARSYM_SCOPE_MAX)
		size = VARSYM_SCOPE_MAX;
	/* the entries no edit names keep their place */
	while (varsym_scope_next(old, old_len, &pos, &e)) {
		if (names(edits, edits_len, e.name, e.name_len, edits_len))
			continue;
		if (++count > VARSYM_SCOPE_ENTRIES_MAX ||
		    !append(out, size, &len, e.name, e.value + e.value_len - e.name))
			goto full;
	}
	for (pos = 0; varsym_scope_next(edits, edits_len, &pos, &e);) {
		if (!e.has_value)	/* "NAME": unset */
			continue;
		if (++count > VARSYM_SCOPE_ENTRIES_MAX ||
		    !append(out, size, &len, e.name, e.value + e.value_len - e.name))
			goto full;
	}
	return len;
full:
	snprintf(msg, msg_size,
		 "the scope would hold more than %d bytes or %d names",
		 VARSYM_SCOPE_MAX, VARSYM_SCOPE_ENTRIES_MAX);
	return -E2BIG;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * options.c - the mount-option parser shared by varsymfs.ko and the daemon.
 *
 * The kernel hands each option to parse_one() from its fs_context, the daemon
 * from its fuse_opt callback, so both accept the same words and print the same
 * messages.  A bare word is the seed's variable (-o UNIVERSE) unless it is an
 * option of the mount layer, which the caller's layer handles.
 */
#include "varsym_core.h"

/*
 * Words that mount(8), the VFS or FUSE take for themselves.  They are never
 * variable names when given bare; var=NAME reaches a variable of that name.
 * First the words of fstab and mount(8) that no file system takes (and
 * atime flags a FUSE mount of libfuse 3.14 cannot): a layer that passes
 * the others on (the FUSE program, to libfuse) drops these.
 */
static const char *const mount_only_options[] = {
	"defaults", "diratime", "nodiratime", "relatime", "norelatime",
	"strictatime", "nostrictatime", "lazytime", "nolazytime", "mand",
	"nomand", "iversion", "noiversion", "silent", "loud", "auto", "noauto",
	"user", "nouser", "users", "owner", "group", "nofail", "_netdev",
};

/* The others: the VFS's, and FUSE's (libfuse and mount.fuse3). */
static const char *const foreign_options[] = {
	"source", "rw", "ro", "suid", "nosuid", "dev", "nodev", "exec",
	"noexec", "sync", "async", "dirsync", "remount", "bind", "atime",
	"noatime",
	"allow_other", "allow_root", "default_permissions", "auto_unmount",
	"fsname", "subtype", "max_read", "blkdev", "blksize", "debug",
	"context", "fscontext", "defcontext", "rootcontext", "setuid",
	"drop_privileges", "clone_fd", "max_idle_threads", "max_threads",
};

static bool listed(const char *key, const char *const *words, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(key, words[i]))
			return true;
	return false;
}

bool varsym_opt_mount_only(const char *key)
{
	/* util-linux userspace options: x-systemd.automount and friends */
	if (key[0] == 'x' && key[1] == '-')
		return true;
	return listed(key, mount_only_options, ARRAY_SIZE(mount_only_options));
}

static bool is_foreign(const char *key)
{
	return varsym_opt_mount_only(key) ||
	       listed(key, foreign_options, ARRAY_SIZE(foreign_options));
}

void varsym_opts_init(struct varsym_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->mode = VARSYM_TEMPLATE_MODE_DEFAULT;
	o->nr_links = VARSYM_NR_LINKS_DEFAULT;
}

/* Unsigned number in base 8 or 10, no sign, no spaces, at most max. */
static bool parse_uint(const char *s, unsigned int base, unsigned long max,
		       unsigned int *out)
{
	unsigned long v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		unsigned int d = *s - '0';

		if (*s < '0' || d >= base)
			return false;
		v = v * base + d;
		if (v > max)
			return false;
	}
	*out = v;
	return true;
}

static VARSYM_PRINTF(3, 4) int fail(char *msg, size_t size,
				    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, size, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* Copies a string option into its fixed field; 0 or -EINVAL. */
static int set_string(struct varsym_opts *o, unsigned int bit,
		      const char *key, const char *value, char *field,
		      size_t *field_len, char *msg, size_t size)
{
	size_t len = strlen(value);

	if (o->given & bit)
		return fail(msg, size, "option '%s=' given twice", key);
	if (!len)
		return fail(msg, size, "empty value in '%s='", key);
	if (len >= VARSYM_PATH_MAX)
		return fail(msg, size,
			    "value of '%s=' is longer than PATH_MAX - 1 bytes",
			    key);
	/* mount(8) splits on commas, and mountinfo could not show one */
	if (memchr(value, ',', len))
		return fail(msg, size, "value of '%s=' contains a comma", key);
	memcpy(field, value, len + 1);
	*field_len = len;
	o->given |= bit;
	return 0;
}

/* bare is true for -o NAME, false for -o var=NAME. */
static int set_var(struct varsym_opts *o, const char *name, bool bare,
		   char *msg, size_t size)
{
	size_t len = strlen(name);

	if (len > VARSYM_NAME_MAX)
		return fail(msg, size,
			    "variable name '%.32s...' is longer than %d bytes",
			    name, VARSYM_NAME_MAX);
	if (!varsym_name_valid(name, len) &&
	    !(name[0] == '@' && varsym_builtin_id(name, len) >= 0))
		return fail(msg, size, bare ?
			    "unknown option or invalid variable name '%s'" :
			    "invalid variable name in 'var=%s'", name);
	/* -o UNIVERSE,FOO: FOO is more likely a misspelt option */
	if ((o->given & VARSYM_OPT_VAR) && bare)
		return fail(msg, size,
			    "unknown option '%s' (the mount's variable is '%s' already)",
			    name, o->var);
	if (o->given & VARSYM_OPT_VAR)
		return fail(msg, size, "variable given twice: '%s' and '%s'",
			    o->var, name);
	if (o->given & VARSYM_OPT_SEARCH)
		return fail(msg, size,
			    "variable '%s' given, but 'search=%s' makes this a search mount",
			    name, o->var);
	memcpy(o->var, name, len + 1);
	o->var_len = len;
	o->given |= VARSYM_OPT_VAR;
	return 0;
}

static int set_search(struct varsym_opts *o, const char *name, char *msg,
		      size_t size)
{
	size_t len = strlen(name);

	if (o->given & VARSYM_OPT_SEARCH)
		return fail(msg, size, "option 'search' given twice");
	/*
	 * (varsym_name_valid() checks it too, but the compiler must see it:
	 * else the kernel's fortified memcpy() below adds a check whose
	 * message names the build directory, and the module DKMS builds
	 * would differ from the one tested)
	 */
	if (len > VARSYM_NAME_MAX || !varsym_name_valid(name, len))
		return fail(msg, size, "invalid variable name in 'search=%.32s'",
			    name);
	if (o->given & VARSYM_OPT_VAR)
		return fail(msg, size, "variable given twice: '%s' and 'search=%s'",
			    o->var, name);
	memcpy(o->var, name, len + 1);
	o->var_len = len;
	o->given |= VARSYM_OPT_SEARCH;
	return 0;
}

/* fallback=DIR[:DIR...]: absolute, VARSYM_SEARCH_FALLBACK_MAX at most. */
static int set_fallback(struct varsym_opts *o, const char *value, char *msg,
			size_t size)
{
	const char *p = value;
	unsigned int n = 0;
	int ret;

	ret = set_string(o, VARSYM_OPT_FALLBACK, "fallback", value, o->dflt,
			 &o->dflt_len, msg, size);
	if (ret)
		return ret;
	for (;;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (p[0] != '/' || !len) {
			o->given &= ~VARSYM_OPT_FALLBACK;
			return fail(msg, size,
				    "'fallback=' entry '%.*s' is not an absolute path",
				    (int)(len > 64 ? 64 : len), p);
		}
		if (++n > VARSYM_SEARCH_FALLBACK_MAX) {
			o->given &= ~VARSYM_OPT_FALLBACK;
			return fail(msg, size,
				    "'fallback=' has more than %d directories",
				    VARSYM_SEARCH_FALLBACK_MAX);
		}
		if (!end)
			return 0;
		p = end + 1;
	}
}

static int set_number(struct varsym_opts *o, unsigned int bit,
		      const char *key, const char *value, unsigned int base,
		      unsigned long max, unsigned int *field, char *msg,
		      size_t size)
{
	if (o->given & bit)
		return fail(msg, size, "option '%s=' given twice", key);
	if (!parse_uint(value, base, max, field))
		return fail(msg, size, "invalid value in '%s=%s'", key, value);
	o->given |= bit;
	return 0;
}

int varsym_opts_parse_one(struct varsym_opts *o, const char *key,
			  const char *value, char *msg, size_t size)
{
	static const char *const valued[] = {
		"var", "default", "prefix", "uid", "gid", "mode", "nr_links",
		"fallback",
	};
	size_t i;

	if (is_foreign(key))
		return VARSYM_OPT_FOREIGN;
	/* -o search: the search mode's variable is PATH (var=search names one) */
	if (!strcmp(key, "search"))
		return set_search(o, value ? value : VARSYM_SEARCH_VAR_DEFAULT,
				  msg, size);
	if (!value) {
		for (i = 0; i < ARRAY_SIZE(valued); i++)
			if (!strcmp(key, valued[i]))
				return fail(msg, size,
					    "option '%s' needs a value ('%s=...')",
					    key, key);
		return set_var(o, key, true, msg, size);
	}
	if (!strcmp(key, "var"))
		return set_var(o, value, false, msg, size);
	if (!strcmp(key, "default"))
		return set_string(o, VARSYM_OPT_DEFAULT, key, value, o->dflt,
				  &o->dflt_len, msg, size);
	if (!strcmp(key, "fallback"))
		return set_fallback(o, value, msg, size);
	if (!strcmp(key, "prefix"))
		return set_string(o, VARSYM_OPT_PREFIX, key, value, o->prefix,
				  &o->prefix_len, msg, size);
	/* (uid_t)-1 means "no id" to chown(2), so it is no owner. */
	if (!strcmp(key, "uid"))
		return set_number(o, VARSYM_OPT_UID, key, value, 10,
				  0xfffffffeUL, &o->uid, msg, size);
	if (!strcmp(key, "gid"))
		return set_number(o, VARSYM_OPT_GID, key, value, 10,
				  0xfffffffeUL, &o->gid, msg, size);
	if (!strcmp(key, "nr_links"))
		return set_number(o, VARSYM_OPT_NR_LINKS, key, value, 10,
				  0x7fffffffUL, &o->nr_links, msg, size);
	if (!strcmp(key, "mode"))
		return set_number(o, VARSYM_OPT_MODE, key, value, 8, 07777,
				  &o->mode, msg, size);
	return fail(msg, size, "unknown option '%s=%s'", key, value);
}

int varsym_opts_finish(const struct varsym_opts *o, char *msg, size_t size)
{
	static const struct {
		unsigned int bit;
		const char *name;
	} template_only[] = {
		{ VARSYM_OPT_UID, "uid=" },
		{ VARSYM_OPT_GID, "gid=" },
		{ VARSYM_OPT_MODE, "mode=" },
		{ VARSYM_OPT_NR_LINKS, "nr_links=" },
	}, seed_only[] = {
		{ VARSYM_OPT_DEFAULT, "default=" },
		{ VARSYM_OPT_PREFIX, "prefix=" },
	};
	size_t i;

	if ((o->given & VARSYM_OPT_FALLBACK) && !varsym_opts_search_mode(o))
		return fail(msg, size,
			    "option 'fallback=' applies only to search mode ('search' or 'search=VAR')");
	if (!o->nr_links)
		return fail(msg, size,
			    "'nr_links=0': a mount needs room for one link at least");
	if (varsym_opts_search_mode(o)) {
		for (i = 0; i < ARRAY_SIZE(template_only); i++)
			if (o->given & template_only[i].bit)
				return fail(msg, size,
					    "option '%s' applies only to template mode, not to search mode",
					    template_only[i].name);
		for (i = 0; i < ARRAY_SIZE(seed_only); i++)
			if (o->given & seed_only[i].bit)
				return fail(msg, size,
					    "option '%s' applies only to seed mode, not to search mode",
					    seed_only[i].name);
		return 0;
	}
	if (varsym_opts_seed_mode(o)) {
		for (i = 0; i < ARRAY_SIZE(template_only); i++)
			if (o->given & template_only[i].bit)
				return fail(msg, size,
					    "option '%s' applies only to template mode (no variable), but variable '%s' is given",
					    template_only[i].name, o->var);
		if (o->prefix_len + o->dflt_len >= VARSYM_PATH_MAX)
			return fail(msg, size,
				    "'prefix=' and 'default=' together are longer than PATH_MAX - 1 bytes");
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(seed_only); i++)
		if (o->given & seed_only[i].bit)
			return fail(msg, size,
				    "option '%s' needs a variable (-o NAME or var=NAME); without one the mount is in template mode",
				    seed_only[i].name);
	return 0;
}

void varsym_opts_show(const struct varsym_opts *o,
		      void (*show)(void *ctx, const char *key,
				   const char *value),
		      void *ctx)
{
	char num[16];

	if (varsym_opts_search_mode(o)) {
		show(ctx, "search", o->var);
		if (o->given & VARSYM_OPT_FALLBACK)
			show(ctx, "fallback", o->dflt);
		return;
	}
	if (varsym_opts_seed_mode(o)) {
		show(ctx, "var", o->var);
		if (o->given & VARSYM_OPT_PREFIX)
			show(ctx, "prefix", o->prefix);
		if (o->given & VARSYM_OPT_DEFAULT)
			show(ctx, "default", o->dflt);
		return;
	}
	if (o->uid) {
		snprintf(num, sizeof(num), "%u", o->uid);
		show(ctx, "uid", num);
	}
	if (o->gid) {
		snprintf(num, sizeof(num), "%u", o->gid);
		show(ctx, "gid", num);
	}
	if (o->mode != VARSYM_TEMPLATE_MODE_DEFAULT) {
		snprintf(num, sizeof(num), "%o", o->mode);
		show(ctx, "mode", num);
	}
	if (o->nr_links != VARSYM_NR_LINKS_DEFAULT) {
		snprintf(num, sizeof(num), "%u", o->nr_links);
		show(ctx, "nr_links", num);
	}
}

struct opts_text {
	char *buf;
	size_t size, len;
};

static void add_text(void *ctx, const char *key, const char *value)
{
	struct opts_text *t = ctx;
	int n = snprintf(t->buf + t->len, t->size - t->len, "%s%s=%s",
			 t->len ? "," : "", key, value);

	if (n > 0)
		t->len += (size_t)n < t->size - t->len ? (size_t)n :
			  t->size - t->len - 1;
}

size_t varsym_opts_text(const struct varsym_opts *o, char *buf, size_t size)
{
	struct opts_text t = { .buf = buf, .size = size };

	if (!size)
		return 0;
	buf[0] = '\0';
	varsym_opts_show(o, add_text, &t);
	return t.len;
}

static void count_text(void *ctx, const char *key, const char *value)
{
	size_t *len = ctx;

	*len += (*len ? 1 : 0) + strlen(key) + 1 + strlen(value);
}

size_t varsym_opts_text_len(const struct varsym_opts *o)
{
	size_t len = 0;

	varsym_opts_show(o, count_text, &len);
	return len;
}

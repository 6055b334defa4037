// SPDX-License-Identifier: GPL-2.0-only
/*
 * conf.c - varsym.conf, the system scopes loaded at mount time
 * (varsym.conf(5)).  User space only: the varsym command and the FUSE
 * program read it; the module's mount helper runs the command.
 *
 *   # a comment (also ; and indented)
 *   [/usr/lib/varsym]        the mount point the lines below belong to
 *   PERL_VERSION = 5.24.0
 *
 * Blanks around a line and around its '=' are not part of it; everything
 * else after the '=' is the value, a '#' included: no end-of-line
 * comments, as in sysctl.conf and systemd's files.  As there, a bad line
 * costs only itself: it is reported with its number and skipped, and the
 * rest is applied.  Only the mount's own sections are checked, so that
 * one mount's typo is never reported at another's; a broken section
 * header, whose mount nobody can tell, is reported at every mount's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static VARSYM_PRINTF(3, 4) enum varsym_conf_kind bad(char *msg, size_t size,
						     const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, size, fmt, ap);
	va_end(ap);
	return VARSYM_CONF_BAD;
}

enum varsym_conf_kind varsym_conf_line(const char *p, size_t n,
				       struct varsym_conf_line *l, char *msg,
				       size_t size)
{
	const char *end = p + n, *eq, *name_end;

	memset(l, 0, sizeof(*l));
	if (memchr(p, '\0', n))
		return l->kind = bad(msg, size, "a NUL byte");
	while (p < end && is_blank(*p))
		p++;
	while (end > p && is_blank(end[-1]))
		end--;
	if (p == end || *p == '#' || *p == ';')
		return l->kind = VARSYM_CONF_NOTHING;
	if (*p == '[') {
		l->header = true;
		if (end - p < 3 || end[-1] != ']' || p[1] != '/')
			return l->kind = bad(msg, size,
					     "a section is [/MOUNT/POINT]; the lines up to the next one are ignored");
		l->path = p + 1;
		l->path_len = end - p - 2;
		return l->kind = VARSYM_CONF_SECTION;
	}
	eq = memchr(p, '=', end - p);
	if (!eq)
		return l->kind = bad(msg, size, "NAME=VALUE expected");
	for (name_end = eq; name_end > p && is_blank(name_end[-1]); name_end--)
		;
	l->entry.name = p;
	l->entry.name_len = name_end - p;
	for (eq++; eq < end && is_blank(*eq); eq++)
		;
	l->entry.value = eq;
	l->entry.value_len = end - eq;
	l->entry.has_value = true;
	if (varsym_entry_check(&l->entry, msg, size))
		return l->kind = VARSYM_CONF_BAD;
	return l->kind = VARSYM_CONF_ENTRY;
}

/* path[0, len) without trailing slashes ("/" stays), against mount. */
static bool same_mount(const char *path, size_t len, const char *mount)
{
	size_t mlen = strlen(mount);

	while (len > 1 && path[len - 1] == '/')
		len--;
	while (mlen > 1 && mount[mlen - 1] == '/')
		mlen--;
	return len == mlen && !memcmp(path, mount, len);
}

bool varsym_conf_section_of(const struct varsym_conf_line *l,
			    const char *mount)
{
	return l->kind == VARSYM_CONF_SECTION &&
	       same_mount(l->path, l->path_len, mount);
}

/*
 * The entry of out (out_len bytes) named like e: its index, with its
 * offset and length (NUL included); or -1.
 */
static int find(const char *out, size_t out_len,
		const struct varsym_scope_entry *e, size_t *at,
		size_t *entry_len)
{
	struct varsym_scope_entry f;
	size_t pos = 0;
	int i;

	for (i = 0, *at = 0; varsym_scope_next(out, out_len, &pos, &f); i++) {
		if (f.name_len == e->name_len &&
		    !memcmp(f.name, e->name, e->name_len)) {
			*entry_len = pos - *at;
			return i;
		}
		*at = pos;
	}
	return -1;
}

static const char hash_in_value[] =
	"holds ' #', which is part of it: varsym.conf has no end-of-line comments";

/* Why a value may not be what its writer meant, or NULL. */
static const char *doubt(const struct varsym_scope_entry *e)
{
	const char *v = e->value;
	size_t i;

	for (i = 1; i < e->value_len; i++)
		if (v[i] == '#' && v[i - 1] == ' ')
			return hash_in_value;
	if (e->value_len > 1 && (*v == '"' || *v == '\'') &&
	    v[e->value_len - 1] == *v)
		return "is in quotes, which are part of it";
	return NULL;
}

struct state {
	void (*report)(void *ctx, unsigned int line, bool skipped,
		       const char *why);
	void *ctx;
	char *out;
	size_t len, size, count;
	unsigned int lines[VARSYM_SCOPE_ENTRIES_MAX];	/* of out's entries */
};

static VARSYM_PRINTF(4, 5) void say(struct state *st, unsigned int line,
				    bool skipped, const char *fmt, ...)
{
	char why[VARSYM_MSG_MAX + 64];
	va_list ap;

	if (!st->report)
		return;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	st->report(st->ctx, line, skipped, why);
}

/*
 * Adds e, of the given line, to the block: a name set again loses its
 * earlier value (the last line wins, as in sysctl.conf), which is said.
 */
static void add(struct state *st, unsigned int line,
		const struct varsym_scope_entry *e)
{
	size_t n = e->name_len + 1 + e->value_len + 1, at = 0, old = 0;
	int i = find(st->out, st->len, e, &at, &old);
	const char *why = doubt(e);
	size_t others = i >= 0 ? st->count - 1 : st->count;

	if (st->len - old + n > st->size ||
	    others >= VARSYM_SCOPE_ENTRIES_MAX) {
		say(st, line, true, "past %d bytes or %d names for one mount",
		    VARSYM_SCOPE_MAX, VARSYM_SCOPE_ENTRIES_MAX);
		return;
	}
	if (i >= 0) {
		say(st, line, false, "'%.*s' is set on line %u too: this line wins",
		    (int)e->name_len, e->name, st->lines[i]);
		memmove(st->out + at, st->out + at + old, st->len - at - old);
		st->len -= old;
		memmove(st->lines + i, st->lines + i + 1,
			(st->count - i - 1) * sizeof(st->lines[0]));
		st->count--;
	}
	if (why)
		say(st, line, false, "the value of '%.*s' %s",
		    (int)e->name_len, e->name, why);
	memcpy(st->out + st->len, e->name, e->name_len);
	st->out[st->len + e->name_len] = '=';
	memcpy(st->out + st->len + e->name_len + 1, e->value, e->value_len);
	st->out[st->len + n - 1] = '\0';
	st->len += n;
	st->lines[st->count++] = line;
}

size_t varsym_conf_section(const char *text, size_t len, const char *mount,
			   char *out, size_t size,
			   void (*report)(void *ctx, unsigned int line,
					  bool skipped, const char *why),
			   void *ctx)
{
	enum { BEFORE, OURS, OTHER } where = BEFORE;
	struct state st;
	struct varsym_conf_line l;
	char msg[VARSYM_MSG_MAX];
	unsigned int line = 0;
	size_t pos = 0;

	st = (struct state){
		.report = report, .ctx = ctx, .out = out,
		.size = size > VARSYM_SCOPE_MAX ? VARSYM_SCOPE_MAX : size,
	};
	while (pos < len) {
		const char *p = text + pos, *nl = memchr(p, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - p) : len - pos;

		pos += n + 1;
		line++;
		switch (varsym_conf_line(p, n, &l, msg, sizeof(msg))) {
		case VARSYM_CONF_NOTHING:
			break;
		case VARSYM_CONF_SECTION:
			where = varsym_conf_section_of(&l, mount) ? OURS : OTHER;
			break;
		case VARSYM_CONF_ENTRY:
			if (where == OURS)
				add(&st, line, &l.entry);
			else if (where == BEFORE)
				say(&st, line, true,
				    "before any [/MOUNT/POINT] section: no mount's");
			break;
		case VARSYM_CONF_BAD:
			/* a broken header: nobody can tell whose lines follow */
			if (where != OTHER || l.header)
				say(&st, line, true, "%s", msg);
			if (l.header)
				where = OTHER;
			break;
		}
	}
	return st.len;
}

void varsym_conf_note(char *buf, size_t size, const char *path,
		      unsigned int line, bool skipped, const char *why)
{
	snprintf(buf, size, skipped ? "%s:%u: %s (line skipped)" :
				      "%s:%u: warning: %s", path, line, why);
}

ssize_t varsym_conf_read_fd(int fd, char **text)
{
	size_t len = 0, size = 0;
	char *grown;
	ssize_t n;
	int err;

	*text = NULL;
	for (;;) {
		if (size - len < 4096) {
			grown = realloc(*text, size += 65536);
			if (!grown) {
				err = ENOMEM;
				goto fail;
			}
			*text = grown;
		}
		n = read(fd, *text + len, size - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			goto fail;
		}
		if (!n)
			break;
		len += n;
	}
	(*text)[len] = '\0';
	return len;
fail:
	free(*text);
	*text = NULL;
	return -err;
}

ssize_t varsym_conf_read(const char *path, char **text)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t len;

	*text = NULL;
	if (fd < 0)
		return -errno;
	len = varsym_conf_read_fd(fd, text);
	close(fd);
	return len;
}

bool varsym_privileged(void)
{
	struct __user_cap_header_struct head = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct caps[2] = { { 0 } };

	if (geteuid() == 0 || getuid() != geteuid() || getauxval(AT_SECURE))
		return true;
	if (syscall(SYS_capget, &head, caps))
		return true;		/* cannot tell: as if it had some */
	return caps[0].effective || caps[1].effective;
}

const char *varsym_conf_system_path(bool *from_env)
{
	const char *env = getenv("VARSYM_CONF");

	*from_env = env && *env;
	return *from_env ? env : VARSYM_CONF_PATH;
}

/*
 * Root's system scope binds every user's setuid programs, so root takes
 * a file that only the environment named (and a root shell may have kept
 * it from a user: `su` without `-`, `sudo -E`) only if it could have
 * written it itself: root's, and writable by nobody else.  The open file
 * is what is judged, so that no swap after the check counts.
 */
static int conf_trusted(int fd, const char *path, char *msg, size_t size)
{
	char owner[48];
	const char *why;
	struct stat st;

	if (!varsym_privileged())
		return 0;	/* its scopes bind only its user */
	if (fstat(fd, &st))
		return -errno;
	if (st.st_uid) {
		snprintf(owner, sizeof(owner), "it belongs to uid %u",
			 (unsigned int)st.st_uid);
		why = owner;
	} else if (st.st_mode & 0002) {		/* S_IWOTH */
		why = "others may write it";
	} else if ((st.st_mode & 0020) && st.st_gid) {	/* S_IWGRP */
		why = "its group may write it";
	} else {
		return 0;
	}
	snprintf(msg, size,
		 "$VARSYM_CONF names %s: %s, and root takes the system configuration only from a file that root owns and only root may write (a shell may have kept VARSYM_CONF from a user: unset it, or give --config FILE)",
		 path, why);
	return -EPERM;
}

ssize_t varsym_conf_read_system(const char **path, char **text, char *msg,
				size_t size)
{
	bool from_env;
	ssize_t len;
	int fd, err;

	*text = NULL;
	*path = varsym_conf_system_path(&from_env);
	fd = open(*path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = errno;
		snprintf(msg, size, "%s: %s", *path, strerror(err));
		return -err;
	}
	err = from_env ? conf_trusted(fd, *path, msg, size) : 0;
	if (err) {
		if (err != -EPERM)
			snprintf(msg, size, "%s: %s", *path, strerror(-err));
		close(fd);
		return err;
	}
	len = varsym_conf_read_fd(fd, text);
	if (len < 0)
		snprintf(msg, size, "%s: %s", *path, strerror(-len));
	close(fd);
	return len;
}

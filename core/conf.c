// SPDX-License-Identifier: GPL-2.0-only
/*
 * conf.c - /etc/varsym.conf, the system scopes loaded at mount time
 * (docs/varsymfs.5, "Persistent values").  User space only: the varsym
 * command and the FUSE program read it; the module's mount helper runs
 * the command.
 *
 *   # comment
 *   [/usr/lib/varsym]        the mount point the lines below belong to
 *   PERL_VERSION=5.24.0
 *
 * Only the sections of the mount being loaded are checked, so that one
 * mount's typo never stops another's; a bad line there fails the whole
 * load with its number, and nothing is applied.
 */
#include "internal.h"

static VARSYM_PRINTF(4, 5) int bad_line(char *msg, size_t size,
					unsigned int line, const char *fmt,
					...)
{
	size_t n;
	va_list ap;

	n = snprintf(msg, size, "line %u: ", line);
	if (n >= size)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(msg + n, size - n, fmt, ap);
	va_end(ap);
	return -EINVAL;
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

/* The line number of an earlier entry named name in out, or 0. */
static unsigned int earlier(const char *out, size_t out_len,
			    const unsigned int *lines, const char *name,
			    size_t name_len)
{
	struct varsym_scope_entry e;
	size_t pos = 0;
	unsigned int i = 0;

	while (varsym_scope_next(out, out_len, &pos, &e)) {
		if (e.name_len == name_len && !memcmp(e.name, name, name_len))
			return lines[i];
		i++;
	}
	return 0;
}

ssize_t varsym_conf_section(const char *text, size_t len, const char *mount,
			    char *out, size_t size, char *msg,
			    size_t msg_size)
{
	unsigned int lines[VARSYM_SCOPE_ENTRIES_MAX];
	size_t pos = 0, out_len = 0, count = 0;
	unsigned int line = 0, prev;
	bool in_section = false;
	struct varsym_scope_entry e;
	char why[VARSYM_MSG_MAX];

	if (size > VARSYM_SCOPE_MAX)
		size = VARSYM_SCOPE_MAX;
	while (pos < len) {
		const char *p = text + pos, *nl = memchr(p, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - p) : len - pos;
		const char *eq;

		pos += n + 1;
		line++;
		if (!n || p[0] == '#')
			continue;
		if (memchr(p, '\0', n))
			return bad_line(msg, msg_size, line, "a NUL byte");
		if (p[0] == '[') {
			if (n < 3 || p[n - 1] != ']' || p[1] != '/')
				return bad_line(msg, msg_size, line,
						"a section is [/MOUNT/POINT]");
			in_section = same_mount(p + 1, n - 2, mount);
			continue;
		}
		if (!in_section)
			continue;
		eq = memchr(p, '=', n);
		if (!eq)
			return bad_line(msg, msg_size, line,
					"NAME=VALUE expected");
		e = (struct varsym_scope_entry){
			.name = p, .name_len = eq - p,
			.value = eq + 1, .value_len = p + n - eq - 1,
			.has_value = true,
		};
		if (varsym_entry_check(&e, why, sizeof(why)))
			return bad_line(msg, msg_size, line, "%s", why);
		prev = earlier(out, out_len, lines, p, eq - p);
		if (prev)
			return bad_line(msg, msg_size, line,
					"'%.*s' is set on line %u already",
					(int)(eq - p), p, prev);
		if (count == VARSYM_SCOPE_ENTRIES_MAX || out_len + n + 1 > size)
			return bad_line(msg, msg_size, line,
					"past %d bytes or %d names for one mount",
					VARSYM_SCOPE_MAX,
					VARSYM_SCOPE_ENTRIES_MAX);
		lines[count++] = line;
		memcpy(out + out_len, p, n);
		out[out_len + n] = '\0';
		out_len += n + 1;
	}
	return out_len;
}

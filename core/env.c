// SPDX-License-Identifier: GPL-2.0-only
/*
 * env.c - variable names and the environment-block scanner.
 *
 * The scanner is a small state machine fed in chunks, so that the kernel can
 * copy a process's environment through a fixed buffer and the daemon can
 * read /proc/PID/environ the same way: a variable after a megabyte of others
 * is still found, and scanning stops at the first match.
 */
#include "internal.h"

bool varsym_name_valid(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || len > VARSYM_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!varsym_name_char(name[i], i == 0))
			return false;
	return true;
}

void varsym_env_scan_init(struct varsym_env_scan *s, const char *name,
			  size_t name_len, char *buf, size_t size)
{
	s->name = name;
	s->name_len = name_len;
	s->buf = buf;
	s->size = size;
	s->len = 0;
	s->pos = 0;
	s->state = VARSYM_SCAN_NAME;
}

/* Consumes the value part of our entry; returns bytes used. */
static size_t scan_value(struct varsym_env_scan *s, const char *p, size_t n)
{
	const char *nul = memchr(p, '\0', n);
	size_t take = nul ? (size_t)(nul - p) : n;

	if (take > s->size - s->len) {
		/* the part that fits: a search reads a long PATH's first dirs */
		memcpy(s->buf + s->len, p, s->size - s->len);
		s->len = s->size;
		s->state = VARSYM_SCAN_TOOLONG;
		return n;
	}
	memcpy(s->buf + s->len, p, take);
	s->len += take;
	if (nul) {
		s->state = VARSYM_SCAN_FOUND;
		return take + 1;
	}
	return take;
}

bool varsym_env_scan_feed(struct varsym_env_scan *s, const char *chunk,
			  size_t len)
{
	const char *p = chunk, *end = chunk + len;

	while (p < end) {
		switch (s->state) {
		case VARSYM_SCAN_NAME:
			if (*p == '\0') {		/* entry without '=' */
				s->pos = 0;
			} else if (s->pos == s->name_len) {
				s->state = *p == '=' ? VARSYM_SCAN_VALUE :
						       VARSYM_SCAN_SKIP;
			} else if (*p == s->name[s->pos]) {
				s->pos++;
			} else {
				s->state = VARSYM_SCAN_SKIP;
				continue;	/* *p may be the NUL */
			}
			p++;
			break;
		case VARSYM_SCAN_SKIP: {
			const char *nul = memchr(p, '\0', end - p);

			if (!nul)
				return false;
			p = nul + 1;
			s->pos = 0;
			s->state = VARSYM_SCAN_NAME;
			break;
		}
		case VARSYM_SCAN_VALUE:
			p += scan_value(s, p, end - p);
			break;
		default:
			return true;
		}
	}
	return s->state == VARSYM_SCAN_FOUND ||
	       s->state == VARSYM_SCAN_TOOLONG;
}

void varsym_env_scan_cut(struct varsym_env_scan *s)
{
	if (s->state == VARSYM_SCAN_VALUE || s->state == VARSYM_SCAN_NAME)
		s->state = VARSYM_SCAN_SKIP;
}

ssize_t varsym_env_scan_result(const struct varsym_env_scan *s)
{
	switch (s->state) {
	case VARSYM_SCAN_VALUE:		/* the block ended without a NUL */
	case VARSYM_SCAN_FOUND:
		return s->len;
	case VARSYM_SCAN_TOOLONG:
		return -ENAMETOOLONG;
	default:
		return -ENOENT;
	}
}

ssize_t varsym_env_lookup(const char *env, size_t env_len, const char *name,
			  size_t name_len, char *buf, size_t size)
{
	struct varsym_env_scan s;

	varsym_env_scan_init(&s, name, name_len, buf, size);
	varsym_env_scan_feed(&s, env, env_len);
	return varsym_env_scan_result(&s);
}

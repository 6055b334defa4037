// SPDX-License-Identifier: GPL-2.0-only
/*
 * xattr.c - the extended attributes of a mount: on its root the scopes
 * (docs/SPEC.md section 4, varsymfs(5) "SCOPES"), on each link the raw
 * text behind it (a template, or the seed's options) and how the mount
 * tells the walks inside an execve apart (varsym explain).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "exec_mode.h"
#include "fs.h"

/* 1 for the system scope's name, 0 for the user scope's, -1 for neither. */
static int scope_attr(const char *name)
{
	if (!strcmp(name, VARSYM_XATTR_SYSTEM_SCOPE))
		return 1;
	return strcmp(name, VARSYM_XATTR_USER_SCOPE) ? -1 : 0;
}

/* The real uid of the request's caller, whose user scope it means. */
static int request_ruid(struct vsfuse *fs, fuse_req_t req, uid_t *ruid)
{
	struct varsym_proc_ids ids;
	char name[32];
	int dirfd, err;

	snprintf(name, sizeof(name), "%d", fuse_req_ctx(req)->pid);
	dirfd = openat(fs->procfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -ESRCH;
	err = varsym_proc_ids(dirfd, &ids) ? -ESRCH : 0;
	close(dirfd);
	*ruid = ids.ruid;
	return err;
}

/* Whether the caller may change the system scope: root or the admin. */
static bool may_administer(struct vsfuse *fs, fuse_req_t req)
{
	uid_t uid = fuse_req_ctx(req)->uid;

	return uid == 0 || uid == fs->admin;
}

/* The system scope, or uid's, as getxattr(2) gives it. */
static void reply_scope(struct vsfuse *fs, fuse_req_t req, bool system,
			uid_t uid, size_t size)
{
	char *buf = NULL;
	ssize_t len;

	if (size && !(buf = malloc(size)))
		return vsfuse_reply_error(req, -ENOMEM);
	len = vsfuse_scopes_read(&fs->scopes, system, uid, buf, size);
	if (len < 0)
		vsfuse_reply_error(req, len);
	else if (!size)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, buf, len);
	free(buf);
}

static void get_scope(struct vsfuse *fs, fuse_req_t req, bool system,
		      size_t size)
{
	uid_t ruid = 0;
	int err;

	if (!system && (err = request_ruid(fs, req, &ruid)))
		return vsfuse_reply_error(req, err);
	reply_scope(fs, req, system, ruid, size);
}

/* system.varsym_user.UID: for that user and the mount's administrator. */
static void get_scope_of(struct vsfuse *fs, fuse_req_t req, const char *id,
			 size_t size)
{
	unsigned long uid;
	uid_t ruid;
	char *end;

	errno = 0;
	uid = strtoul(id, &end, 10);
	if (!*id || *end || errno || uid > 0xfffffffeUL || *id == '-' ||
	    *id == '+' || *id == ' ')
		return vsfuse_reply_error(req, -EINVAL);
	if (!may_administer(fs, req) &&
	    (request_ruid(fs, req, &ruid) || ruid != uid))
		return vsfuse_reply_error(req, -EPERM);
	reply_scope(fs, req, false, uid, size);
}

static void set_scope(struct vsfuse *fs, fuse_req_t req, bool system,
		      const char *value, size_t size, bool clear)
{
	char msg[VARSYM_MSG_MAX];
	uid_t ruid = 0;
	int err;

	if (system && !may_administer(fs, req))
		return vsfuse_reply_error(req, -EPERM);
	if (!system && (err = request_ruid(fs, req, &ruid)))
		return vsfuse_reply_error(req, err);
	err = clear ? vsfuse_scopes_clear(&fs->scopes, system, ruid) :
		      vsfuse_scopes_edit(&fs->scopes, system, ruid, value, size,
					 msg, sizeof(msg));
	/* answers made with the old values go; published first (scopes.c) */
	if (!err && fs->cache)
		vsfuse_cache_forget_all(fs->cache);
	vsfuse_reply_error(req, err);
}

/*
 * How the mount tells the walks inside an execve apart, and, where that
 * is its exec hooks, how many execs they could not keep the state of (all
 * the set's).
 */
static const char *exec_mode(struct vsfuse *fs, char *buf, size_t size)
{
	unsigned long long lost = 0;

	if (varsym_exec_mode_of(fs->exec_mode) == VARSYM_EXECMODE_HOOKS)
		lost = vsfuse_exec_hooks_unkept(fs->hooks);
	if (!lost)
		return fs->exec_mode;
	snprintf(buf, size, "%s (%llu %s)", fs->exec_mode, lost,
		 VARSYM_EXEC_UNKEPT);
	return buf;
}

/*
 * The raw text behind a link, readable by anyone: a template link's
 * template, or the seed link's mount options.  On the root: the scopes.
 */
void vsfuse_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    size_t size)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct vsfuse_node *n = vsfuse_dir_node(&fs->dir, ino);
	const char *value = NULL;
	char mode[384];
	size_t len;

	if (ino == FUSE_ROOT_ID && scope_attr(name) >= 0)
		return get_scope(fs, req, scope_attr(name), size);
	if (ino == FUSE_ROOT_ID &&
	    !strncmp(name, VARSYM_XATTR_USER_SCOPE_OF,
		     strlen(VARSYM_XATTR_USER_SCOPE_OF)))
		return get_scope_of(fs, req,
				    name + strlen(VARSYM_XATTR_USER_SCOPE_OF),
				    size);
	if (ino != FUSE_ROOT_ID && !n)
		return vsfuse_reply_error(req, -ESTALE);
	if (ino != FUSE_ROOT_ID && n->template &&
	    !strcmp(name, VARSYM_XATTR_TEMPLATE))
		value = n->template;
	else if (ino != FUSE_ROOT_ID && !n->template &&
		 !strcmp(name, VARSYM_XATTR_OPTIONS))
		value = fs->options_text;
	else if (ino != FUSE_ROOT_ID && !strcmp(name, VARSYM_XATTR_EXEC))
		value = exec_mode(fs, mode, sizeof(mode));
	if (!value)
		return vsfuse_reply_error(req, -ENODATA);
	len = strlen(value);
	if (!size)
		fuse_reply_xattr(req, len);
	else if (size < len)
		vsfuse_reply_error(req, -ERANGE);
	else
		fuse_reply_buf(req, value, len);
}

static void reply_names(fuse_req_t req, const char *a, const char *b,
			size_t size)
{
	char names[64];
	/* NUL-separated, the last NUL counted */
	size_t len = snprintf(names, sizeof(names), "%s%c%s", a, '\0', b) + 1;

	if (!size)
		fuse_reply_xattr(req, len);
	else if (size < len)
		vsfuse_reply_error(req, -ERANGE);
	else
		fuse_reply_buf(req, names, len);
}

void vsfuse_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct vsfuse *fs = fuse_req_userdata(req);
	const struct vsfuse_node *n = vsfuse_dir_node(&fs->dir, ino);

	if (ino == FUSE_ROOT_ID)
		return reply_names(req, VARSYM_XATTR_USER_SCOPE,
				   VARSYM_XATTR_SYSTEM_SCOPE, size);
	if (!n)
		return vsfuse_reply_error(req, -ESTALE);
	reply_names(req, n->template ? VARSYM_XATTR_TEMPLATE :
		    VARSYM_XATTR_OPTIONS, VARSYM_XATTR_EXEC, size);
}

/* A change of a scope on the root; nothing else is set: as the kernel. */
void vsfuse_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			    const char *value, size_t size, int flags)
{
	(void)flags;
	if (ino != FUSE_ROOT_ID || scope_attr(name) < 0)
		return vsfuse_reply_error(req, -EOPNOTSUPP);
	set_scope(fuse_req_userdata(req), req, scope_attr(name), value, size,
		  false);
}

void vsfuse_removexattr(fuse_req_t req, fuse_ino_t ino,
			       const char *name)
{
	if (ino != FUSE_ROOT_ID || scope_attr(name) < 0)
		return vsfuse_reply_error(req, -EOPNOTSUPP);
	set_scope(fuse_req_userdata(req), req, scope_attr(name), NULL, 0, true);
}

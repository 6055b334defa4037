// SPDX-License-Identifier: GPL-2.0-only
/*
 * varsym - tell a person what a path through variant links leads to, and why.
 *
 *   varsym explain [-i] [--env NAME=VALUE]... [--secure] PATH
 *   varsym explain --pid PID PATH
 *   varsym show LINK
 *   varsym set|unset|list|load ...: a mount's scopes (scopes.c)
 *
 * explain walks PATH one component at a time as namei(1) does, and for each
 * variant link shows its template (or the seed mount's options), every
 * variable the rules consult, where each value came from and the target.
 * The answer comes from the shared core with the environment being
 * explained, so the tool and the file systems cannot disagree on the rules;
 * when that environment is the tool's own, readlink(2) is asked too and a
 * difference is reported as the bug it would be.
 *
 * The walk holds an O_PATH descriptor of where it stands and never lets the
 * kernel follow a symbolic link for it: a variant link met half-way must
 * give the explained environment's answer, not the tool's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "errno_name.h"
#include "exec_mode.h"
#include "varsym.h"
#include "varsym_proc.h"

#ifndef VARSYM_VERSION
#define VARSYM_VERSION "unknown"
#endif

/* The interface both implementations give: see docs/SEMANTICS.md. */

#define MAX_LINKS 40		/* the kernel's MAXSYMLINKS */
#define DETAIL 4		/* extra indent of a variant link's details */

extern char **environ;

/* The environment explained: --env entries over a base environment. */
struct environment {
	char **base;		/* environ, or NULL for -i */
	const char *block;	/* --pid: its exec-time environment instead */
	size_t block_len;
	char **set;		/* the --env NAME=VALUE arguments, in order */
	int nset;
	bool secure;		/* as for a secure-exec process */
	bool own;		/* exactly what readlink(2) by us would see */
	pid_t pid;		/* --pid, or 0 */
	unsigned int ruid;	/* whose user scope */
	struct varsym_proc_builtins ids;	/* the built-ins */
};

struct walk {
	const struct environment *env;
	int links;		/* symbolic links followed so far */
	bool sys_error;		/* a failure that is not the path's */
	/*
	 * The directory a variant link's variable chooses in (a seed's
	 * prefix, a template's text before its first variable), where a
	 * missing name is a version that is not there.
	 */
	bool chooses;
	dev_t choice_dev;
	ino_t choice_ino;
};

/* What the note hook learns while a variant link is explained. */
struct explaining {
	const struct environment *env;
	const char *user, *system;	/* the link's mount's scopes */
	size_t user_len, system_len;
	const struct varsym_opts *search;	/* a search mount's options */
	int level;
	bool print;		/* second pass: show each variable */
	bool nothing;		/* a variable was unset with no default */
	bool refused;		/* a value was refused under the prefix */
	/*
	 * The variables shown for this link, each once: a template may
	 * name one twice (/opt/python${V}/bin/python${V}).  Each entry is
	 * the source, the name, a NUL, the value (if any) and a NUL.
	 */
	char shown[4096];
	size_t shown_len;
};

/*
 * A variant link's raw text, from its extended attribute: a template, or
 * the longer of the two, a seed's options text.
 */
struct variant {
	bool seed;
	size_t len;
	char text[VARSYM_OPTS_TEXT_MAX];
};

/*
 * Names, values and targets are bytes; control bytes are shown as \xNN so
 * that a hostile name cannot move the cursor of the person reading.
 */
void put_bytes(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c < 0x20 || c == 0x7f)
			printf("\\x%02x", c);
		else
			putchar(c);
	}
}

static void put_str(const char *s)
{
	put_bytes(s, strlen(s));
}

static void indent(int level, int extra)
{
	printf("%*s", 2 * level + 1 + extra, "");
}

/* One line of the walk, as namei(1) prints it: type letter, name. */
static void print_entry(int level, char type, const char *name)
{
	indent(level, 0);
	printf("%c ", type);
	put_str(name);
}

/* The component that ends the walk, as namei does, with the errno name. */
static void print_failure(int level, const char *name, int e)
{
	indent(level, 0);
	put_str(name);
	printf(" - %s: %s\n", errno_name(e), strerror(e));
}

static char type_letter(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return 'd';
	case S_IFLNK:
		return 'l';
	case S_IFREG:
		return '-';
	case S_IFCHR:
		return 'c';
	case S_IFBLK:
		return 'b';
	case S_IFIFO:
		return 'p';
	case S_IFSOCK:
		return 's';
	}
	return '?';
}

/*
 * The core's getenv: the --env entries (the last given first, so the last
 * wins as with env(1)), then the base environment, fed to the core's
 * scanner entry by entry, NUL included, as one block would be.
 */
static ssize_t env_get(void *ctx, const char *name, size_t name_len,
		       char *buf, size_t size)
{
	const struct explaining *x = ctx;
	const struct environment *env = x->env;
	struct varsym_env_scan s;
	char **p;
	int i;

	varsym_env_scan_init(&s, name, name_len, buf, size);
	for (i = env->nset - 1; i >= 0; i--)
		if (varsym_env_scan_feed(&s, env->set[i],
					 strlen(env->set[i]) + 1))
			return varsym_env_scan_result(&s);
	if (env->block)
		varsym_env_scan_feed(&s, env->block, env->block_len);
	for (p = env->base; p && *p; p++)
		if (varsym_env_scan_feed(&s, *p, strlen(*p) + 1))
			break;
	return varsym_env_scan_result(&s);
}

/*
 * A search's variable (x->search's), when the search left some of its
 * directories out: how many, and by which bound.  The value is found again
 * whole, by the core's rule for a seed variable, in a buffer that holds
 * whatever execve accepts.
 */
static void print_cut(const struct explaining *x)
{
	static char *full;
	struct varsym_caller c = {
		.getenv = env_get,
		.ctx = (void *)x,
		.secure = x->env->secure,
		.user_scope = x->user,
		.user_scope_len = x->user_len,
		.system_scope = x->system,
		.system_scope_len = x->system_len,
	};
	struct varsym_search_span span;
	char msg[VARSYM_MSG_MAX];
	struct varsym_opts seed;
	ssize_t n;

	if (!full)
		full = malloc(VARSYM_ENV_MAX);
	varsym_opts_init(&seed);
	if (!full || varsym_opts_parse_one(&seed, "var", x->search->var, msg,
					   sizeof(msg)))
		return;
	n = varsym_resolve_seed(&seed, &c, full, VARSYM_ENV_MAX);
	if (n <= 0)
		return;
	varsym_search_span(full, n, &span);
	if (span.all_dirs == span.dirs)
		return;
	indent(x->level, DETAIL);
	printf("cut       %s: ", x->search->var);
	if (span.dirs_cut)
		printf("%u directories, searched the first %u\n",
		       span.all_dirs, span.dirs);
	else
		printf("%zd bytes, searched the first %d: %u of its %u directories\n",
		       n, VARSYM_SEARCH_BYTES_MAX, span.dirs, span.all_dirs);
}

/*
 * Whether this variable, from this source, with this value, was shown for
 * the link already; if not, it is now (when there is room to remember it).
 */
static bool shown_before(struct explaining *x, const char *name,
			 size_t name_len, enum varsym_source from,
			 const char *value, size_t value_len)
{
	size_t need = 1 + name_len + 1 + (value ? value_len : 0) + 1;
	char entry[1 + 255 + 1 + VARSYM_PATH_MAX + 1];
	size_t at = 0, len;

	if (need > sizeof(entry))
		return false;
	entry[0] = (char)('0' + from);
	memcpy(entry + 1, name, name_len);
	entry[1 + name_len] = '\0';
	if (value)
		memcpy(entry + 2 + name_len, value, value_len);
	entry[need - 1] = '\0';
	while (at < x->shown_len) {
		len = strlen(x->shown + at) + 1;
		len += strlen(x->shown + at + len) + 1;
		if (len == need && !memcmp(x->shown + at, entry, need))
			return true;
		at += len;
	}
	if (x->shown_len + need <= sizeof(x->shown)) {
		memcpy(x->shown + x->shown_len, entry, need);
		x->shown_len += need;
	}
	return false;
}

static void note(void *ctx, const char *name, size_t name_len,
		 enum varsym_source from, const char *value, size_t value_len)
{
	struct explaining *x = ctx;
	const char *secure = x->env->secure ?
			     "ignored: secure-exec (setuid) process" : NULL;

	x->nothing |= from == VARSYM_FROM_NOTHING;
	x->refused |= from == VARSYM_FROM_REFUSED;
	if (!x->print ||
	    shown_before(x, name, name_len, from, value, value_len))
		return;
	indent(x->level, DETAIL);
	put_bytes(name, name_len);
	if (value) {
		printf(" = ");
		put_bytes(value, value_len);
	}
	switch (from) {
	case VARSYM_FROM_ENV:
		printf("   (from the environment)\n");
		break;
	case VARSYM_FROM_USER:
		printf("   (from the user scope)\n");
		break;
	case VARSYM_FROM_SYSTEM:
		printf("   (from the system scope)\n");
		break;
	case VARSYM_FROM_BUILTIN:
		printf("   (built-in)\n");
		break;
	case VARSYM_FROM_DEFAULT:
		printf("   (%s: the default)\n", secure ? secure :
		       "unset or empty");
		break;
	case VARSYM_FROM_NOTHING:
		printf("   (%s, no default)\n", secure ? secure :
		       "unset or empty");
		break;
	case VARSYM_FROM_REFUSED:
		printf("   (refused: '..' under a prefix)\n");
		break;
	}
	if (x->search)
		print_cut(x);
}

/* 1 and v filled for a variant link, 0 for any other file, or -errno. */
static int read_variant_at(const char *path, struct variant *v)
{
	static const char *const attrs[] = { VARSYM_XATTR_TEMPLATE, VARSYM_XATTR_OPTIONS };
	ssize_t n;
	size_t i;

	for (i = 0; i < 2; i++) {
		n = lgetxattr(path, attrs[i], v->text, sizeof(v->text) - 1);
		if (n >= 0) {
			v->text[n] = '\0';
			v->len = n;
			v->seed = i == 1;
			return 1;
		}
		if (errno == ERANGE)	/* no link's text is this long */
			return -ENAMETOOLONG;
		/*
		 * Other file systems refuse an unknown system.* name in
		 * their own ways; only a failing lookup is the path's.
		 */
		if (errno != ENODATA && errno != ENOTSUP && errno != EPERM &&
		    errno != EINVAL)
			return -errno;
	}
	return 0;
}

/* The same for name in dirfd. */
static int read_variant(int dirfd, const char *name, struct variant *v)
{
	char path[64 + NAME_MAX];

	/* lgetxattr has no *at() form; the magic link stands for dirfd. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	return read_variant_at(path, v);
}

/*
 * The scopes of the mount a link of dirfd is in (its root: links live
 * there), into user and system (VARSYM_SCOPE_MAX bytes each).  NULL, or
 * what could not be read, for a line of the explanation.
 */
static const char *read_scopes(const struct environment *env, int dirfd,
			       struct explaining *x, char *user, char *system)
{
	static char why[160];
	char path[64], attr[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
	n = getxattr(path, VARSYM_XATTR_SYSTEM_SCOPE, system, VARSYM_SCOPE_MAX);
	if (n > 0) {
		x->system = system;
		x->system_len = n;
	}
	if (env->secure)	/* no user scope is read for it */
		return n < 0 ? "system scope: unreadable" : NULL;
	if (env->pid)
		snprintf(attr, sizeof(attr), "%s%u", VARSYM_XATTR_USER_SCOPE_OF,
			 env->ruid);
	else
		snprintf(attr, sizeof(attr), "%s", VARSYM_XATTR_USER_SCOPE);
	n = getxattr(path, attr, user, VARSYM_SCOPE_MAX);
	if (n > 0) {
		x->user = user;
		x->user_len = n;
	}
	if (n >= 0)
		return NULL;
	snprintf(why, sizeof(why),
		 "user scope of uid %u: unreadable (%s): taken as empty",
		 env->ruid, strerror(errno));
	return why;
}

/* A skipped line of the mount's configuration, under its link. */
static void show_skipped(void *ctx, const char *note)
{
	indent(*(int *)ctx, DETAIL);
	printf("conf      ");
	put_str(note);
	printf("\n");
}

/*
 * The lines of the configuration that a load of the system scope of the
 * mount of dirfd (a link's directory: the mount's root) skips.
 */
static void print_skipped(int dirfd, int level)
{
	char path[64], root[PATH_MAX];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", dirfd);
	n = readlink(path, root, sizeof(root) - 1);
	if (n <= 0 || root[0] != '/')
		return;
	root[n] = '\0';
	conf_skipped(root, show_skipped, &level);
}

/*
 * A FUSE mount that cannot tell the walks inside an execve apart (its
 * links' system.varsym_exec names the mode "syscall only", with its why),
 * or whose exec hooks could not keep some execs' state ("exec hooks: ...
 * (N execs whose state ...)"): what that breaks, in the daemon's words
 * (core/exec_mode.c), under the first of its links the walk meets, once.
 */
static void print_exec_mode(int dirfd, const char *name, int level,
			    bool search)
{
	const struct varsym_exec_mode_text *t =
		&varsym_exec_modes[VARSYM_EXECMODE_SYSCALL_ONLY];
	static dev_t told[16];
	static unsigned int ntold;
	char path[64 + NAME_MAX], mode[256];
	const char *why, *unkept;
	struct stat st;
	unsigned int i;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	n = lgetxattr(path, VARSYM_XATTR_EXEC, mode, sizeof(mode) - 1);
	if (n <= 0 || fstat(dirfd, &st))
		return;
	mode[n] = '\0';
	unkept = strstr(mode, VARSYM_EXEC_UNKEPT);
	if (varsym_exec_mode_of(mode) != VARSYM_EXECMODE_SYSCALL_ONLY &&
	    !unkept)
		return;		/* the exec hooks, or a mount of its owner's */
	for (i = 0; i < ntold; i++)
		if (told[i] == st.st_dev)
			return;
	if (ntold < sizeof(told) / sizeof(told[0]))
		told[ntold++] = st.st_dev;
	why = strrchr(mode, '(');
	indent(level, DETAIL);
	if (unkept && why && mode[n - 1] == ')') {
		printf("exec      ");
		put_bytes(why + 1, mode + n - 1 - (why + 1));
		printf(" (no memory for it): their walks inside the execve got the secure answer\n");
		return;
	}
	printf("exec      %s: fixed by the kernel's BPF LSM or the kernel module (varsymfs(8))\n",
	       search ? t->runs_search : t->runs);
	why = strchr(mode, '(');
	if (!why || mode[n - 1] != ')')
		return;
	indent(level, DETAIL);
	printf("exec      why: ");
	put_bytes(why + 1, mode + n - 1 - (why + 1));
	printf("\n");
}

/* Mount options as the seed link gives them: "var=U,prefix=/u/". */
static int parse_options(char *text, struct varsym_opts *o, char *msg,
			 size_t size)
{
	char *item, *value, *save = NULL;
	int ret;

	varsym_opts_init(o);
	for (item = strtok_r(text, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		value = strchr(item, '=');
		if (value)
			*value++ = '\0';
		ret = varsym_opts_parse_one(o, item, value, msg, size);
		if (ret < 0)
			return ret;
	}
	return varsym_opts_finish(o, msg, size);
}

/*
 * A search mount's candidate, tried as this process: a regular file it may
 * execute.  The file system tries it as the caller; for --pid another
 * process, a difference shows as readlink's warning only for our own.
 */
static int search_probe(void *ctx, const char *path)
{
	const struct explaining *x = ctx;
	struct stat st;
	bool found = !stat(path, &st) && S_ISREG(st.st_mode) &&
		     !faccessat(AT_FDCWD, path, X_OK, AT_EACCESS);

	if (x->print) {
		indent(x->level, DETAIL);
		printf("%s ", found ? "found    " : "not here ");
		put_str(path);
		printf("\n");
	}
	return found;
}

/* The target the rules give: its length, or -errno as readlink would. */
static ssize_t expand(const struct variant *v, const struct varsym_opts *o,
		      const char *name, struct explaining *x, bool print,
		      char *out)
{
	struct varsym_caller c = {
		.getenv = env_get,
		.note = note,
		.ctx = x,
		.secure = x->env->secure,
		.user_scope = x->user,
		.user_scope_len = x->user_len,
		.system_scope = x->system,
		.system_scope_len = x->system_len,
		.builtins = &x->env->ids.core,
	};

	static char value[VARSYM_SEARCH_VALUE_MAX];

	x->print = print;
	x->nothing = x->refused = false;
	x->shown_len = 0;
	x->search = v->seed && varsym_opts_search_mode(o) ? o : NULL;
	if (x->search)
		return varsym_search(o, &c, name, strlen(name), search_probe,
				     x, value, out, VARSYM_PATH_MAX);
	return varsym_link_target(o, v->seed ? NULL : v->text, v->len, &c,
				  out, VARSYM_PATH_MAX);
}

static const char *why(const struct variant *v, const struct explaining *x,
		       ssize_t err)
{
	switch (err) {
	case -ENOENT:
		if (v->seed && strstr(v->text, "search="))
			return "no directory searched holds it";
		if (x->nothing)
			return "a variable is unset or empty, no default";
		return "the template expands to nothing";
	case -EACCES:
		if (x->refused)
			return "a '..' component of a value under a prefix";
		return "a secure-exec process, and no default";
	case -ENAMETOOLONG:
		return "a value or the target is over PATH_MAX - 1 bytes";
	case -EINVAL:
		return v->seed ? "the link's options do not parse" :
				 "a malformed template";
	}
	return "the rules give this error";
}

/* readlink(2) by this process: the file system's own answer. */
static ssize_t real_target(int dirfd, const char *name, char *out)
{
	ssize_t n = readlinkat(dirfd, name, out, VARSYM_PATH_MAX);

	if (n < 0)
		return -errno;
	if (n == VARSYM_PATH_MAX)
		return -ENAMETOOLONG;
	out[n] = '\0';
	return n;
}

/* A target or an error, for the warning below. */
static void put_answer(ssize_t n, const char *text)
{
	if (n < 0)
		printf("%s", errno_name(-n));
	else
		put_str(text);
	printf("\n");
}

/*
 * Our answer and the file system's differ: say so, and go on with what the
 * kernel would use.  The result is the file system's.
 */
static ssize_t warn_mismatch(int level, const char *name, ssize_t n,
			     ssize_t real, char *target, const char *real_text)
{
	indent(level, DETAIL);
	printf("WARNING   readlink(2) gives  ");
	put_answer(real, real_text);
	indent(level, DETAIL);
	printf("          the rules give     ");
	put_answer(n, target);
	indent(level, DETAIL);
	printf("          a bug in varsymfs or in varsym: going on with "
	       "readlink's answer\n");
	fprintf(stderr, "varsym: warning: readlink(2) of %s disagrees with "
		"the rules\n", name);
	if (real >= 0)
		memcpy(target, real_text, real + 1);
	return real;
}

/*
 * Where the variant link v (seed options o) chooses: the directory of a
 * seed's prefix, or of a template's text up to its first variable, when
 * that is an absolute path of its own.  Kept in w, by inode.
 */
static void note_choice(struct walk *w, const struct variant *v,
			const struct varsym_opts *o)
{
	char dir[VARSYM_PATH_MAX];
	const char *text = v->seed ? o->prefix : v->text;
	size_t len = v->seed ? o->prefix_len : strcspn(v->text, "$");
	struct stat st;

	w->chooses = false;
	while (len && text[len - 1] != '/')
		len--;		/* the directory the chosen name is in */
	if (!len || text[0] != '/' || len >= sizeof(dir))
		return;
	memcpy(dir, text, len);
	dir[len] = '\0';
	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return;
	w->chooses = true;
	w->choice_dev = st.st_dev;
	w->choice_ino = st.st_ino;
}

/*
 * Prints a variant link and how its target comes about; the target goes to
 * target.  Returns its length or -errno.
 */
static ssize_t explain_variant(struct walk *w, int dirfd, const char *name,
			       int level, const struct variant *v,
			       char *target)
{
	/*
	 * Static: the walk recurses only after this returns, so one set
	 * serves every link instead of sitting in each frame.
	 */
	static char scratch[VARSYM_PATH_MAX], real_text[VARSYM_PATH_MAX];
	static char msg[VARSYM_MSG_MAX], opts_text[VARSYM_OPTS_TEXT_MAX];
	static struct varsym_opts o;
	static char user[VARSYM_SCOPE_MAX], system[VARSYM_SCOPE_MAX];
	struct explaining x = { .env = w->env, .level = level };
	const char *scope_error;
	ssize_t n, real = 0;
	int bad = 0;

	scope_error = read_scopes(w->env, dirfd, &x, user, system);
	if (v->seed) {
		memcpy(opts_text, v->text, v->len + 1);
		bad = parse_options(opts_text, &o, msg, sizeof(msg));
	}
	/* two passes: the target heads the lines the second one prints */
	n = bad ? bad : expand(v, &o, name, &x, false, target);
	if (!bad)
		note_choice(w, v, &o);
	if (w->env->own)
		real = real_target(dirfd, name, real_text);

	print_entry(level, 'v', name);
	if (n >= 0) {
		printf(" -> ");
		put_str(target);
	}
	printf("\n");
	indent(level, DETAIL);
	printf(v->seed ? "options   " : "template  ");
	put_bytes(v->text, v->len);
	printf("\n");
	print_exec_mode(dirfd, name, level,
			!bad && v->seed && varsym_opts_search_mode(&o));
	print_skipped(dirfd, level);
	if (scope_error) {
		indent(level, DETAIL);
		printf("%s\n", scope_error);
	}
	if (bad) {
		indent(level, DETAIL);
		printf("cannot parse the options: %s\n", msg);
	} else {
		expand(v, &o, name, &x, true, scratch);
	}
	if (n < 0) {
		indent(level, DETAIL);
		printf("%s: %s (%s)\n", errno_name(-n), strerror(-n),
		       why(v, &x, n));
	}
	if (!w->env->own || (real == n && (n < 0 || !strcmp(real_text,
							     target))))
		return n;
	return warn_mismatch(level, name, n, real, target, real_text);
}

/* Prints a symbolic link; its target goes to target.  0 or -1. */
static int explain_link(struct walk *w, int dirfd, const char *name,
			int level, char *target)
{
	static struct variant v;	/* as in explain_variant() */
	ssize_t n;
	int ret;

	ret = read_variant(dirfd, name, &v);
	if (ret < 0) {
		print_failure(level, name, -ret);
		return -1;
	}
	if (ret)
		return explain_variant(w, dirfd, name, level, &v, target) < 0 ?
		       -1 : 0;
	n = real_target(dirfd, name, target);
	if (n < 0) {
		print_failure(level, name, -n);
		return -1;
	}
	print_entry(level, 'l', name);
	printf(" -> ");
	put_str(target);
	printf("\n");
	return 0;
}

static int walk_path(struct walk *w, int fd, const char *path, int level);

static int open_root(struct walk *w)
{
	int fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "varsym: /: %s\n", strerror(errno));
		w->sys_error = true;
	}
	return fd;
}

/* Whether fd is a directory; prints the failure for name if not. */
static bool check_dir(int fd, int level, const char *name)
{
	struct stat st;

	if (!fstat(fd, &st) && S_ISDIR(st.st_mode))
		return true;
	print_failure(level, name, ENOTDIR);
	return false;
}

/*
 * Follows the link name in dirfd (ours to close), printing the walk of its
 * target one level deeper.  Returns a descriptor of where it leads, or -1.
 */
static int follow(struct walk *w, int dirfd, const char *name, int level)
{
	char target[VARSYM_PATH_MAX];
	int start;

	if (w->links++ >= MAX_LINKS) {
		print_failure(level, name, ELOOP);
		close(dirfd);
		return -1;
	}
	if (explain_link(w, dirfd, name, level, target)) {
		close(dirfd);
		return -1;
	}
	if (target[0] != '/')
		return walk_path(w, dirfd, target, level + 1);
	close(dirfd);
	start = open_root(w);
	if (start < 0)
		return -1;
	return walk_path(w, start, target, level + 1);
}

/* Names as ls -v orders them: 3.9 before 3.11. */
static int by_version(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/*
 * A name missing in the directory a variant link chooses in: what it
 * holds instead, the first THERE_SHOWN names in version order, so that a
 * version that is not installed shows the ones that are (PYVER=3.12
 * where only 3.11 is).
 */
#define THERE_SHOWN 8
static void print_there(int dirfd, int level)
{
	char *names[THERE_SHOWN + 1];
	unsigned int n = 0, all = 0, i;
	struct dirent *e;
	DIR *d;
	int fd;

	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	/* the smallest names: keep THERE_SHOWN, sorted, of all seen */
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		all++;
		names[n] = strdup(e->d_name);
		if (!names[n])
			break;
		qsort(names, ++n, sizeof(names[0]), by_version);
		if (n > THERE_SHOWN)
			free(names[--n]);
	}
	closedir(d);
	indent(level, DETAIL);
	printf("there     ");
	for (i = 0; i < n; i++) {
		printf(i ? ", " : "");
		put_str(names[i]);
		free(names[i]);
	}
	if (!all)
		printf("nothing");
	else if (all > n)
		printf(", ... (%u in all)", all);
	printf("\n");
}

/* One component: a descriptor of name in dirfd (ours to close), or -1. */
static int step(struct walk *w, int dirfd, const char *name, int level,
		bool must_be_dir)
{
	struct stat st;
	int fd;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		int e = errno;

		print_failure(level, name, e);
		if (e == ENOENT && w->chooses && !fstat(dirfd, &st) &&
		    st.st_dev == w->choice_dev && st.st_ino == w->choice_ino)
			print_there(dirfd, level);
		close(dirfd);
		return -1;
	}
	if (S_ISLNK(st.st_mode)) {
		fd = follow(w, dirfd, name, level);
	} else {
		print_entry(level, type_letter(st.st_mode), name);
		printf("\n");
		fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			print_failure(level, name, errno);
		close(dirfd);
	}
	if (fd >= 0 && must_be_dir && !check_dir(fd, level, name)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Walks path from fd (ours to close: "/" for an absolute path, else the
 * directory it is relative to).  Returns a descriptor of the end, or -1.
 */
static int walk_path(struct walk *w, int fd, const char *path, int level)
{
	char name[NAME_MAX + 1];
	const char *p = path, *end;
	size_t len;

	if (!*path || strlen(path) >= VARSYM_PATH_MAX) {
		print_failure(level, path, *path ? ENAMETOOLONG : ENOENT);
		close(fd);
		return -1;
	}
	if (*p == '/') {
		print_entry(level, 'd', "/");
		printf("\n");
	}
	while (fd >= 0) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		for (end = p; *end && *end != '/'; end++)
			;
		len = end - p;
		if (len > NAME_MAX) {
			indent(level, 0);
			put_bytes(p, len);
			printf(" - %s: %s\n", errno_name(ENAMETOOLONG),
			       strerror(ENAMETOOLONG));
			close(fd);
			return -1;
		}
		memcpy(name, p, len);
		name[len] = '\0';
		p = end;
		while (*end == '/')
			end++;
		/* "name/" at the end: it must be a directory */
		fd = step(w, fd, name, level, !*end && *p == '/');
	}
	return fd;
}

static int explain(const struct environment *env, const char *path)
{
	struct walk w = { .env = env };
	int fd;

	fd = path[0] == '/' ? open_root(&w) :
			      open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		if (!w.sys_error)
			fprintf(stderr, "varsym: current directory: %s\n",
				strerror(errno));
		return EXIT_USAGE;
	}
	printf("f: ");
	put_str(path);
	printf("\n");
	fd = walk_path(&w, fd, path, 0);
	if (fd >= 0)
		close(fd);
	if (w.sys_error)
		return EXIT_USAGE;
	return fd >= 0 ? EXIT_RESOLVES : EXIT_UNRESOLVED;
}

void usage(FILE *f)
{
	static const char text[] =
	"usage: varsym explain [-i] [--env NAME=VALUE]... [--secure] PATH\n"
	"       varsym explain --pid PID PATH\n"
	"       varsym show LINK\n"
	"       varsym set [-s|-u] [--save] DIR NAME=VALUE...\n"
	"       varsym unset [-s|-u] [--save] DIR NAME...\n"
	"       varsym list [-s|-u] DIR\n"
	"       varsym get [-s|-u] DIR NAME\n"
	"       varsym load [-s|-u] [--config FILE] [--mount-ns NS] DIR\n"
	"       varsym --help | --version\n"
	"\n"
	"Explains variant symbolic links (varsymfs).\n"
	"\n"
	"explain PATH  walks PATH one component at a time as namei(1) does,\n"
	"              one line each: d directory, l symbolic link, v variant\n"
	"              link, - file, c b p s device, fifo, socket.  Under a\n"
	"              variant link: its template or the seed mount's\n"
	"              options, each variable consulted, its value and where\n"
	"              it came from; then the target or the error it gives.\n"
	"              Without -i, --env or --secure it explains for varsym's\n"
	"              own environment and checks answers with readlink(2).\n"
	"  -i, --ignore-environment\n"
	"              start from an empty environment\n"
	"  -e, --env NAME=VALUE\n"
	"              set NAME in the environment explained (repeatable)\n"
	"  -s, --secure\n"
	"              explain for a secure-exec (setuid) process: no\n"
	"              environment and no user scope\n"
	"  -p, --pid PID\n"
	"              explain for that live process: its exec-time\n"
	"              environment, AT_SECURE, ids and user scope\n"
	"show LINK     prints a variant link's raw template, or a seed\n"
	"              link's mount options; of the variant link LINK leads\n"
	"              to when it is an ordinary link\n"
	"set DIR NAME=VALUE...\n"
	"              sets values in a scope of the mount DIR is in (its\n"
	"              mount point, or a link in it), all in one change:\n"
	"              -u (the default) your own user scope, -s the system\n"
	"              scope (root); --save makes the change in the scope's\n"
	"              file too: /etc/varsym.conf (or $VARSYM_CONF) for -s,\n"
	"              ~/.config/varsym.conf for your own\n"
	"unset DIR NAME...\n"
	"              unsets them, in one change\n"
	"list DIR      prints a scope's NAME=VALUE lines\n"
	"get DIR NAME  prints NAME's value alone: -s the system scope's, -u\n"
	"              your user scope's; neither: your user scope's, else\n"
	"              the system scope's (what your processes get when their\n"
	"              environment does not set it); exit 1 when unset\n"
	"load DIR      makes the system scope what /etc/varsym.conf (or\n"
	"              --config FILE, or $VARSYM_CONF) says for the mount;\n"
	"              -u your own scope what ~/.config/varsym.conf says\n"
	"\n"
	"Options of set, unset, list, get and load (-s with -u is refused):\n"
	"  -s, --system  the mount's system scope (load: the default)\n"
	"  -u, --user    your own user scope (set, unset, list: the default)\n"
	"  --save        (set, unset) make the change in the scope's file too\n"
	"  --config FILE (load) read FILE instead of the scope's file\n"
	"  --mount-ns NS (load) DIR is a mount point in the mount namespace NS\n"
	"                (a PID, or a namespace file): the file is read here,\n"
	"                then the command enters NS, and runs nothing there\n"
	"\n"
	"Exit status:\n"
	"  0  the path resolves (explain); the link was shown (show); the\n"
	"     value was printed (get); done\n"
	"  1  the path does not resolve; LINK is not a variant link; NAME is\n"
	"     unset (get)\n"
	"  2  usage error (-s with -u included), or a system error unrelated\n"
	"     to the path\n"
	"  3  refused: a change or a value (nothing changed), or not\n"
	"     allowed; load: a line skipped (the others are loaded)\n";

	fputs(text, f);
}

int bad_usage(const char *what, const char *arg)
{
	fprintf(stderr, "varsym: %s%s%s%s\n", what, arg ? " '" : "",
		arg ? arg : "", arg ? "'" : "");
	fprintf(stderr, "Try 'varsym --help'.\n");
	return EXIT_USAGE;
}

/* The option getopt_long() stopped at (c is ':' or '?'), for a message. */
int bad_option(int c, char **argv)
{
	return bad_usage(c == ':' ? "missing argument to" : "unknown option",
			 argv[optind - 1]);
}

/*
 * The caller explained: ids and built-ins from /proc (self, or --pid's);
 * for --pid also its exec-time environment and AT_SECURE.  0, or an exit
 * status after a message.
 */
static int load_caller(struct environment *env)
{
	static char environ_block[VARSYM_ENV_MAX];
	struct varsym_proc_ids ids;
	char path[32];
	unsigned int word;
	int dirfd, fd, ret = EXIT_USAGE;
	ssize_t n;

	snprintf(path, sizeof(path), env->pid ? "/proc/%d" : "/proc/self",
		 (int)env->pid);
	dirfd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0 || varsym_proc_ids(dirfd, &ids)) {
		fprintf(stderr, "varsym: %s: %s\n", path, strerror(errno));
		goto out;
	}
	env->ruid = ids.ruid;
	varsym_proc_builtins(dirfd, &ids, &env->ids);
	if (!env->pid) {
		ret = 0;
		goto out;
	}
	fd = openat(dirfd, "environ", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "varsym: %s/environ: %s\n", path,
			strerror(errno));
		goto out;
	}
	for (env->block_len = 0; env->block_len < sizeof(environ_block);
	     env->block_len += n) {
		n = read(fd, environ_block + env->block_len,
			 sizeof(environ_block) - env->block_len);
		if (n <= 0)
			break;
	}
	close(fd);
	env->block = environ_block;
	word = varsym_proc_word_size(dirfd);
	/* what cannot be told is secure, as for the file systems */
	env->secure = !word || varsym_proc_secure(dirfd, word) != 0;
	ret = 0;
out:
	if (dirfd >= 0)
		close(dirfd);
	return ret;
}

static int cmd_explain(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "ignore-environment", no_argument, NULL, 'i' },
		{ "env", required_argument, NULL, 'e' },
		{ "secure", no_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct environment env;
	char *eq, *end;
	long pid;
	int c, ret;

	env.base = environ;

	/* at most one --env per argument */
	env.set = calloc(argc, sizeof(*env.set));
	if (!env.set) {
		fprintf(stderr, "varsym: %s\n", strerror(errno));
		return EXIT_USAGE;
	}
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ie:sp:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = strtol(optarg, &end, 10);
			if (*end || end == optarg || pid <= 0 || pid > 0x3fffffff) {
				free(env.set);
				return bad_usage("--pid needs a process id, not",
						 optarg);
			}
			env.pid = pid;
			break;
		case 'i':
			env.base = NULL;
			break;
		case 'e':
			eq = strchr(optarg, '=');
			if (!eq || eq == optarg) {
				free(env.set);
				return bad_usage("--env needs NAME=VALUE, not",
						 optarg);
			}
			env.set[env.nset++] = optarg;
			break;
		case 's':
			env.secure = true;
			break;
		case 'h':
			free(env.set);
			usage(stdout);
			return EXIT_RESOLVES;
		default:
			free(env.set);
			return bad_option(c, argv);
		}
	}
	ret = optind + 1 == argc ? 0 : EXIT_USAGE;
	if (ret) {
		free(env.set);
		return bad_usage(optind == argc ? "explain: missing PATH" :
				 "explain: one PATH only, not also",
				 optind == argc ? NULL : argv[optind + 1]);
	}
	if (env.pid && (env.nset || env.secure || !env.base)) {
		free(env.set);
		return bad_usage("--pid explains that process as it is: not with",
				 "-i, --env or --secure");
	}
	if (env.pid)
		env.base = NULL;
	env.own = env.base && !env.nset && !env.secure;
	/* our own answers are a secure-exec process's if we are one */
	if (env.own && getauxval(AT_SECURE))
		env.secure = true;
	ret = load_caller(&env);
	if (!ret)
		ret = explain(&env, argv[optind]);
	free(env.set);
	return ret;
}

/*
 * read_variant_at() of path, or of the variant link it leads to through
 * ordinary links (/usr/bin/python3 -> /usr/local/varsym/python3), as the
 * kernel would follow them: at most MAX_LINKS, a relative target from
 * the link's directory.  0 when it leads to no variant link.
 */
static int read_variant_led_to(const char *path, struct variant *v)
{
	char at[VARSYM_PATH_MAX], target[VARSYM_PATH_MAX], *slash;
	struct stat st;
	int links, ret;
	ssize_t n;

	if (snprintf(at, sizeof(at), "%s", path) >= (int)sizeof(at))
		return -ENAMETOOLONG;
	for (links = 0; links <= MAX_LINKS; links++) {
		ret = read_variant_at(at, v);
		if (ret)
			return ret;
		if (lstat(at, &st))
			return -errno;
		if (!S_ISLNK(st.st_mode))
			return 0;
		n = readlink(at, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = '\0';
		slash = strrchr(at, '/');
		if (target[0] == '/' || !slash)
			slash = at;	/* the target replaces the whole */
		else
			slash++;	/* it replaces the last name */
		if ((size_t)(slash - at) + n >= sizeof(at))
			return -ENAMETOOLONG;
		memcpy(slash, target, n + 1);
	}
	return -ELOOP;
}

static int cmd_show(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static struct variant v;
	const char *link;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c != 'h')
			return bad_option(c, argv);
		usage(stdout);
		return EXIT_RESOLVES;
	}
	if (optind + 1 != argc)
		return bad_usage(optind == argc ? "show: missing LINK" :
				 "show: one LINK only, not also",
				 optind == argc ? NULL : argv[optind + 1]);
	link = argv[optind];
	ret = read_variant_led_to(link, &v);
	if (ret < 0) {
		fprintf(stderr, "varsym: %s: %s\n", link, strerror(-ret));
		return EXIT_UNRESOLVED;
	}
	if (!ret) {
		fprintf(stderr, "varsym: %s: not a variant link\n", link);
		return EXIT_UNRESOLVED;
	}
	/* the raw bytes, unescaped: the text to give ln -s again */
	fwrite(v.text, 1, v.len, stdout);
	putchar('\n');
	return EXIT_RESOLVES;
}

/* A full disk or a closed pipe must not pass for an answer. */
static int finish(int status)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "varsym: write error: %s\n", strerror(errno));
		return EXIT_USAGE;
	}
	return status;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;

	if (!cmd)
		return bad_usage("missing command", NULL);
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
		usage(stdout);
		return finish(EXIT_RESOLVES);
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("varsym version %s\n", VARSYM_VERSION);
		return finish(EXIT_RESOLVES);
	}
	/* the command is argv[0] for getopt_long() */
	if (!strcmp(cmd, "explain"))
		return finish(cmd_explain(argc - 1, argv + 1));
	if (!strcmp(cmd, "show"))
		return finish(cmd_show(argc - 1, argv + 1));
	if (!strcmp(cmd, "set"))
		return finish(cmd_set(argc - 1, argv + 1));
	if (!strcmp(cmd, "unset"))
		return finish(cmd_unset(argc - 1, argv + 1));
	if (!strcmp(cmd, "list"))
		return finish(cmd_list(argc - 1, argv + 1));
	if (!strcmp(cmd, "load"))
		return finish(cmd_load(argc - 1, argv + 1));
	if (!strcmp(cmd, "get"))
		return finish(cmd_get(argc - 1, argv + 1));
	return bad_usage("unknown command", cmd);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * scopes.c - varsym's verbs on a mount's scopes (DragonFly BSD varsym's):
 *
 *   varsym set [-s|-u] [--save] DIR NAME=VALUE...
 *   varsym unset [-s|-u] [--save] DIR NAME...
 *   varsym list [-s|-u] DIR
 *   varsym get [-s|-u] DIR NAME
 *   varsym load [-s|-u] [--config FILE] [--mount-ns NS] DIR
 *
 * Both implementations serve the scopes as extended attributes of the
 * mount's root (varsymfs(5)): a getxattr gives a scope's block, a
 * setxattr applies one change whole.  The command checks a change with the
 * core's own edit first, so that its message names the bad entry; the file
 * system checks it again and is the authority.
 *
 * load --mount-ns NS loads a mount of another mount namespace, for
 * mount.varsymfs -N NS: the file is read here, then the command enters NS
 * and acts on DIR's mount there through one descriptor, and runs nothing
 * after: NS's files are whoever owns NS's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <linux/nsfs.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "errno_name.h"
#include "varsym.h"

struct scope_cmd {
	bool system;		/* -s: the mount's; else -u, the caller's */
	bool scope_given;	/* -s or -u was given */
	bool save;		/* --save: rewrite the configuration too */
	const char *config;	/* --config FILE */
	const char *mount_ns;	/* --mount-ns NS (load) */
	const char *dir;	/* DIR as given */
	int root_fd;		/* with mount_ns: the mount's root, in NS */
	char root[PATH_MAX];	/* the mount's root */
	char user_conf[PATH_MAX];	/* the user's own configuration */
};

static char block[VARSYM_SCOPE_MAX], edits[VARSYM_SCOPE_MAX];
static char edited[VARSYM_SCOPE_MAX], undo[2 * VARSYM_SCOPE_MAX];

static const char *attr_of(const struct scope_cmd *s)
{
	return s->system ? VARSYM_XATTR_SYSTEM_SCOPE : VARSYM_XATTR_USER_SCOPE;
}

/*
 * The root of the mount dir is in (a mount point, or a link in one), in
 * s->root: 0, or an exit status after a message.
 */
static int find_root(struct scope_cmd *s, const char *dir)
{
	char copy[PATH_MAX];
	struct stat st;
	const char *at = dir;

	if (lstat(dir, &st)) {
		fprintf(stderr, "varsym: %s: %s\n", dir, strerror(errno));
		return EXIT_USAGE;
	}
	if (S_ISLNK(st.st_mode)) {	/* a link of the mount: its directory */
		snprintf(copy, sizeof(copy), "%s", dir);
		at = dirname(copy);
	}
	if (!realpath(at, s->root)) {
		fprintf(stderr, "varsym: %s: %s\n", at, strerror(errno));
		return EXIT_USAGE;
	}
	if (getxattr(s->root, VARSYM_XATTR_SYSTEM_SCOPE, NULL, 0) < 0) {
		fprintf(stderr, "varsym: %s: not a varsymfs mount (%s)\n",
			dir, strerror(errno));
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * The scope's block now: its length, or -1 after a message.  A mount of
 * another namespace is reached through its descriptor only: s->root is
 * its path there, and means something else here.
 */
static ssize_t read_scope(const struct scope_cmd *s, char *buf)
{
	ssize_t n = s->mount_ns ?
		    fgetxattr(s->root_fd, attr_of(s), buf, VARSYM_SCOPE_MAX) :
		    getxattr(s->root, attr_of(s), buf, VARSYM_SCOPE_MAX);

	if (n < 0)
		fprintf(stderr, "varsym: %s: cannot read the %s scope: %s\n",
			s->root, s->system ? "system" : "user",
			strerror(errno));
	return n;
}

/* The file system refused the change (3), or could not take it (2). */
static int change_failed(const struct scope_cmd *s, int e)
{
	if (e == EPERM && s->system)
		fprintf(stderr, "varsym: %s: only the mount's administrator (root, or root of the user namespace that mounted it) may change its system scope\n",
			s->root);
	else
		fprintf(stderr, "varsym: %s: cannot change the %s scope: %s\n",
			s->root, s->system ? "system" : "user", strerror(e));
	switch (e) {
	case EPERM:
	case EACCES:
	case EINVAL:
	case E2BIG:
	case ENOSPC:
		return EXIT_REFUSED;
	}
	return EXIT_USAGE;
}

/* ---- the configuration file ---- */

/*
 * The file of the user's own scopes: $XDG_CONFIG_HOME/varsym.conf, or
 * ~/.config/varsym.conf (the XDG base directories), in s->user_conf.
 * Read and written by the user's own varsym, never by a file system.  A
 * privileged varsym (root) reads neither variable, nor $HOME, which a
 * user may have chosen: the home is its real user's (whose scope it
 * changes) in the password database.  NULL when it has none there.
 */
static const char *user_config_path(struct scope_cmd *s)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	bool priv = varsym_privileged();
	struct passwd *pw;

	if (priv)
		xdg = home = NULL;
	if (xdg && xdg[0] == '/')
		snprintf(s->user_conf, sizeof(s->user_conf), "%s/varsym.conf",
			 xdg);
	else if (home && home[0] == '/')
		snprintf(s->user_conf, sizeof(s->user_conf),
			 "%s/.config/varsym.conf", home);
	else if ((pw = getpwuid(getuid())) && pw->pw_dir &&
		 pw->pw_dir[0] == '/')
		snprintf(s->user_conf, sizeof(s->user_conf),
			 "%s/.config/varsym.conf", pw->pw_dir);
	else if (!priv)
		snprintf(s->user_conf, sizeof(s->user_conf), "varsym.conf");
	else
		return NULL;
	return s->user_conf;
}

/* What a privileged varsym with no home of its own says. */
static int no_user_config(void)
{
	fprintf(stderr, "varsym: uid %u has no home directory in the password database, where a privileged varsym finds its user's own file (never from $HOME or $XDG_CONFIG_HOME)\n",
		(unsigned int)getuid());
	return EXIT_USAGE;
}

/*
 * The configuration file of the scope s names: --config, else the
 * system's ($VARSYM_CONF, or /etc/varsym.conf) or the user's own (NULL
 * when a privileged varsym's user has no home).
 */
static const char *config_path(struct scope_cmd *s)
{
	bool from_env;

	if (s->config)
		return s->config;
	if (!s->system)
		return user_config_path(s);
	return varsym_conf_system_path(&from_env);
}

/*
 * The file of config_path(s) whole (varsym_conf_read()); the system's as
 * the core reads it, refused to root where the environment named a file
 * root would not have written (varsym_conf_read_system()).  -errno, said
 * unless quiet or a file that is not there may be (ENOENT, not --config).
 */
static ssize_t config_read(struct scope_cmd *s, const char **path,
			   char **text, bool quiet)
{
	char msg[PATH_MAX + VARSYM_MSG_MAX];
	ssize_t len;

	if (s->system && !s->config) {
		len = varsym_conf_read_system(path, text, msg, sizeof(msg));
	} else {
		*path = config_path(s);
		if (!*path)
			return -ENOENT;
		len = varsym_conf_read(*path, text);
		if (len < 0)
			snprintf(msg, sizeof(msg), "%s: %s", *path,
				 strerror(-len));
	}
	if (len < 0 && !quiet && (len != -ENOENT || s->config))
		fprintf(stderr, "varsym: %s\n", msg);
	return len;
}

/*
 * The directory of the user's file, made (mode 0700, as the XDG base
 * directories say) if it is not there yet, for a first --save.  One that
 * cannot be made is named, with why: the write beside the file would
 * only say ENOENT.
 */
static int make_user_config_dir(const char *path)
{
	char buf[PATH_MAX];
	const char *dir;
	int err;

	snprintf(buf, sizeof(buf), "%s", path);
	dir = dirname(buf);
	if (!mkdir(dir, 0700) || errno == EEXIST)
		return 0;
	err = errno;
	fprintf(stderr, "varsym: %s: cannot make the directory of %s: %s (%s); "
		"nothing changed\n", dir, path, strerror(err), errno_name(err));
	return -1;
}

/*
 * The lines a load skips, and its warnings, as they are reported: each to
 * show(), or on standard error; with only_skipped, the skipped ones.
 */
struct report {
	const char *path;
	unsigned int skipped;
	bool only_skipped;
	void (*show)(void *ctx, const char *note);
	void *ctx;
};

static void print_report(void *ctx, unsigned int line, bool skipped,
			 const char *why)
{
	struct report *r = ctx;
	char note[PATH_MAX + 2 * VARSYM_MSG_MAX];

	r->skipped += skipped;
	if (r->only_skipped && !skipped)
		return;
	varsym_conf_note(note, sizeof(note), r->path, line, skipped, why);
	if (r->show)
		r->show(r->ctx, note);
	else
		fprintf(stderr, "varsym: %s\n", note);
}

/* conf_skipped(), for the file of s's scope and its mount s->root */
static unsigned int scope_skipped(struct scope_cmd *s,
				  void (*show)(void *ctx, const char *note),
				  void *ctx)
{
	struct report r = {
		.only_skipped = true, .show = show, .ctx = ctx,
	};
	char *text;
	ssize_t len = config_read(s, &r.path, &text, true);

	/* nothing to tell of a file that is not there, or not for us */
	if (len < 0)
		return 0;
	varsym_conf_section(text, len, s->root, edited, sizeof(edited),
			    print_report, &r);
	free(text);
	return r.skipped;
}

unsigned int conf_skipped(const char *root,
			  void (*show)(void *ctx, const char *note),
			  void *ctx)
{
	struct scope_cmd s = { .system = true };

	snprintf(s.root, sizeof(s.root), "%s", root);
	return scope_skipped(&s, show, ctx);
}

/*
 * The change edits[0, len) undone: each name it names set again to its
 * value in old (old_len bytes), or unset.  Returns the undoing change's
 * length, in out (2 * VARSYM_SCOPE_MAX bytes: old's entries, and names
 * of the change).
 */
static size_t undoing(const char *old, size_t old_len, size_t len, char *out)
{
	struct varsym_scope_entry e, o;
	size_t pos = 0, at, n = 0;
	bool was;

	while (varsym_scope_next(edits, len, &pos, &e)) {
		for (at = 0, was = false; !was &&
		     varsym_scope_next(old, old_len, &at, &o);)
			was = o.name_len == e.name_len &&
			      !memcmp(o.name, e.name, e.name_len);
		/* old's entry, or the name alone: less than the change */
		if (was)
			e = o;
		else
			e.value_len = 0;
		memcpy(out + n, e.name, e.name_len);
		n += e.name_len;
		if (was) {
			out[n++] = '=';
			memcpy(out + n, e.value, e.value_len);
			n += e.value_len;
		}
		out[n++] = '\0';
	}
	return n;
}

/*
 * Applies edits[0, len) whole, and with --save makes it in the file too:
 * both or neither.  The file's new text is written first, beside it; then
 * the scope changes; then the new text takes the file's place, and if
 * that fails the scope's change is undone.  0, or an exit status after a
 * message.
 */
static int change(struct scope_cmd *s, size_t len)
{
	char msg[VARSYM_MSG_MAX];
	struct conf_rewrite w;
	ssize_t old, n;
	int err;

	old = read_scope(s, block);
	if (old < 0)
		return EXIT_USAGE;
	n = varsym_scope_edit(block, old, edits, len, edited, sizeof(edited),
			      msg, sizeof(msg));
	if (n < 0) {
		fprintf(stderr, "varsym: %s; nothing changed\n", msg);
		return EXIT_REFUSED;
	}
	if (s->save && !config_path(s))
		return no_user_config();
	if (s->save && !s->system && !s->config &&
	    make_user_config_dir(config_path(s)))
		return EXIT_USAGE;
	if (s->save && conf_prepare(&w, config_path(s), s->root, edits, len))
		return EXIT_USAGE;
	if (setxattr(s->root, attr_of(s), edits, len, 0)) {
		err = errno;
		if (s->save)
			conf_abandon(&w);
		return change_failed(s, err);
	}
	if (!s->save)
		return 0;
	err = -conf_commit(&w);
	if (!err)
		return 0;
	conf_abandon(&w);
	n = undoing(block, old, len, undo);
	if (setxattr(s->root, attr_of(s), undo, n, 0))
		fprintf(stderr, "varsym: %s: cannot put its new copy in place: %s (%s); and undoing the change failed too (%s): the scope has the change, the file does not\n",
			w.path, strerror(err), errno_name(err),
			strerror(errno));
	else
		fprintf(stderr, "varsym: %s: cannot put its new copy in place: %s (%s); the change is undone: nothing changed\n",
			w.path, strerror(err), errno_name(err));
	return EXIT_USAGE;
}

/* ---- load --mount-ns NS ---- */

/*
 * Whether the mount namespace nsfd belongs to a user namespace other than
 * ours: its root, another user, may mount and unmount there.  What cannot
 * be told counts as another's.
 */
static bool owned_by_another(int nsfd)
{
	struct stat ours, owner;
	int userfd = ioctl(nsfd, NS_GET_USERNS);
	bool other;

	if (userfd < 0)
		return true;
	other = fstat(userfd, &owner) || stat("/proc/self/ns/user", &ours) ||
		owner.st_dev != ours.st_dev || owner.st_ino != ours.st_ino;
	close(userfd);
	return other;
}

/* Whether the mount table mounts (a mountinfo file) has a mount of dev. */
static bool mounted_in(FILE *mounts, dev_t dev)
{
	unsigned int major, minor;
	char *line = NULL;
	size_t size = 0;
	bool found = false;

	while (!found && getline(&line, &size, mounts) > 0)
		found = sscanf(line, "%*s %*s %u:%u", &major, &minor) == 2 &&
			makedev(major, minor) == dev;
	free(line);
	return found;
}

/*
 * DIR's mount, in the namespace NS names, into s->root_fd, and its path
 * there (as NS sees it) into s->root.  Everything NS's owner could choose
 * is settled first, here: the namespace file, our own /proc/self (NS's
 * /proc is theirs to mount over), our mount table.  After setns(2) the
 * command makes system calls only.
 *
 * In a namespace another user owns, that user may unmount what was just
 * mounted at DIR and put there a copy of one of our own mounts, whose
 * system scope the load would then replace: a file system that this
 * namespace has mounted too is refused.  (A mount made in a namespace of
 * another user never propagates here, so the mount just made is not one.)
 * 0, or an exit status after a message.
 */
static int enter_mount_ns(struct scope_cmd *s)
{
	const char *ns = s->mount_ns;
	char path[PATH_MAX], fd_link[32];
	FILE *ours = NULL;
	int nsfd, self, ret = EXIT_USAGE;
	struct stat st;
	ssize_t n;

	if (ns[0] && !ns[strspn(ns, "0123456789")])
		snprintf(path, sizeof(path), "/proc/%s/ns/mnt", ns);
	else
		snprintf(path, sizeof(path), "%s", ns);
	nsfd = open(path, O_RDONLY | O_CLOEXEC);
	if (nsfd < 0) {
		fprintf(stderr, "varsym: %s: cannot open its mount namespace (%s): %s\n",
			ns, path, strerror(errno));
		return EXIT_USAGE;
	}
	self = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (self < 0) {
		fprintf(stderr, "varsym: /proc/self: %s\n", strerror(errno));
		goto out;
	}
	if (owned_by_another(nsfd)) {
		ours = fopen("/proc/self/mountinfo", "re");
		if (!ours) {
			fprintf(stderr, "varsym: /proc/self/mountinfo: %s\n",
				strerror(errno));
			goto out;
		}
	}
	if (setns(nsfd, CLONE_NEWNS)) {
		if (errno == EINVAL)
			fprintf(stderr, "varsym: %s: not a mount namespace\n",
				ns);
		else
			fprintf(stderr, "varsym: %s: cannot enter its mount namespace: %s\n",
				ns, strerror(errno));
		goto out;
	}
	s->root_fd = open(s->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s->root_fd < 0) {
		fprintf(stderr, "varsym: %s: %s: %s\n", ns, s->dir,
			strerror(errno));
		goto out;
	}
	snprintf(fd_link, sizeof(fd_link), "fd/%d", s->root_fd);
	n = readlinkat(self, fd_link, s->root, sizeof(s->root) - 1);
	if (n <= 0 || s->root[0] != '/' || (size_t)n == sizeof(s->root) - 1) {
		fprintf(stderr, "varsym: %s: %s: where it is in the namespace cannot be told\n",
			ns, s->dir);
		goto out;
	}
	s->root[n] = '\0';
	if (fgetxattr(s->root_fd, VARSYM_XATTR_SYSTEM_SCOPE, NULL, 0) < 0) {
		fprintf(stderr, "varsym: %s: %s: not a varsymfs mount (%s)\n",
			ns, s->dir, strerror(errno));
		goto out;
	}
	if (ours && (fstat(s->root_fd, &st) || mounted_in(ours, st.st_dev))) {
		fprintf(stderr, "varsym: %s: %s: not loaded: its file system is mounted outside the namespace too, so it is not a mount made there\n",
			ns, s->dir);
		goto out;
	}
	ret = 0;
out:
	if (ours)
		fclose(ours);
	if (self >= 0)
		close(self);
	close(nsfd);
	return ret;
}

/* ---- the commands ---- */

/* What a verb takes: its options, and after DIR its operands. */
struct verb {
	bool scope;		/* -s, -u */
	bool save;		/* --save */
	bool config;		/* --config FILE */
	bool mount_ns;		/* --mount-ns NS */
	int min, max;		/* operands after DIR */
};

/*
 * The verb's options, then DIR: the index of the first operand after DIR,
 * or -1 with *status set.
 */
static int parse(struct scope_cmd *s, const struct verb *v, int argc,
		 char **argv, int *status)
{
	static const struct option longopts[] = {
		{ "system", no_argument, NULL, 's' },
		{ "user", no_argument, NULL, 'u' },
		{ "save", no_argument, NULL, 'S' },
		{ "config", required_argument, NULL, 'c' },
		{ "mount-ns", required_argument, NULL, 'N' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, operands;
	bool system = false, user = false;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":suc:h", longopts, NULL)) != -1) {
		if (c == 's' && v->scope) {
			system = true;
		} else if (c == 'u' && v->scope) {
			user = true;
		} else if (c == 'S' && v->save) {
			s->save = true;
		} else if (c == 'c' && v->config) {
			s->config = optarg;
		} else if (c == 'N' && v->mount_ns) {
			s->mount_ns = optarg;
		} else if (c == 'h') {
			usage(stdout);
			*status = EXIT_RESOLVES;
			return -1;
		} else if (c == 'c' || c == 'N') {
			*status = bad_usage(c == 'c' ?
					    "--config is an option of load only" :
					    "--mount-ns is an option of load only",
					    NULL);
			return -1;
		} else {
			/* ':' or '?', or an option of another verb */
			*status = bad_option(c == ':' ? c : '?', argv);
			return -1;
		}
	}
	if (system && user) {
		*status = bad_usage("-s and -u name two scopes: give one", NULL);
		return -1;
	}
	if (s->mount_ns && !*s->mount_ns) {
		*status = bad_usage("--mount-ns needs a PID or a namespace file",
				    NULL);
		return -1;
	}
	if (system)
		s->system = true;
	s->scope_given = system || user;
	operands = argc - optind - 1;
	if (optind == argc) {
		*status = bad_usage("missing DIR", NULL);
		return -1;
	}
	if (operands < v->min) {
		*status = bad_usage("missing NAME after", argv[optind]);
		return -1;
	}
	if (operands > v->max) {
		*status = bad_usage(v->max ? "one NAME only, not also" :
				    "one DIR only, not also",
				    argv[optind + 1 + v->max]);
		return -1;
	}
	s->dir = argv[optind];
	/* a mount of another namespace is found there, after the file */
	*status = s->mount_ns ? 0 : find_root(s, argv[optind]);
	return *status ? -1 : optind + 1;
}

/* Each argument, checked for the form and joined NUL-separated. */
static int join(int argc, char **argv, int first, bool set, size_t *len)
{
	int i;

	*len = 0;
	for (i = first; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t n = strlen(argv[i]) + 1;

		if (set ? !eq : eq != NULL)
			return bad_usage(set ? "set needs NAME=VALUE, not" :
					 "unset needs NAME, not", argv[i]);
		if (*len + n > sizeof(edits)) {
			fprintf(stderr, "varsym: more than %d bytes of changes\n",
				VARSYM_SCOPE_MAX);
			return EXIT_REFUSED;
		}
		memcpy(edits + *len, argv[i], n);
		*len += n;
	}
	return 0;
}

/*
 * Root's varsym set without -s or -u changes root's own user scope, which
 * every process of real uid 0 follows: say so where it is run.
 */
static void note_roots_scope(const struct scope_cmd *s)
{
	if (s->scope_given || getuid() != 0)
		return;
	fprintf(stderr, "varsym: note: that was root's own user scope (-u), which every process of real uid 0 follows: what sudo runs, root's services and cron jobs; other users' processes do not see it. The system scope, for every process, is -s.\n");
}

static int cmd_change(int argc, char **argv, bool set)
{
	const struct verb v = {
		.scope = true, .save = true,
		.min = 1, .max = INT_MAX,
	};
	struct scope_cmd s = { 0 };
	size_t len;
	int first, status;

	first = parse(&s, &v, argc, argv, &status);
	if (first < 0)
		return status;
	status = join(argc, argv, first, set, &len);
	if (!status)
		status = change(&s, len);
	if (!status)
		note_roots_scope(&s);
	return status;
}

int cmd_set(int argc, char **argv)
{
	return cmd_change(argc, argv, true);
}

int cmd_unset(int argc, char **argv)
{
	return cmd_change(argc, argv, false);
}

int cmd_list(int argc, char **argv)
{
	const struct verb v = { .scope = true };
	struct scope_cmd s = { 0 };
	struct varsym_scope_entry e;
	size_t pos = 0;
	ssize_t n;
	int status;

	if (parse(&s, &v, argc, argv, &status) < 0)
		return status;
	n = read_scope(&s, block);
	if (n < 0)
		return EXIT_USAGE;
	while (varsym_scope_next(block, n, &pos, &e)) {
		put_bytes(e.name, e.name_len);
		putchar('=');
		put_bytes(e.value, e.value_len);
		putchar('\n');
	}
	/* what the scope's file holds that a load leaves out, on stderr */
	scope_skipped(&s, NULL, NULL);
	return EXIT_RESOLVES;
}

/*
 * One name's value, alone on a line: from the scope -s or -u names, or
 * without either from the user scope, then the system scope (what the
 * caller's processes get when their environment does not set it).
 */
int cmd_get(int argc, char **argv)
{
	const struct verb v = { .scope = true, .min = 1, .max = 1 };
	struct scope_cmd s = { 0 };
	char value[VARSYM_PATH_MAX];
	const char *name;
	ssize_t n;
	int first, status, i;

	first = parse(&s, &v, argc, argv, &status);
	if (first < 0)
		return status;
	name = argv[first];
	if (!varsym_name_valid(name, strlen(name)))
		return bad_usage("get needs a variable name, not", name);
	for (i = 0; i < 2; i++) {
		if (i == 0 && s.scope_given && s.system)
			continue;		/* -s: the system scope only */
		if (i == 1 && s.scope_given && !s.system)
			break;			/* -u: the user scope only */
		s.system = i == 1;
		n = read_scope(&s, block);
		if (n < 0)
			return EXIT_USAGE;
		n = varsym_env_lookup(block, n, name, strlen(name), value,
				      sizeof(value));
		if (n > 0) {
			fwrite(value, 1, n, stdout);
			putchar('\n');
			return EXIT_RESOLVES;
		}
	}
	return EXIT_UNRESOLVED;
}

/*
 * The scope becomes the configuration's section for the mount, in one
 * change: what it no longer names is unset.  The file is read first: with
 * --mount-ns, the caller's, before the command enters the namespace.  No
 * file: nothing to do.
 */
static int load(struct scope_cmd *s)
{
	struct varsym_scope_entry e;
	struct report r = { 0 };
	char *text;
	const char *path;
	ssize_t n, old, len;
	size_t pos = 0;
	int status;

	if (!s->system && !s->config && !config_path(s))
		return no_user_config();
	len = config_read(s, &path, &text, false);
	r.path = path;
	if (len < 0 && (len != -ENOENT || s->config))
		return EXIT_USAGE;
	status = s->mount_ns ? enter_mount_ns(s) : 0;
	if (status || len < 0) {
		free(text);
		return status;
	}
	n = varsym_conf_section(text, len, s->root, edited, sizeof(edited),
				print_report, &r);
	free(text);
	old = read_scope(s, block);
	if (old < 0)
		return EXIT_USAGE;
	/* unset what the file no longer names, then its values */
	len = 0;
	while (varsym_scope_next(block, old, &pos, &e)) {
		struct varsym_scope_entry f;
		size_t at = 0;
		bool kept = false;

		while (!kept && varsym_scope_next(edited, n, &at, &f))
			kept = f.name_len == e.name_len &&
			       !memcmp(f.name, e.name, e.name_len);
		if (kept || len + e.name_len + 1 > sizeof(edits))
			continue;
		memcpy(edits + len, e.name, e.name_len);
		edits[len + e.name_len] = '\0';
		len += e.name_len + 1;
	}
	if ((size_t)(len + n) > sizeof(edits)) {
		fprintf(stderr, "varsym: %s: too large to load in one change\n",
			path);
		return EXIT_REFUSED;
	}
	memcpy(edits + len, edited, n);
	len += n;
	if (len && (s->mount_ns ?
		    fsetxattr(s->root_fd, attr_of(s), edits, len, 0) :
		    setxattr(s->root, attr_of(s), edits, len, 0)))
		return change_failed(s, errno);
	return r.skipped ? EXIT_REFUSED : EXIT_RESOLVES;
}

int cmd_load(int argc, char **argv)
{
	const struct verb v = { .scope = true, .config = true,
				.mount_ns = true };
	struct scope_cmd s = { .root_fd = -1 };
	int status;

	if (parse(&s, &v, argc, argv, &status) < 0)
		return status;
	s.system = !s.scope_given || s.system;	/* the system's by default */
	status = load(&s);
	if (s.root_fd >= 0)
		close(s.root_fd);
	return status;
}

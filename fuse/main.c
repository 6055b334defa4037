// SPDX-License-Identifier: GPL-2.0-only
/*
 * main.c - the varsymfs FUSE program: command line, mount, loop, unmount.
 *
 *   varsymfs [-f] [-d] [-s] [--multithread] [-o OPTIONS] [SOURCE] MOUNTPOINT
 *
 * Options are split three ways: varsymfs's own go to the shared core's
 * parser (the kernel module uses the same one), FUSE's and mount(8)'s go on
 * to libfuse, and SOURCE is accepted and ignored, as mount.fuse3 passes it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec_mode.h"
#include "fs.h"

#ifndef VARSYM_VERSION
#define VARSYM_VERSION "unknown"
#endif

enum { KEY_HELP, KEY_VERSION, KEY_MULTITHREAD, KEY_NAIVE, KEY_CONSTANT,
	KEY_FAIL_EXEC_STATE, KEY_FAIL_EXEC_FILES, KEY_FAIL_SERVE };

struct cmdline {
	struct vsfuse *fs;
	struct varsym_opts *opts;
	const char *positional[2];	/* [SOURCE] MOUNTPOINT */
	int npositional;
	bool help, version, failed, allow_other, multithread;
};

static const struct fuse_opt cmdline_spec[] = {
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("--multithread", KEY_MULTITHREAD),
#ifdef VSFUSE_BENCH
	FUSE_OPT_KEY("--naive", KEY_NAIVE),
	FUSE_OPT_KEY("--constant=", KEY_CONSTANT),
#endif
#ifdef VSFUSE_FAULTS
	FUSE_OPT_KEY("--fail-exec-state", KEY_FAIL_EXEC_STATE),
	FUSE_OPT_KEY("--fail-exec-files", KEY_FAIL_EXEC_FILES),
	FUSE_OPT_KEY("--fail-serve", KEY_FAIL_SERVE),
#endif
	FUSE_OPT_END
};

static void usage(const char *progname)
{
	printf("usage: %s [-f] [-d] [-s] [--multithread] [-o OPTIONS] [SOURCE] MOUNTPOINT\n"
	       "\n"
	       "Mounts variant symbolic links: links whose target is chosen by an\n"
	       "environment variable of the process that follows them.\n"
	       "\n"
	       "varsymfs options (-o, comma-separated; see varsymfs(5)):\n"
	       "    NAME, var=NAME    seed mode: the link 'resolve' gives $NAME\n"
	       "    default=VALUE     target when NAME is unset or empty, and for\n"
	       "                      setuid (secure-exec) processes\n"
	       "    prefix=PATH       prepended to the value and the default; a\n"
	       "                      value with a '..' component is refused\n"
	       "    uid=N,gid=N,mode=M  template mode (no NAME): owner and mode of\n"
	       "                      the directory of links\n"
	       "    nr_links=N        template mode: the most links it holds\n"
	       "                      (default %d); one more is ENOSPC\n"
	       "    search[=VAR]      search mode: every name N is a link to the\n"
	       "                      first DIR/N the caller may execute, DIR from\n"
	       "                      $VAR (default PATH), then from fallback=\n"
	       "    fallback=DIR[:DIR...]  search mode: the directories searched\n"
	       "                      last, and the only ones for setuid programs\n"
	       "                      (at most %d)\n"
	       "\n"
	       "SOURCE is ignored (write 'none'). Run as root, the mount serves\n"
	       "every user (allow_other is implied).\n"
	       "\n"
	       "varsymfs's own options:\n"
	       "    --multithread     serve with libfuse's pool of threads, whatever\n"
	       "                      the number of CPUs\n"
	       "\n"
	       "Threads: one reads requests on machines of 1 or 2 CPUs (a request\n"
	       "served on the caller's CPU is cheapest there), libfuse's pool on\n"
	       "larger ones; -s forces one, --multithread the pool.  Serving every\n"
	       "user, the daemon hands what its cache cannot answer to workers of\n"
	       "its own, and reads callers' environments in child processes.\n"
#ifdef VSFUSE_BENCH
	       "\n"
	       "The benchmarks' options of this build:\n"
	       "    --naive           read /proc/PID/environ on every request, as a\n"
	       "                      straightforward FUSE server would\n"
	       "    --constant=TARGET answer TARGET to everyone: the FUSE floor\n"
#endif
#ifdef VSFUSE_FAULTS
	       "\n"
	       "The tests' faults of this build:\n"
	       "    --fail-exec-state the exec hooks never have a thread's\n"
	       "                      state (the tests' failed allocations)\n"
	       "    --fail-exec-files the exec hooks never have room for the\n"
	       "                      records of an exec's files\n"
#endif
	       "\n"
	       "libfuse's options, with -h, -V, -f, -d and -s:\n",
	       progname, VARSYM_NR_LINKS_DEFAULT, VARSYM_SEARCH_FALLBACK_MAX);
}

static int opt_proc(void *data, const char *arg, int key,
		    struct fuse_args *outargs)
{
	struct cmdline *cl = data;
	char msg[VARSYM_MSG_MAX], *copy, *value;
	int ret;

	(void)outargs;
	switch (key) {
	case KEY_HELP:
		cl->help = true;
		return 0;
	case KEY_VERSION:
		cl->version = true;
		return 0;
	case KEY_MULTITHREAD:
		cl->multithread = true;
		return 0;
#ifdef VSFUSE_BENCH
	case KEY_NAIVE:
		cl->fs->naive = true;
		return 0;
	case KEY_CONSTANT:
		cl->fs->constant = arg + strlen("--constant=");
		return 0;
#endif
#ifdef VSFUSE_FAULTS
	case KEY_FAIL_EXEC_STATE:
		vsfuse_exec_hooks_faults |= VSFUSE_FAIL_TASK_STORAGE;
		return 0;
	case KEY_FAIL_EXEC_FILES:
		vsfuse_exec_hooks_faults |= VSFUSE_FAIL_EXEC_FILES;
		return 0;
	case KEY_FAIL_SERVE:
		vsfuse_exec_hooks_faults |= VSFUSE_FAIL_SERVE;
		return 0;
#endif
	case FUSE_OPT_KEY_NONOPT:
		if (cl->npositional == 2) {
			fprintf(stderr, "varsymfs: unexpected argument '%s'\n",
				arg);
			cl->failed = true;
			return -1;
		}
		cl->positional[cl->npositional++] = arg;
		return 0;
	}
	if (arg[0] == '-')		/* -f, -d, -s...: libfuse's */
		return 1;
	copy = strdup(arg);
	if (!copy) {
		cl->failed = true;
		return -1;
	}
	value = strchr(copy, '=');
	if (value)
		*value++ = '\0';
	ret = varsym_opts_parse_one(cl->opts, copy, value, msg, sizeof(msg));
	if (ret == VARSYM_OPT_FOREIGN && !strcmp(copy, "allow_other"))
		cl->allow_other = true;
	/* fstab's words, accepted with no effect, as under mount(8) */
	if (ret == VARSYM_OPT_FOREIGN && varsym_opt_mount_only(copy))
		ret = 0;
	free(copy);
	if (ret < 0) {
		fprintf(stderr, "varsymfs: %s\n", msg);
		cl->failed = true;
		return -1;
	}
	return ret == VARSYM_OPT_FOREIGN;	/* 1 keeps it for libfuse */
}

#define FSNAME_MAX 1024

/* text with ',' and '\\' escaped for libfuse's -o parser. */
static char *escape_option(const char *text)
{
	char *out = malloc(2 * strlen(text) + 1), *d = out;

	if (!out)
		return NULL;
	for (; *text; text++) {
		if (*text == ',' || *text == '\\')
			*d++ = '\\';
		*d++ = *text;
	}
	*d = '\0';
	return out;
}

/*
 * The options in force become the mount's source (fsname), the one free
 * field FUSE shows in /proc/self/mountinfo: "var=UNIVERSE,default=/ucb".
 */
static int add_mount_options(struct fuse_args *args, struct vsfuse *fs,
			     bool allow_other)
{
	char shown[FSNAME_MAX + 4], *opt, *escaped;
	int ret;

	varsym_opts_text(&fs->opts, fs->options_text,
			 sizeof(fs->options_text));
	/*
	 * The mount's data is one page: long options are cut short there, and
	 * whole in the seed link's system.varsym_options.
	 */
	snprintf(shown, sizeof(shown), "%.*s%s", FSNAME_MAX,
		 fs->options_text[0] ? fs->options_text : "varsymfs",
		 strlen(fs->options_text) > FSNAME_MAX ? "..." : "");
	escaped = escape_option(shown);
	if (!escaped)
		return -1;
	ret = asprintf(&opt, "-ofsname=%s", escaped);
	free(escaped);
	if (ret < 0)
		return -1;
	ret = fuse_opt_add_arg(args, opt);
	free(opt);
	if (ret || fuse_opt_add_arg(args, "-osubtype=varsymfs") ||
	    fuse_opt_add_arg(args, "-odefault_permissions"))
		return -1;
	fs->serves_others = allow_other || geteuid() == 0;
	if (fs->serves_others && !allow_other)
		return fuse_opt_add_arg(args, "-oallow_other");
	return 0;
}

/*
 * Without the exec hooks, a mount that serves others tells an execve from
 * other calls by /proc/TID/syscall of its callers: Yama's ptrace_scope=3,
 * an LSM policy or a daemon without root may forbid it.  Returns 0 when a
 * process's syscall file can be read, or the errno that forbids it.
 */
static int syscall_unreadable(int procfd)
{
	char line[256], path[32];
	int fd = -1, err, pipefd[2];
	pid_t child;

	/*
	 * Probe a child of ours, asleep on a pipe: pid 1 may be special (a
	 * container's, a build host's) and say no where callers would not.
	 */
	if (pipe2(pipefd, O_CLOEXEC))
		return 0;
	child = fork();
	if (child == 0) {
		close(pipefd[1]);
		_exit(read(pipefd[0], line, 1) < 0);
	}
	close(pipefd[0]);
	if (child > 0) {
		snprintf(path, sizeof(path), "%d/syscall", (int)child);
		fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
	}
	err = fd >= 0 && read(fd, line, sizeof(line)) >= 0 ? 0 : errno;
	if (fd >= 0)
		close(fd);
	close(pipefd[1]);
	if (child > 0)
		waitpid(child, NULL, 0);
	return child < 0 ? 0 : err;
}

/* text on stderr in lines of at most 78 columns, the rest indented */
static void say_wrapped(const char *text)
{
	int col = 0, len;

	while (*text) {
		len = strcspn(text, " ");
		if (col && col + 1 + len > 78) {
			fputs("\n ", stderr);
			col = 1;
		}
		if (col++)
			fputc(' ', stderr);
		fprintf(stderr, "%.*s", len, text);
		col += len;
		text += len + strspn(text + len, " ");
	}
	fputc('\n', stderr);
}

/*
 * A daemon serving others without its exec hooks resolves every walk
 * inside an execve as for a setuid program, and every walk at all when it
 * cannot read /proc/TID/syscall either (blind, an errno): it still works,
 * failing closed.  What that breaks (the words `varsym explain` says,
 * core/exec_mode.c), why, and what mends it, in one message at mount.
 * loaded: the hooks are there, but this mount could not be registered
 * with them.
 */
static void warn_no_exec_hooks(const struct vsfuse *fs, const char *why,
			       int blind, bool loaded)
{
	const struct varsym_exec_mode_text *t =
		&varsym_exec_modes[VARSYM_EXECMODE_SYSCALL_ONLY];
	bool search = varsym_opts_search_mode(&fs->opts);
	char line[512];

	if (blind)
		fprintf(stderr,
			"varsymfs: warning: every lookup through this mount, not only a program's,\n"
			"  is answered as for a setuid program (%s):\n"
			"  it cannot read other processes' /proc/PID/syscall (%s: Yama's\n"
			"  ptrace_scope=3, an LSM, or not root).\n",
			search ? "its fallback directories only" :
				 "the default's target",
			strerror(blind));
	else {
		snprintf(line, sizeof(line), "varsymfs: warning: %s; %s.",
			 search ? t->runs_search : t->runs,
			 search ? "stat, test -x and command -v still find a program on the caller's PATH" :
				  "other lookups follow the caller");
		say_wrapped(line);
	}
	if (loaded) {
		fprintf(stderr,
			"  Why: the daemon could not register this mount with its exec hooks\n"
			"  (%s).\n", why);
		return;
	}
	fprintf(stderr,
		"  Why: the daemon cannot put its BPF program on the kernel's exec hooks\n"
		"  (%s).\n"
		"  To fix it: a kernel with the BPF LSM (bpf in its lsm= boot parameter, as\n"
		"  in Debian's kernels) and the daemon run as root (CAP_BPF and CAP_PERFMON),\n"
		"  or the kernel module instead: mount -t varsymfs. See varsymfs(8).\n",
		why);
}

/*
 * How walks inside an execve are told apart (caller.c): the exec hooks'
 * BPF program where it loads, /proc alone where it cannot, and nothing
 * needed on a mount that serves only its owner.  Said once, at mount
 * (where it breaks something), and on the links' system.varsym_exec,
 * which `varsym explain` reads.
 */
static void choose_exec_mode(struct vsfuse *fs)
{
	char why[160];

	if (!fs->serves_others) {
		varsym_exec_mode_say(fs->exec_mode, sizeof(fs->exec_mode),
				     VARSYM_EXECMODE_OWNER_ONLY, NULL);
		return;
	}
	fs->hooks = vsfuse_exec_hooks_load(why, sizeof(why));
	if (fs->hooks) {
		varsym_exec_mode_say(fs->exec_mode, sizeof(fs->exec_mode),
				     VARSYM_EXECMODE_HOOKS, NULL);
		return;
	}
	varsym_exec_mode_say(fs->exec_mode, sizeof(fs->exec_mode),
			     VARSYM_EXECMODE_SYSCALL_ONLY, why);
	warn_no_exec_hooks(fs, why, syscall_unreadable(fs->procfd), false);
}

/* Our options out of args, the rest left for libfuse; 0 or -1. */
static int parse_args(struct fuse_args *args, struct vsfuse *fs,
		      struct cmdline *cl)
{
	char msg[VARSYM_MSG_MAX];

	varsym_opts_init(&fs->opts);
	cl->fs = fs;
	cl->opts = &fs->opts;
	if (fuse_opt_parse(args, cl, cmdline_spec, opt_proc) || cl->failed)
		return -1;
	if (cl->help || cl->version)
		return 0;
	if (varsym_opts_finish(&fs->opts, msg, sizeof(msg))) {
		fprintf(stderr, "varsymfs: %s\n", msg);
		return -1;
	}
	if (cl->npositional == 0) {
		fprintf(stderr, "varsymfs: no mount point given (try --help)\n");
		return -1;
	}
	if (fuse_opt_add_arg(args, cl->positional[cl->npositional - 1]) ||
	    add_mount_options(args, fs, cl->allow_other))
		return -1;
	return 0;
}

/*
 * A search mount's fallback= directories: one that does not exist (a
 * typo, or a directory made later in boot) finds nothing, which a search
 * never says.  Warned of as mount.varsymfs does for the module's mounts,
 * before the mount: a directory under it would be walked through this
 * very program, not yet serving.
 */
static void warn_missing_fallback(const struct varsym_opts *o)
{
	const char *p = o->dflt, *end = o->dflt + o->dflt_len, *colon;
	char dir[VARSYM_PATH_MAX];
	struct stat st;
	size_t len;

	if (!varsym_opts_search_mode(o) || !(o->given & VARSYM_OPT_FALLBACK))
		return;
	for (; p < end; p += len + 1) {
		colon = memchr(p, ':', end - p);
		len = colon ? (size_t)(colon - p) : (size_t)(end - p);
		memcpy(dir, p, len);
		dir[len] = '\0';
		if (stat(dir, &st) || !S_ISDIR(st.st_mode))
			fprintf(stderr, "varsymfs: warning: fallback=%s: no such directory (yet): a search finds nothing there\n",
				dir);
	}
}

/*
 * libfuse takes "/dev/fd/N" for a /dev/fuse descriptor that another
 * process mounted.  The kernel names each caller by its tid in the pid
 * namespace of whoever mounted, and the daemon reads that tid in its own
 * /proc: mounted from another namespace, that is another process, whose
 * environment would choose the caller's target.  Nothing tells the daemon
 * which namespace it was, so it serves only the mounts it makes itself.
 */
static bool handed_descriptor(const char *mountpoint)
{
	unsigned int fd;
	int end = 0;

	return sscanf(mountpoint, "/dev/fd/%u%n", &fd, &end) == 1 &&
	       mountpoint[end] == '\0';
}

/* Whether to keep answers: always, but in the benchmarks' baselines. */
static bool wants_cache(const struct vsfuse *fs)
{
#ifdef VSFUSE_BENCH
	return !fs->naive && !fs->constant;
#else
	(void)fs;
	return true;
#endif
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts opts = { 0 };
	struct fuse_loop_config *config;
	struct cmdline cl = { 0 };
	struct fuse_session *se;
	static struct vsfuse fs;
	char msg[VARSYM_MSG_MAX];
	int ret = -1, err;

	if (parse_args(&args, &fs, &cl))
		goto out_free_args;
	if (cl.help) {
		usage(argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out_free_args;
	}
	if (cl.version) {
		printf("varsymfs version %s\n", VARSYM_VERSION);
		/* ours first: libfuse's fusermount3 writes to the same fd */
		fflush(stdout);
		fuse_lowlevel_version();
		ret = 0;
		goto out_free_args;
	}
	if (fuse_parse_cmdline(&args, &opts))
		goto out_free_args;
	if (opts.mountpoint && handed_descriptor(opts.mountpoint)) {
		fprintf(stderr, "varsymfs: %s: a /dev/fuse descriptor mounted by another process is not served (it names callers by the tids of that process's pid namespace, which varsymfs cannot check): give a directory\n",
			opts.mountpoint);
		goto out_free_opts;
	}
	fs.procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs.procfd < 0) {
		perror("varsymfs: /proc");
		goto out_free_opts;
	}
	choose_exec_mode(&fs);
	if (vsfuse_fs_init(&fs, geteuid(), getegid())) {
		perror("varsymfs");
		goto out_close_proc;
	}
	if (vsfuse_scopes_load(&fs.scopes, opts.mountpoint, msg,
			       sizeof(msg))) {
		fprintf(stderr, "varsymfs: %s; not mounted\n", msg);
		goto out_destroy_fs;
	}
	/* the exec hooks' snapshots prove a kept answer, or /proc does */
	if (wants_cache(&fs) && vsfuse_cache_new(&fs.cache, fs.hooks != NULL) &&
	    opts.debug)
		fprintf(stderr, "varsymfs: no cache: %m\n");

	se = fuse_session_new(&args, &vsfuse_ops, sizeof(vsfuse_ops), &fs);
	if (!se)
		goto out_destroy_fs;
	if (fuse_set_signal_handlers(se))
		goto out_destroy;
	warn_missing_fallback(&fs.opts);
	if (fuse_session_mount(se, opts.mountpoint))
		goto out_remove_handlers;
	/* the exec hooks snapshot the follows of this mount from now on */
	err = vsfuse_exec_hooks_serve(fs.hooks, opts.mountpoint);
	if (err) {
		/* no snapshots of this mount's follows: /proc alone */
		snprintf(msg, sizeof(msg),
			 "could not register this mount with its exec hooks: %s",
			 strerror(-err));
		varsym_exec_mode_say(fs.exec_mode, sizeof(fs.exec_mode),
				     VARSYM_EXECMODE_SYSCALL_ONLY, msg);
		warn_no_exec_hooks(&fs, strerror(-err), 0, true);
	}
	if (fuse_daemonize(opts.foreground))
		goto out_unmount;
	/*
	 * On 2 CPUs one thread answers faster than the pool, whose workers
	 * wake on the other CPU (docs/PERFORMANCE.md has the figures).
	 */
	if (!cl.multithread && sysconf(_SC_NPROCESSORS_ONLN) <= 2)
		opts.singlethread = 1;
	if (opts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		config = fuse_loop_cfg_create();
		if (!config)
			goto out_unmount;
		fuse_loop_cfg_set_clone_fd(config, opts.clone_fd);
		fuse_loop_cfg_set_max_threads(config, opts.max_threads);
		ret = fuse_session_loop_mt(se, config);
		fuse_loop_cfg_destroy(config);
	}
	/* answer what the workers still hold while the session exists */
	vsfuse_fs_finish(&fs);
out_unmount:
	fuse_session_unmount(se);
out_remove_handlers:
	fuse_remove_signal_handlers(se);
out_destroy:
	fuse_session_destroy(se);
out_destroy_fs:
	vsfuse_cache_free(fs.cache);
	vsfuse_fs_destroy(&fs);
out_close_proc:
	vsfuse_exec_hooks_unload(fs.hooks);
	close(fs.procfd);
out_free_opts:
	free(opts.mountpoint);
out_free_args:
	fuse_opt_free_args(&args);
	/* the loop returns a signal number after SIGTERM/SIGINT: clean too */
	return ret < 0 ? 1 : 0;
}

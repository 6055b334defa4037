// SPDX-License-Identifier: GPL-2.0-only
/*
 * vsbench - time one system call through paths, for bench/run.
 *
 * Repeats stat(2), open(2)+close(2) or readlink(2) of each PATH, or runs
 * each PROGRAM (fork + execve + wait, for the compile case), and prints per
 * path the median, minimum and maximum over RUNS runs of the time per call
 * in nanoseconds (CLOCK_MONOTONIC), and where it ran.  Every call's result
 * is checked, so a broken link ends the benchmark instead of timing a fast
 * ENOENT.
 *
 * Several paths are measured side by side: each run is cut in BLOCKS
 * blocks, and each block runs every path in turn, so that the paths share
 * whatever the machine was doing (another guest, a build, a CPU migration).
 * Their ratios then hold far better than their absolute times.
 *
 * The process's environment is whatever its caller gave execve(2): variant
 * links read it, so bench/run builds it (size, order) and execs us with it.
 *
 *   vsbench [OPTIONS] stat|open|readlink PATH...
 *   vsbench [OPTIONS] exec -- PROGRAM [ARG...] [-- PROGRAM [ARG...]]...
 *
 *   --iters N       calls per run and path (default 100000)
 *   --runs R        runs (default 5)
 *   --blocks B      blocks per run (default 10, at most ITERS)
 *   --warmup W      untimed calls per path first (default: ITERS / 10, at
 *                   most 1000)
 *   --budget MS     fewer calls for a path whose warm-up shows that a run
 *                   of it would last longer than MS milliseconds
 *   --cpu C         pin to CPU C first
 *   --stats FILE    the counters of varsymfs.ko ("rcu N echild N ref N"),
 *                   read around every block: each path's own follows
 *   --bind SRC:DST  first bind-mount SRC on DST in a new private mount
 *                   namespace (gone when we exit): the per-process
 *                   alternative to a variant link
 *   --chroot DIR    chroot(2) to DIR (after --bind and --stats), so that the
 *                   timed walks start in DIR's file system
 *   --header        print the names of the columns first
 *
 * Output, one line per path: op, path index, iters (after --budget), runs,
 * median_ns, min_ns, max_ns, placement ("cpu C" when pinned, else "free"
 * and the CPUs seen), run_ns (each run's time per call), run_follows (each
 * run's rcu/echild/ref counts, or "-").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum op { OP_STAT, OP_OPEN, OP_READLINK, OP_EXEC };

static const char *const op_names[] = {
	[OP_STAT] = "stat", [OP_OPEN] = "open", [OP_READLINK] = "readlink",
	[OP_EXEC] = "exec",
};

enum { ST_RCU, ST_ECHILD, ST_REF, NSTATS };

struct target {
	const char *path;		/* stat, open, readlink */
	char **argv;			/* exec: NULL-terminated */
	long iters;
	double *ns;			/* per run: total, then per call */
	unsigned long (*follows)[NSTATS];	/* per run */
};

struct bench {
	enum op op;
	struct target *t;
	int nt;
	long iters, runs, blocks, warmup, budget_ms;
	int cpu;			/* -1: not pinned */
	int stats;			/* fd of --stats, or -1 */
	int devnull;			/* the exec'd programs' stdout */
	unsigned long cpus_seen;	/* bit per CPU < 64 */
};

extern char **environ;

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "vsbench: %s%s%s: %s\n", what, arg ? " " : "",
		arg ? arg : "", strerror(errno));
	exit(1);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: vsbench [--iters N] [--runs R] [--blocks B] [--warmup W]\n"
		"               [--budget MS] [--cpu C] [--stats FILE]\n"
		"               [--bind SRC:DST] [--chroot DIR] [--header]\n"
		"               stat|open|readlink PATH...\n"
		"             | exec -- PROGRAM [ARG...] [-- PROGRAM [ARG...]]...\n");
	exit(2);
}

static void *alloc(size_t n, size_t size)
{
	void *p = calloc(n, size);

	if (!p)
		die("calloc", NULL);
	return p;
}

static long number(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (errno || *end || n < 0)
		usage();
	return n;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void note_cpu(struct bench *b)
{
	int cpu = sched_getcpu();

	if (cpu >= 0 && cpu < 64)
		b->cpus_seen |= 1UL << cpu;
}

/* The module's counters now; zeros without --stats. */
static void read_stats(const struct bench *b, unsigned long out[NSTATS])
{
	char buf[256];
	ssize_t n;

	memset(out, 0, NSTATS * sizeof(out[0]));
	if (b->stats < 0)
		return;
	n = pread(b->stats, buf, sizeof(buf) - 1, 0);
	if (n < 0)
		die("read", "--stats");
	buf[n] = '\0';
	if (sscanf(buf, "rcu %lu echild %lu ref %lu", &out[ST_RCU],
		   &out[ST_ECHILD], &out[ST_REF]) != 3) {
		fprintf(stderr, "vsbench: --stats: unexpected text '%s'\n", buf);
		exit(1);
	}
}

/* One fork + execve + wait; the program must succeed. */
static void run_program(const struct bench *b, char **argv)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		die("fork", NULL);
	if (pid == 0) {
		dup2(b->devnull, STDOUT_FILENO);
		execve(argv[0], argv, environ);
		fprintf(stderr, "vsbench: execve %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0)
		die("waitpid", NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "vsbench: %s failed (status %#x)\n", argv[0],
			status);
		exit(1);
	}
}

/* n calls through t; ends the program on the first failure. */
static void loop(const struct bench *b, const struct target *t, long n)
{
	char buf[PATH_MAX];
	struct stat st;
	long i;
	int fd;

	switch (b->op) {
	case OP_STAT:
		for (i = 0; i < n; i++)
			if (stat(t->path, &st) < 0)
				die("stat", t->path);
		break;
	case OP_OPEN:
		for (i = 0; i < n; i++) {
			fd = open(t->path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				die("open", t->path);
			close(fd);
		}
		break;
	case OP_READLINK:
		for (i = 0; i < n; i++)
			if (readlink(t->path, buf, sizeof(buf)) <= 0)
				die("readlink", t->path);
		break;
	case OP_EXEC:
		for (i = 0; i < n; i++)
			run_program(b, t->argv);
		break;
	}
}

/*
 * Warm caches (dentries, the environment's pages, the daemon's threads),
 * and with a budget, give a slow path fewer calls, so that a slow variant
 * (a 64 KiB environment scanned per call under TCG) cannot eat the whole
 * benchmark's time.  Every path keeps at least one call per block.
 */
static void warm_up(struct bench *b)
{
	double t0, per_call;
	long fit;
	int i;

	for (i = 0; i < b->nt; i++) {
		struct target *t = &b->t[i];

		t->iters = b->iters;
		if (!b->warmup)
			continue;
		t0 = now_ns();
		loop(b, t, b->warmup);
		per_call = (now_ns() - t0) / b->warmup;
		if (!b->budget_ms || per_call <= 0)
			continue;
		fit = (long)(b->budget_ms * 1e6 / per_call);
		if (fit < t->iters)
			t->iters = fit > b->blocks ? fit : b->blocks;
	}
}

/* One run: every block runs every path in turn. */
static void run(struct bench *b, long r)
{
	unsigned long before[NSTATS], after[NSTATS];
	long blk, n;
	double t0;
	int i, k;

	note_cpu(b);
	for (blk = 0; blk < b->blocks; blk++) {
		for (i = 0; i < b->nt; i++) {
			struct target *t = &b->t[i];

			n = t->iters / b->blocks +
			    (blk < t->iters % b->blocks ? 1 : 0);
			read_stats(b, before);
			t0 = now_ns();
			loop(b, t, n);
			t->ns[r] += now_ns() - t0;
			read_stats(b, after);
			for (k = 0; k < NSTATS; k++)
				t->follows[r][k] += after[k] - before[k];
		}
	}
	for (i = 0; i < b->nt; i++)
		b->t[i].ns[r] /= b->t[i].iters;
	note_cpu(b);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void print_placement(const struct bench *b)
{
	const char *sep = " ";
	int cpu;

	if (b->cpu >= 0) {
		printf("cpu %d", b->cpu);
		return;
	}
	printf("free");
	for (cpu = 0; cpu < 64; cpu++) {
		if (b->cpus_seen & (1UL << cpu)) {
			printf("%s%d", sep, cpu);
			sep = ",";
		}
	}
}

static void report(const struct bench *b, int index)
{
	const struct target *t = &b->t[index];
	double *sorted = alloc(b->runs, sizeof(*sorted));
	double median;
	long r, mid = b->runs / 2;

	memcpy(sorted, t->ns, b->runs * sizeof(*sorted));
	qsort(sorted, b->runs, sizeof(*sorted), cmp_double);
	median = b->runs % 2 ? sorted[mid] :
			       (sorted[mid - 1] + sorted[mid]) / 2;
	printf("%s\t%d\t%ld\t%ld\t%.1f\t%.1f\t%.1f\t", op_names[b->op], index,
	       t->iters, b->runs, median, sorted[0], sorted[b->runs - 1]);
	print_placement(b);
	for (r = 0; r < b->runs; r++)
		printf("%s%.1f", r ? "," : "\t", t->ns[r]);
	for (r = 0; r < b->runs; r++) {
		if (b->stats < 0) {
			printf("\t-");
			break;
		}
		printf("%s%lu/%lu/%lu", r ? "," : "\t", t->follows[r][ST_RCU],
		       t->follows[r][ST_ECHILD], t->follows[r][ST_REF]);
	}
	printf("\n");
	free(sorted);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity", NULL);
}

/* SRC:DST bind mount in a private mount namespace of our own. */
static void bind_mount(char *spec)
{
	char *dst = strchr(spec, ':');

	if (!dst)
		usage();
	*dst++ = '\0';
	if (unshare(CLONE_NEWNS))
		die("unshare(CLONE_NEWNS)", NULL);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		die("mount --make-rprivate", "/");
	if (mount(spec, dst, NULL, MS_BIND, NULL))
		die("mount --bind", dst);
}

/* The paths, or the programs of "exec -- A... -- B...", as targets. */
static void parse_targets(struct bench *b, int argc, char **argv)
{
	int i;

	b->t = alloc(argc, sizeof(*b->t));
	if (b->op != OP_EXEC) {
		for (i = 0; i < argc; i++)
			b->t[b->nt++].path = argv[i];
		return;
	}
	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--"))
			continue;
		argv[i] = NULL;		/* ends the previous program */
		if (i + 1 == argc || !strcmp(argv[i + 1], "--"))
			usage();
		b->t[b->nt].argv = argv + i + 1;
		b->t[b->nt++].path = argv[i + 1];
	}
}

static enum op parse_op(const char *s)
{
	int op;

	for (op = 0; op <= OP_EXEC; op++)
		if (!strcmp(s, op_names[op]))
			return op;
	usage();
	return OP_STAT;
}

static int open_stats(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open", path);
	return fd;
}

static void parse(struct bench *b, int argc, char **argv, bool *header)
{
	const char *root = NULL;
	int i;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		const char *opt = argv[i];

		if (!strcmp(opt, "--header")) {
			*header = true;
			continue;
		}
		if (i + 1 == argc)
			usage();
		if (!strcmp(opt, "--iters"))
			b->iters = number(argv[++i]);
		else if (!strcmp(opt, "--runs"))
			b->runs = number(argv[++i]);
		else if (!strcmp(opt, "--blocks"))
			b->blocks = number(argv[++i]);
		else if (!strcmp(opt, "--warmup"))
			b->warmup = number(argv[++i]);
		else if (!strcmp(opt, "--budget"))
			b->budget_ms = number(argv[++i]);
		else if (!strcmp(opt, "--cpu"))
			b->cpu = (int)number(argv[++i]);
		else if (!strcmp(opt, "--bind"))
			bind_mount(argv[++i]);
		else if (!strcmp(opt, "--chroot"))
			root = argv[++i];
		else if (!strcmp(opt, "--stats"))
			b->stats = open_stats(argv[++i]);
		else
			usage();
	}
	if (i + 2 > argc || b->iters < 1 || b->runs < 1 || b->blocks < 1)
		usage();
	b->op = parse_op(argv[i]);
	if ((b->op == OP_EXEC) != !strcmp(argv[i + 1], "--"))
		usage();
	parse_targets(b, argc - i - 1, argv + i + 1);
	if (b->blocks > b->iters)
		b->blocks = b->iters;
	if (b->warmup < 0)
		b->warmup = b->iters / 10 < 1000 ? b->iters / 10 : 1000;
	/* before chroot: the new root need not have a /dev */
	b->devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (b->devnull < 0)
		die("open", "/dev/null");
	if (root && (chroot(root) || chdir("/")))
		die("chroot", root);
}

int main(int argc, char *argv[])
{
	struct bench b = { .iters = 100000, .runs = 5, .blocks = 10,
			   .warmup = -1, .cpu = -1, .stats = -1 };
	bool header = false;
	long r;
	int i;

	parse(&b, argc, argv, &header);
	if (b.cpu >= 0)
		pin(b.cpu);
	for (i = 0; i < b.nt; i++) {
		b.t[i].ns = alloc(b.runs, sizeof(double));
		b.t[i].follows = alloc(b.runs, sizeof(*b.t[i].follows));
	}
	warm_up(&b);
	for (r = 0; r < b.runs; r++)
		run(&b, r);
	if (header)
		printf("op\tpath\titers\truns\tmedian_ns\tmin_ns\tmax_ns\t"
		       "placement\trun_ns\trun_follows\n");
	for (i = 0; i < b.nt; i++)
		report(&b, i);
	return 0;
}

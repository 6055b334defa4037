// SPDX-License-Identifier: GPL-2.0-only
/*
 * stallfs - a FUSE file system that never answers some requests: what any
 * user can mount (through the setuid fusermount3) to make whoever reads it
 * wait, for tests/conformance/test_bounded.py.
 *
 *   stallfs [--slow NAME:TARGET:MS]... [--hang NAME]... [--exe NAME:PATH]...
 *           [--slow-read MS] [--hold-flush] [--allow-other] MOUNTPOINT
 *
 * The root directory holds:
 *   file    a regular file (mode 0755, 1 MiB): LOOKUP, GETATTR and OPEN are
 *           answered, every READ is held forever ("held READ INO OFF SIZE"
 *           is printed on standard output as each one arrives), or with
 *           --slow-read answered with zeros after MS milliseconds ("slow
 *           READ INO OFF SIZE"); with --hold-flush, every FLUSH of it is
 *           held ("held FLUSH") until standard input says "release"
 *   NAME    (--slow) a symbolic link to TARGET, whose LOOKUP is answered
 *           after MS milliseconds, or at the next "release" if that comes
 *           first ("slow NAME" is printed as it arrives)
 *   NAME    (--hang) a LOOKUP that is never answered ("held LOOKUP NAME")
 *   NAME    (--exe) a copy of the file PATH (mode 0755), read from PATH, so
 *           that a program can run from here; attributes are never cached,
 *           and once standard input says "hold-getattr", every GETATTR of
 *           it is held ("held GETATTR NAME")
 * Anything else does not exist.  "mounted" is printed once the kernel has
 * sent INIT.  --allow-other mounts with allow_other (/etc/fuse.conf must
 * say user_allow_other).  It runs in the foreground until killed; whoever
 * kills it aborts the connection, which fails every held request;
 * "release" on standard input answers every held FLUSH and GETATTR, and
 * every slow LOOKUP waiting then.
 */
#define FUSE_USE_VERSION 312
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILE_INO 2
#define FILE_SIZE (1 << 20)
#define MAX_NAMES 8

static struct {
	char *name, *target;
	int ms;
} slow[MAX_NAMES];
static int nslow;
static char *hang[MAX_NAMES];
static int nhang;
static struct {
	char *name;
	int fd;
	off_t size;
} exe[MAX_NAMES];
static int nexe;
static int slow_read_ms = -1;	/* -1: READs of file are held */
static bool hold_flush, hold_getattr;

/* Requests held until "release": FLUSH, and GETATTR once told to. */
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;
static struct held {
	fuse_req_t req;
	fuse_ino_t ino;		/* GETATTR's; 0 for a FLUSH */
} held[256];
static int nheld;

/* Inode numbers: root 1, file 2, then the --slow links, then --exe files. */
#define EXE_INO(i) (FILE_INO + 1 + MAX_NAMES + (i))
#define IS_EXE(ino) ((ino) >= EXE_INO(0) && (ino) < (fuse_ino_t)EXE_INO(nexe))

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
	} else if (ino == FILE_INO) {
		st->st_mode = S_IFREG | 0755;
		st->st_nlink = 1;
		st->st_size = FILE_SIZE;
	} else if (IS_EXE(ino)) {
		st->st_mode = S_IFREG | 0755;
		st->st_nlink = 1;
		st->st_size = exe[ino - EXE_INO(0)].size;
	} else {
		st->st_mode = S_IFLNK | 0777;
		st->st_nlink = 1;
		st->st_size = (off_t)strlen(slow[ino - FILE_INO - 1].target);
	}
}

static void reply_entry(fuse_req_t req, fuse_ino_t ino)
{
	struct fuse_entry_param e = { .ino = ino, .attr_timeout = 3600,
				      .entry_timeout = 3600 };

	fill_attr(ino, &e.attr);
	fuse_reply_entry(req, &e);
}

struct later {
	fuse_req_t req;
	fuse_ino_t ino;
	int ms;
};

/* Slow LOOKUPs end early at "release" (released, under held_lock). */
static pthread_cond_t release_cond = PTHREAD_COND_INITIALIZER;
static unsigned int releases;

static void *answer_later(void *p)
{
	struct later *l = p;
	struct timespec end;
	unsigned int seen;

	clock_gettime(CLOCK_REALTIME, &end);
	end.tv_sec += l->ms / 1000;
	end.tv_nsec += (long)(l->ms % 1000) * 1000000;
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&held_lock);
	seen = releases;
	while (releases == seen &&
	       pthread_cond_timedwait(&release_cond, &held_lock, &end) == 0)
		;
	pthread_mutex_unlock(&held_lock);
	reply_entry(l->req, l->ino);
	free(l);
	return NULL;
}

static void stall_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	(void)conn;
	say("mounted\n");
}

static void stall_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	int i;

	if (parent != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (!strcmp(name, "file")) {
		reply_entry(req, FILE_INO);
		return;
	}
	for (i = 0; i < nexe; i++) {
		if (!strcmp(name, exe[i].name)) {
			struct fuse_entry_param e = { .ino = EXE_INO(i) };

			fill_attr(e.ino, &e.attr);
			fuse_reply_entry(req, &e);
			return;
		}
	}
	for (i = 0; i < nhang; i++) {
		if (!strcmp(name, hang[i])) {
			say("held LOOKUP %s\n", name);
			return;		/* never answered */
		}
	}
	for (i = 0; i < nslow; i++) {
		if (!strcmp(name, slow[i].name)) {
			struct later *l = malloc(sizeof(*l));
			pthread_t t;

			say("slow %s\n", name);
			*l = (struct later){ req, FILE_INO + 1 + i, slow[i].ms };
			if (pthread_create(&t, NULL, answer_later, l)) {
				free(l);
				fuse_reply_err(req, EAGAIN);
				return;
			}
			pthread_detach(t);
			return;
		}
	}
	fuse_reply_err(req, ENOENT);
}

static void stall_getattr(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (IS_EXE(ino)) {
		pthread_mutex_lock(&held_lock);
		if (hold_getattr && nheld < (int)(sizeof(held) / sizeof(held[0]))) {
			held[nheld++] = (struct held){ req, ino };
			pthread_mutex_unlock(&held_lock);
			say("held GETATTR %s\n", exe[ino - EXE_INO(0)].name);
			return;
		}
		pthread_mutex_unlock(&held_lock);
		fill_attr(ino, &st);
		fuse_reply_attr(req, &st, 0);
		return;
	}
	fill_attr(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void stall_readlink(fuse_req_t req, fuse_ino_t ino)
{
	if (ino <= FILE_INO || ino > (fuse_ino_t)(FILE_INO + nslow) ||
	    IS_EXE(ino)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	fuse_reply_readlink(req, slow[ino - FILE_INO - 1].target);
}

static void stall_open(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	if (ino != FILE_INO && !IS_EXE(ino)) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	fuse_reply_open(req, fi);
}

struct later_read {
	fuse_req_t req;
	size_t size;
};

static void *read_later(void *p)
{
	struct later_read *l = p;
	char *zeros = calloc(1, l->size ? l->size : 1);

	usleep(slow_read_ms * 1000);
	fuse_reply_buf(l->req, zeros, l->size);
	free(zeros);
	free(l);
	return NULL;
}

static void stall_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	(void)fi;
	if (IS_EXE(ino)) {
		char *buf = malloc(size ? size : 1);
		ssize_t n = buf ? pread(exe[ino - EXE_INO(0)].fd, buf, size,
					off) : -1;

		if (n < 0)
			fuse_reply_err(req, EIO);
		else
			fuse_reply_buf(req, buf, n);
		free(buf);
		return;
	}
	if (slow_read_ms >= 0) {
		struct later_read *l = malloc(sizeof(*l));
		pthread_t t;

		say("slow READ %lu %lld %zu\n", (unsigned long)ino,
		    (long long)off, size);
		if (!l) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		*l = (struct later_read){ req, size };
		if (pthread_create(&t, NULL, read_later, l)) {
			free(l);
			fuse_reply_err(req, EAGAIN);
			return;
		}
		pthread_detach(t);
		return;
	}
	say("held READ %lu %lld %zu\n", (unsigned long)ino, (long long)off,
	    size);
	/* never answered */
}

static void stall_flush(fuse_req_t req, fuse_ino_t ino,
			struct fuse_file_info *fi)
{
	(void)fi;
	pthread_mutex_lock(&held_lock);
	if (hold_flush && ino == FILE_INO &&
	    nheld < (int)(sizeof(held) / sizeof(held[0]))) {
		held[nheld++] = (struct held){ req, 0 };
		pthread_mutex_unlock(&held_lock);
		say("held FLUSH\n");
		return;
	}
	pthread_mutex_unlock(&held_lock);
	fuse_reply_err(req, 0);
}

/* Standard input: "hold-getattr" and "release", one per line. */
static void *control_main(void *arg)
{
	char line[64];
	struct stat st;
	int i;

	(void)arg;
	while (fgets(line, sizeof(line), stdin)) {
		pthread_mutex_lock(&held_lock);
		if (!strcmp(line, "hold-getattr\n")) {
			hold_getattr = true;
		} else if (!strcmp(line, "release\n")) {
			hold_flush = hold_getattr = false;
			for (i = 0; i < nheld; i++) {
				if (!held[i].ino) {
					fuse_reply_err(held[i].req, 0);
					continue;
				}
				fill_attr(held[i].ino, &st);
				fuse_reply_attr(held[i].req, &st, 0);
			}
			say("released %d\n", nheld);
			nheld = 0;
			releases++;
			pthread_cond_broadcast(&release_cond);
		}
		pthread_mutex_unlock(&held_lock);
	}
	return NULL;
}

static void stall_opendir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	if (ino != FUSE_ROOT_ID) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	fuse_reply_open(req, fi);
}

static void stall_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
			  off_t off, struct fuse_file_info *fi)
{
	(void)ino;
	(void)size;
	(void)off;
	(void)fi;
	fuse_reply_buf(req, NULL, 0);
}

static const struct fuse_lowlevel_ops ops = {
	.init = stall_init,
	.lookup = stall_lookup,
	.getattr = stall_getattr,
	.readlink = stall_readlink,
	.open = stall_open,
	.read = stall_read,
	.flush = stall_flush,
	.opendir = stall_opendir,
	.readdir = stall_readdir,
};

static int usage(void)
{
	fprintf(stderr, "usage: stallfs [--slow NAME:TARGET:MS]... "
		"[--hang NAME]... [--exe NAME:PATH]... [--slow-read MS] "
		"[--hold-flush] [--allow-other] MOUNTPOINT\n");
	return 2;
}

int main(int argc, char *argv[])
{
	char *fuse_argv[] = { argv[0], "-o", "fsname=stallfs,subtype=stallfs",
			      NULL, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, fuse_argv);
	struct fuse_session *se;
	const char *mountpoint = NULL;
	pthread_t control;
	int i, ret;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--slow") && i + 1 < argc &&
		    nslow < MAX_NAMES) {
			char *s = argv[++i], *t = strchr(s, ':'), *m;

			m = t ? strrchr(t + 1, ':') : NULL;
			if (!t || !m)
				return usage();
			*t++ = '\0';
			*m++ = '\0';
			slow[nslow].name = s;
			slow[nslow].target = t;
			slow[nslow++].ms = atoi(m);
		} else if (!strcmp(argv[i], "--hang") && i + 1 < argc &&
			   nhang < MAX_NAMES) {
			hang[nhang++] = argv[++i];
		} else if (!strcmp(argv[i], "--exe") && i + 1 < argc &&
			   nexe < MAX_NAMES) {
			char *s = argv[++i], *t = strchr(s, ':');
			struct stat st;

			if (!t)
				return usage();
			*t++ = '\0';
			exe[nexe].name = s;
			exe[nexe].fd = open(t, O_RDONLY | O_CLOEXEC);
			if (exe[nexe].fd < 0 || fstat(exe[nexe].fd, &st)) {
				perror(t);
				return 1;
			}
			exe[nexe++].size = st.st_size;
		} else if (!strcmp(argv[i], "--slow-read") && i + 1 < argc) {
			slow_read_ms = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--hold-flush")) {
			hold_flush = true;
		} else if (!strcmp(argv[i], "--allow-other")) {
			fuse_argv[2] = "fsname=stallfs,subtype=stallfs,allow_other";
		} else if (!mountpoint && argv[i][0] != '-') {
			mountpoint = argv[i];
		} else {
			return usage();
		}
	}
	if (!mountpoint)
		return usage();
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se)
		return 1;
	if (fuse_set_signal_handlers(se) || fuse_session_mount(se, mountpoint))
		return 1;
	if (pthread_create(&control, NULL, control_main, NULL))
		return 1;
	pthread_detach(control);
	ret = fuse_session_loop(se);
	fuse_session_unmount(se);
	fuse_remove_signal_handlers(se);
	fuse_session_destroy(se);
	return ret ? 1 : 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * procfs.c - a process seen through /proc/TID: user space only, the FUSE
 * program's and the varsym command's (`explain --pid`) one way of reading
 * its word size, AT_SECURE, ids and built-in names.  The module reads
 * the same facts from the task itself.
 *
 * Every file is opened relative to one descriptor of /proc/TID, so a
 * thread that dies and whose id is reused half-way cannot mix two
 * processes' answers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "varsym_proc.h"

/* Reads a small /proc file whole; -errno if it cannot be read. */
ssize_t varsym_proc_read(int dirfd, const char *name, char *buf, size_t size)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

/*
 * The word size of the caller's program, from where its stack started
 * (stat's 28th field): exec puts a 32-bit program's (ia32, x32, any compat
 * program) below 4 GiB and a 64-bit one's above.  The process may move it
 * (PR_SET_MM_MAP needs no capability), so it is the process's own claim:
 * good for reading its own auxiliary vector, which it could change too,
 * never as proof of the ABI it calls in (vsfuse_syscall_abi()).  The field
 * reads 1 when we may not see it, 0 for a thread without memory: 0 then.
 */
unsigned int varsym_proc_word_size(int dirfd)
{
	char buf[1024], *p;
	unsigned long long start_stack;
	int field;

	if (varsym_proc_read(dirfd, "stat", buf, sizeof(buf)) <= 0)
		return 0;
	p = strrchr(buf, ')');		/* the command name may hold anything */
	if (!p)
		return 0;
	for (field = 2; field < 28 && p; field++)
		p = strchr(p + 1, ' ');
	if (!p || sscanf(p, " %llu", &start_stack) != 1 || start_stack <= 1)
		return 0;
	return varsym_word_size(start_stack);
}

/* AT_SECURE from /proc/TID/auxv: 1, 0, or -1 when it cannot be told. */
int varsym_proc_secure(int dirfd, unsigned int word)
{
	char auxv[1024];
	ssize_t n = varsym_proc_read(dirfd, "auxv", auxv, sizeof(auxv));
	int secure;

	if (n < 0)
		return -1;
	secure = varsym_auxv_secure(auxv, n, word);
	return secure < 0 ? -1 : secure;
}

/* "Uid:" or "Gid:" of /proc/TID/status: the real and effective ids. */
static bool status_ids(const char *status, const char *key, unsigned int *real,
		       unsigned int *effective)
{
	const char *p = strstr(status, key);

	return p && sscanf(p + strlen(key), " %u %u", real, effective) == 2;
}

int varsym_proc_ids(int dirfd, struct varsym_proc_ids *ids)
{
	char status[2048];

	if (dirfd < 0 || varsym_proc_read(dirfd, "status", status, sizeof(status)) <= 0)
		return -1;
	if (!status_ids(status, "\nUid:", &ids->ruid, &ids->euid) ||
	    !status_ids(status, "\nGid:", &ids->rgid, &ids->egid))
		return -1;
	return 0;
}

/* uname -m for a PER_LINUX32 process: the kernel's COMPAT_UTS_MACHINE. */
static const char *compat_machine(const char *machine)
{
	if (!strcmp(machine, "x86_64"))
		return "i686";
	if (!strcmp(machine, "aarch64"))
		return "armv8l";
	return machine;
}

/* Whether the thread is in the daemon's UTS namespace: 1, 0, or -1. */
static int same_uts(int dirfd)
{
	struct stat mine, its;

	if (stat("/proc/thread-self/ns/uts", &mine) ||
	    fstatat(dirfd, "ns/uts", &its, 0))
		return -1;
	return mine.st_ino == its.st_ino && mine.st_dev == its.st_dev;
}

/*
 * The host name of another UTS namespace: this thread joins it for one
 * uname(2) and comes back (a root daemon; others may not join).
 */
static bool uts_hostname(int dirfd, char *buf, size_t size)
{
	int own = open("/proc/thread-self/ns/uts", O_RDONLY | O_CLOEXEC);
	int its = openat(dirfd, "ns/uts", O_RDONLY | O_CLOEXEC);
	struct utsname u;
	bool ok = false;

	if (own >= 0 && its >= 0 && !setns(its, CLONE_NEWUTS)) {
		ok = !uname(&u);
		if (setns(own, CLONE_NEWUTS)) {
			/* every later answer would be that namespace's */
			fprintf(stderr, "%s: cannot return to its own UTS namespace: %m\n",
				program_invocation_short_name);
			abort();
		}
		if (ok)
			snprintf(buf, size, "%s", u.nodename);
	}
	if (own >= 0)
		close(own);
	if (its >= 0)
		close(its);
	return ok;
}

void varsym_proc_builtins(int dirfd, const struct varsym_proc_ids *ids,
			  struct varsym_proc_builtins *b)
{
	struct utsname u;
	char personality[32];
	unsigned long per = 0;

	memset(b, 0, sizeof(*b));
	b->core.uid = ids->euid;
	b->core.gid = ids->egid;
	b->core.ruid = ids->ruid;
	b->core.rgid = ids->rgid;
	if (uname(&u))
		return;
	snprintf(b->osrelease, sizeof(b->osrelease), "%s", u.release);
	b->core.osrelease = b->osrelease;
	/* the personality is readable where ptrace could attach: else none */
	if (varsym_proc_read(dirfd, "personality", personality,
			     sizeof(personality)) > 0)
		per = strtoul(personality, NULL, 16);
	snprintf(b->machine, sizeof(b->machine), "%s",
		 (per & 0xff) == 0x0008 ? compat_machine(u.machine) :
		 u.machine);
	b->core.machine = b->machine;
	switch (same_uts(dirfd)) {
	case 1:
		snprintf(b->hostname, sizeof(b->hostname), "%s", u.nodename);
		b->core.hostname = b->hostname;
		break;
	case 0:
		if (uts_hostname(dirfd, b->hostname, sizeof(b->hostname)))
			b->core.hostname = b->hostname;
		break;
	}
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * cache.c - each calling thread's answers, kept until it execs or exits.
 *
 * Reading /proc/PID/environ costs about as much as a FUSE round trip
 * (docs/PERFORMANCE.md).  docs/SPEC.md section 4 lets us capture a process's answer at its first
 * follow after an execve and keep it until its next execve or exit.  A
 * hit must prove that the thread still runs the program its answer was
 * made for, and is not inside an execve; one proof per mode:
 *
 *  - With the exec hooks (a root daemon, exec_hooks.h), the request's
 *    snapshot: the BPF program took it in the caller's own context, with
 *    the thread's token (a number never reused, new after each of its
 *    successful execs) and where in an execve the walk is.  Answers are
 *    kept by token: a hit costs no /proc read at all.
 *
 *  - Without them, each record holds its thread's /proc/TID (bound to that
 *    thread: a reused tid cannot read through it) and its auxiliary
 *    vector as saved at exec (/proc/TID/auxv, mm->saved_auxv), read when
 *    the record is made, before the answer is computed; every hit reads
 *    it again and must find the same bytes, and reads /proc/TID/syscall
 *    to see that the thread is not inside an execve in any ABI of the
 *    machine.  A program started with AT_SECURE always differs from one
 *    started without (AT_SECURE, and AT_EUID or AT_EGID for set-id),
 *    whatever the process did to its own vector (PR_SET_MM_MAP), since an
 *    answer made with AT_SECURE set is the secure one anyway; with ASLR,
 *    any exec moves AT_RANDOM, AT_EXECFN and the vDSO.  A held auxv
 *    descriptor would not do: it stays bound to the old mm.  A thread
 *    that exited fails every read through its /proc/TID: its record goes.
 *
 * A change of a scope forgets every answer, and any being computed (the
 * generation a get returns and a put checks).  At most max_threads
 * records: past that, every one is forgotten.
 *
 * Locking: c->lock protects everything here.  Under it, the only reads
 * are of the requesting thread's own record: its syscall and auxv files,
 * through the descriptors the record holds.  Both take its process's
 * exec_update_lock, which only an exec of that process holds for writing,
 * after de_thread(); the thread is waiting for this answer, so no such
 * exec can be past de_thread() (it would wait for the thread first).  A
 * record of a thread that is gone fails at once (ESRCH).  The record of a
 * new thread is made with the lock dropped (new_proc_thread()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cache.h"

#define BUCKETS 1024
#define ANSWERS 8		/* links remembered per thread */
#define AUXV_MAX 1024		/* more than any kernel's saved_auxv */

struct answer {
	uint64_t link;		/* 0: unused */
	ssize_t len;		/* or -errno */
	char *target;
	void *key;		/* what else it was made with, or NULL */
	size_t key_len;
};

struct thread {
	struct thread *next;	/* in its bucket */
	uint64_t id;		/* its token (hooks), or its tid */
	/* without the hooks: the proof (above) */
	int dir_fd, syscall_fd;	/* /proc/TID, bound to the thread */
	unsigned int word;	/* its program's word size; 0: no answer yet */
	size_t auxv_len;
	char *auxv;
	unsigned int replace;	/* the next answer slot to reuse */
	struct answer answers[ANSWERS];
};

struct vsfuse_cache {
	pthread_mutex_t lock;
	bool tokens;		/* the exec hooks' proof, or /proc's */
	int procfd;
	uint64_t gen;		/* forgets so far */
	size_t threads, max_threads;
	struct thread *buckets[BUCKETS];
};

static struct thread **bucket(struct vsfuse_cache *c, uint64_t id)
{
	return &c->buckets[(id ^ id >> 32) % BUCKETS];
}

static void free_thread(struct thread *t)
{
	int i;

	for (i = 0; i < ANSWERS; i++) {
		free(t->answers[i].target);
		free(t->answers[i].key);
	}
	if (t->syscall_fd >= 0)
		close(t->syscall_fd);
	if (t->dir_fd >= 0)
		close(t->dir_fd);
	free(t->auxv);
	free(t);
}

/* Drops thread id; with all set, every thread.  Under c->lock. */
static void forget(struct vsfuse_cache *c, uint64_t id, bool all)
{
	size_t b, first = 0, end = BUCKETS;

	if (!all) {
		first = bucket(c, id) - c->buckets;
		end = first + 1;
	}
	for (b = first; b < end; b++) {
		struct thread **p = &c->buckets[b], *t;

		while ((t = *p)) {
			if (all || t->id == id) {
				*p = t->next;
				free_thread(t);
				c->threads--;
			} else {
				p = &t->next;
			}
		}
	}
	c->gen++;
}

int vsfuse_cache_new(struct vsfuse_cache **out, bool tokens)
{
	struct vsfuse_cache *c = calloc(1, sizeof(*c));
	struct rlimit rl;

	if (!c)
		return -ENOMEM;
	c->tokens = tokens;
	c->procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->procfd < 0) {
		free(c);
		return -errno;
	}
	c->max_threads = 4096;
	if (!tokens) {
		/* each record holds two descriptors: well under the limit */
		getrlimit(RLIMIT_NOFILE, &rl);
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
			getrlimit(RLIMIT_NOFILE, &rl);
		}
		if (rl.rlim_cur <= 12288)
			c->max_threads = rl.rlim_cur / 3;
	}
	pthread_mutex_init(&c->lock, NULL);
	*out = c;
	return 0;
}

void vsfuse_cache_free(struct vsfuse_cache *c)
{
	if (!c)
		return;
	forget(c, 0, true);
	close(c->procfd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static struct thread *find(struct vsfuse_cache *c, uint64_t id)
{
	struct thread *t;

	for (t = *bucket(c, id); t; t = t->next)
		if (t->id == id)
			return t;
	return NULL;
}

/* Whether thread t is in a system call other than execve, for sure. */
static bool outside_execve(const struct thread *t, bool *gone)
{
	unsigned int ptr_size;
	char line[256];
	uint64_t envp;
	ssize_t n = pread(t->syscall_fd, line, sizeof(line) - 1, 0);

	*gone = n <= 0;
	if (n <= 0)
		return false;
	line[n] = '\0';
	return vsfuse_syscall_parse(line, vsfuse_syscall_abi(t->word), &envp,
				    &ptr_size) == VSFUSE_IN_OTHER;
}

/*
 * The auxiliary vector of the program thread dir_fd runs now, as the
 * kernel saved it (never the caller's memory), into buf: its length, or 0
 * when it cannot be had.  Opened each time: a descriptor is bound to the
 * mm of its open.
 */
static size_t read_auxv(int dir_fd, char *buf)
{
	int fd = openat(dir_fd, "auxv", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, AUXV_MAX);
	close(fd);
	return n > 0 && n < AUXV_MAX ? (size_t)n : 0;
}

/* Whether t's thread still runs the program its record was made in. */
static bool same_program(const struct thread *t)
{
	char now[AUXV_MAX];
	size_t n = read_auxv(t->dir_fd, now);

	return n && n == t->auxv_len && !memcmp(now, t->auxv, n);
}

/* A record and its proof, before the first answer is computed (/proc). */
static struct thread *new_proc_thread(struct vsfuse_cache *c, pid_t tid)
{
	struct thread *t = calloc(1, sizeof(*t));
	char name[16], auxv[AUXV_MAX];

	if (!t)
		return NULL;
	t->id = tid;
	t->syscall_fd = -1;
	snprintf(name, sizeof(name), "%d", (int)tid);
	t->dir_fd = openat(c->procfd, name,
			   O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (t->dir_fd < 0)
		goto fail;
	t->syscall_fd = openat(t->dir_fd, "syscall", O_RDONLY | O_CLOEXEC);
	if (t->syscall_fd < 0)
		goto fail;
	t->auxv_len = read_auxv(t->dir_fd, auxv);
	if (!t->auxv_len || !(t->auxv = malloc(t->auxv_len)))
		goto fail;
	memcpy(t->auxv, auxv, t->auxv_len);
	return t;
fail:
	free_thread(t);
	return NULL;
}

/* Whether record t may answer its thread now (/proc's proof). */
enum verdict { USE, BYPASS, FORGET };

static enum verdict check_proc_thread(const struct thread *t)
{
	bool gone;

	if (t->word && !outside_execve(t, &gone))
		return gone ? FORGET : BYPASS;	/* gone: exited, or not ours */
	return same_program(t) ? USE : FORGET;
}

/* Adds t to the table, unless a scope changed since gen.  Under c->lock. */
static bool add(struct vsfuse_cache *c, struct thread *t, uint64_t gen)
{
	if (c->gen != gen || find(c, t->id))
		return false;
	if (c->threads >= c->max_threads)
		forget(c, 0, true);
	t->next = *bucket(c, t->id);
	*bucket(c, t->id) = t;
	c->threads++;
	return true;
}

enum vsfuse_cache_result vsfuse_cache_get(struct vsfuse_cache *c,
					  const struct vsfuse_request *r,
					  uint64_t link, const void *key,
					  size_t key_len, char *out,
					  size_t size, ssize_t *len,
					  uint64_t *gen)
{
	enum vsfuse_cache_result ret = VSFUSE_CACHE_MISS;
	struct thread *t, *fresh = NULL;
	uint64_t id;
	int i;

	if (c->tokens) {
		/* inside an execve, or nothing to prove it by: nothing kept */
		if (!r->has_snap || !r->snap.token ||
		    r->snap.phase != VARSYM_EXEC_NONE ||
		    (r->snap.flags & VSFUSE_SNAP_KTHREAD))
			return VSFUSE_CACHE_BYPASS;
		id = r->snap.token;
	} else {
		if (r->tid <= 0)
			return VSFUSE_CACHE_BYPASS;
		id = r->tid;
	}
	pthread_mutex_lock(&c->lock);
	*gen = c->gen;
	t = find(c, id);
	if (t && !c->tokens) {
		switch (check_proc_thread(t)) {
		case USE:
			break;
		case BYPASS:
			ret = VSFUSE_CACHE_BYPASS;
			goto out;
		case FORGET:
			forget(c, id, false);
			*gen = c->gen;
			t = NULL;
			break;
		}
	}
	if (!t) {
		if (c->tokens)
			goto out;
		/*
		 * The record, and its proof, before the answer is computed:
		 * an exec after this point fails the proof at the next hit.
		 */
		pthread_mutex_unlock(&c->lock);
		fresh = new_proc_thread(c, r->tid);
		pthread_mutex_lock(&c->lock);
		if (fresh && add(c, fresh, *gen))
			fresh = NULL;
		goto out;
	}
	for (i = 0; i < ANSWERS; i++) {
		struct answer *a = &t->answers[i];

		if (a->link != link || a->key_len != key_len ||
		    (key_len && memcmp(a->key, key, key_len)))
			continue;
		ret = VSFUSE_CACHE_HIT;
		*len = a->len;
		if (a->len >= 0) {
			if ((size_t)a->len >= size)
				*len = -ENAMETOOLONG;
			else
				memcpy(out, a->target, a->len + 1);
		}
		break;
	}
out:
	pthread_mutex_unlock(&c->lock);
	if (fresh)
		free_thread(fresh);
	return ret;
}

void vsfuse_cache_forget_all(struct vsfuse_cache *c)
{
	pthread_mutex_lock(&c->lock);
	forget(c, 0, true);
	pthread_mutex_unlock(&c->lock);
}

void vsfuse_cache_put(struct vsfuse_cache *c, const struct vsfuse_request *r,
		      unsigned int word, uint64_t link, const void *key,
		      size_t key_len, ssize_t len, const char *target,
		      uint64_t gen)
{
	struct thread *t, *fresh = NULL;
	uint64_t id = c->tokens ? r->snap.token : (uint64_t)r->tid;
	struct answer *a;
	char *copy = NULL;
	void *key_copy = NULL;

	if (len >= 0 && !(copy = strdup(target)))
		return;
	if (key_len && !(key_copy = malloc(key_len))) {
		free(copy);
		return;
	}
	if (key_len)
		memcpy(key_copy, key, key_len);
	if (c->tokens) {
		fresh = calloc(1, sizeof(*fresh));
		if (!fresh)
			goto free;
		fresh->id = id;
		fresh->dir_fd = fresh->syscall_fd = -1;
	}
	pthread_mutex_lock(&c->lock);
	/*
	 * Only with the proof the get saw before the answer was computed: a
	 * scope changed since, or (without the hooks) the thread's record
	 * was forgotten, and the answer may be from before.  Skip it.
	 */
	t = find(c, id);
	if (!t && fresh && add(c, fresh, gen)) {
		t = fresh;
		fresh = NULL;
	}
	if (c->gen != gen || !t)
		goto out;
	t->word = word;
	for (a = t->answers; a < t->answers + ANSWERS; a++)
		if (a->link == link)
			break;
	if (a == t->answers + ANSWERS)
		a = &t->answers[t->replace++ % ANSWERS];
	free(a->target);
	free(a->key);
	*a = (struct answer){ .link = link, .len = len, .target = copy,
			      .key = key_copy, .key_len = key_len };
	copy = key_copy = NULL;
out:
	pthread_mutex_unlock(&c->lock);
	if (fresh)
		free_thread(fresh);
free:
	free(copy);
	free(key_copy);
}

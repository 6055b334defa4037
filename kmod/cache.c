// SPDX-License-Identifier: GPL-2.0-only
/*
 * cache.c - each process's answer, captured once per execve.
 *
 * docs/SPEC.md section 4 lets an implementation capture a process's answer at its
 * first follow after an execve and keep it until its next execve or exit.
 * Copying the environment costs time in proportion to its size on every
 * follow, which a process with 64 KiB of environment would pay on every
 * walk through /bin (docs/PERFORMANCE.md); the cache pays it once.
 *
 * An answer is keyed by everything it depends on, so that nothing else can
 * match it:
 *  - the process: its tgid and its leader's start time (a pid reused by a
 *    new process comes with a later start time);
 *  - the program it runs: self_exec_id, which every execve changes;
 *  - its environment area: a process that moves it (prctl PR_SET_MM) gets a
 *    new answer;
 *  - the link: a 64-bit id, never reused, given to each mount (seed) and
 *    each template link;
 *  - the mount's scopes: their generation, which every change moves, and
 *    the real uid whose user scope was read;
 *  - for a search (search.c), the credentials, the mount namespace and the
 *    root it was made with: a process that changes one without an execve
 *    (setuid, setns, chroot) searches again.
 * Answers read during execve (execve's envp decides) or by a kernel thread
 * are never stored or used.
 *
 * The table is direct-mapped: a slot holds the answer last stored there and
 * a colliding answer replaces it, so memory stays bounded without any
 * bookkeeping.  Readers are lockless (RCU) and take a reference on the
 * answer they hand to the VFS, which drops it through the delayed call: a
 * hit neither allocates nor copies.  The last reference frees the answer
 * after a grace period.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/fs_struct.h>
#include <linux/jhash.h>
#include <linux/nsproxy.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "varsymfs.h"

#define CACHE_BITS 12

struct answer {
	struct rcu_head rcu;
	refcount_t ref;		/* the table's, and each walk's */
	struct varsymfs_cache_key key;
	const struct cred *cred;	/* key.cred's, held: never reused */
	int err;		/* -errno, or 0 and a target */
	char target[];
};

static struct answer __rcu *answers[1 << CACHE_BITS];
static atomic64_t next_link_id = ATOMIC64_INIT(0);
/*
 * The slots' hash seed, drawn at load: a user who knows a key (pids and
 * start times are public) still cannot aim answers at its slot to evict it.
 */
static u32 slot_seed __read_mostly;

void varsymfs_cache_init(void)
{
	slot_seed = get_random_u32();
}

u64 varsymfs_new_link_id(void)
{
	return atomic64_inc_return(&next_link_id);
}

/**
 * varsymfs_cache_key - the key of current's answer for a link
 * @key: filled in
 * @link: the link's id
 * @scope_gen: its mount's scope generation, read before the scopes
 * @search: a search's answer: keyed by who looks and where too
 *
 * Lockless: a field that changes under us (a concurrent prctl on our own
 * environment, a chroot by a thread sharing our fs_struct) only makes a
 * key that matches nothing.  Only current changes its own credentials and
 * namespaces.
 */
void varsymfs_cache_key(struct varsymfs_cache_key *key, u64 link,
			u64 scope_gen, bool search)
{
	struct nsproxy *ns = current->nsproxy;
	struct fs_struct *fs = current->fs;

	struct mm_struct *mm = current->mm;

	memset(key, 0, sizeof(*key));	/* a field added but not set here: 0 */
	key->link = link;
	key->tgid = current->tgid;
	rcu_read_lock();	/* task_structs are freed after a grace period */
	key->start_time = READ_ONCE(current->group_leader)->start_boottime;
	rcu_read_unlock();
	key->exec_id = READ_ONCE(current->self_exec_id);
	key->env_start = READ_ONCE(mm->env_start);
	key->env_end = READ_ONCE(mm->env_end);
	key->scope_gen = scope_gen;
	key->ruid = __kuid_val(current_uid());
	if (!search)
		return;
	key->cred = (unsigned long)current_cred();
	key->mnt_ns = ns ? (unsigned long)ns->mnt_ns : 0;
	if (fs) {
		key->root_mnt = (unsigned long)READ_ONCE(fs->root.mnt);
		key->root_dentry = (unsigned long)READ_ONCE(fs->root.dentry);
	}
}

static struct answer __rcu **slot_of(const struct varsymfs_cache_key *key)
{
	return &answers[jhash(key, sizeof(*key), slot_seed) &
			((1 << CACHE_BITS) - 1)];
}

static void put_answer(void *arg)
{
	struct answer *a = arg;

	if (refcount_dec_and_test(&a->ref)) {
		if (a->cred)
			put_cred(a->cred);	/* frees after a grace period */
		kfree_rcu(a, rcu);
	}
}

/**
 * varsymfs_cache_get - the cached answer, if any
 * @key: from varsymfs_cache_key()
 * @done: on a target, set to drop the reference it comes with
 *
 * Return: the cached target, an ERR_PTR of the cached errno, or NULL on a
 * miss.  Never sleeps: usable in the RCU walk.
 */
const char *varsymfs_cache_get(const struct varsymfs_cache_key *key,
			       struct delayed_call *done)
{
	const char *target = NULL;
	struct answer *a;

	rcu_read_lock();
	a = rcu_dereference(*slot_of(key));
	if (a && !memcmp(&a->key, key, sizeof(*key))) {
		if (a->err) {
			target = ERR_PTR(a->err);
		} else if (refcount_inc_not_zero(&a->ref)) {
			set_delayed_call(done, put_answer, a);
			target = a->target;
		}
	}
	rcu_read_unlock();
	return target;
}

/**
 * varsymfs_cache_put - remember an answer
 * @key: from varsymfs_cache_key()
 * @target: the target, or NULL when @err says why there is none
 * @err: 0, or the -errno the link gives
 * @gfp: allocation flags; failing to allocate only means no caching
 */
void varsymfs_cache_put(const struct varsymfs_cache_key *key,
			const char *target, int err, gfp_t gfp)
{
	size_t len = target ? strlen(target) : 0;
	struct answer *a, *old;

	/* the credentials the search was made with: hold them */
	if (key->cred && key->cred != (unsigned long)current_cred())
		return;
	a = kmalloc(struct_size(a, target, len + 1), gfp | __GFP_NOWARN);
	if (!a)
		return;
	refcount_set(&a->ref, 1);
	a->key = *key;
	a->cred = key->cred ? get_cred(current_cred()) : NULL;
	a->err = err;
	if (target)
		memcpy(a->target, target, len + 1);
	else
		a->target[0] = '\0';
	old = unrcu_pointer(xchg(slot_of(key), RCU_INITIALIZER(a)));
	if (old)
		put_answer(old);
}

/* At module exit: no mount, so no walker, is left: drop the table's refs. */
void varsymfs_cache_exit(void)
{
	struct answer *a;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(answers); i++) {
		a = unrcu_pointer(xchg(&answers[i], NULL));
		if (a)
			put_answer(a);
	}
	rcu_barrier();		/* the kfree_rcu()s above are done */
}

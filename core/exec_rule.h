/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * exec_rule.h - the exec rule, in one place: which environment a walk
 * follows, whether the answer may be kept, whether a file an execve loads
 * gains privileges, and whether an exec may run once the kernel has
 * computed its credentials (docs/SPEC.md sections 4 and 5).
 *
 * The module (kmod/) and the FUSE daemon (fuse/) only gather the facts
 * each of them can see and call these; the daemon's BPF program, which
 * sees the exec from inside the kernel, includes this file too.  So it
 * holds nothing but plain C: no libc, no kernel header, static inline
 * functions over the structures below.
 */
#ifndef VARSYM_EXEC_RULE_H
#define VARSYM_EXEC_RULE_H

/* What a layer knows of a yes-or-no fact. */
enum varsym_tri {
	VARSYM_NO,
	VARSYM_YES,
	VARSYM_UNKNOWN,
};

/*
 * One file an execve loads (the program, then each interpreter), as the
 * kernel's bprm_check sees it: the privilege test's inputs.
 */
struct varsym_exec_file {
	unsigned int mode;		/* its inode's mode */
	/*
	 * Whether the mount it was opened on honours set-id bits and file
	 * capabilities for the caller (the kernel's mnt_may_suid()): no on a
	 * nosuid mount or one of another mount namespace; unknown where the
	 * layer cannot see the namespace (counts as yes).
	 */
	enum varsym_tri honours_ids;
	/*
	 * Has file capabilities (security.capability): yes also where they
	 * cannot be read; unknown while they are not read yet.
	 */
	enum varsym_tri caps;
	bool secureexec;		/* an LSM said AT_SECURE already */
};

enum varsym_privilege {
	VARSYM_GAINS_NOTHING,
	VARSYM_GAINS_PRIVILEGES,	/* gains them, or may: secure */
	VARSYM_CAPS_UNREAD,		/* nothing, unless file capabilities */
};

/* The mode bits of POSIX, the same on every system. */
#define VARSYM_MODE_SETUID 04000
#define VARSYM_MODE_SETGID 02000
#define VARSYM_MODE_GROUP_EXEC 00010

/**
 * varsym_exec_file_privilege - does executing this file raise privileges?
 * @f: what the layer saw of it
 *
 * Setuid, or setgid with group execute (without it, the bit marks
 * mandatory locking and execve ignores it, as fs/exec.c does), or file
 * capabilities, on a mount that honours them; or an LSM's secureexec.
 *
 * Return: %VARSYM_CAPS_UNREAD when only file capabilities could make it
 * privileged and the layer has not read them: it must before it lets a
 * walk follow the caller.
 */
static inline enum varsym_privilege
varsym_exec_file_privilege(const struct varsym_exec_file *f)
{
	unsigned int setgid = VARSYM_MODE_SETGID | VARSYM_MODE_GROUP_EXEC;

	if (f->secureexec)
		return VARSYM_GAINS_PRIVILEGES;
	if (f->honours_ids == VARSYM_NO)
		return VARSYM_GAINS_NOTHING;
	if ((f->mode & VARSYM_MODE_SETUID) || (f->mode & setgid) == setgid ||
	    f->caps == VARSYM_YES)
		return VARSYM_GAINS_PRIVILEGES;
	return f->caps == VARSYM_NO ? VARSYM_GAINS_NOTHING :
				      VARSYM_CAPS_UNREAD;
}

/**
 * varsym_exec_may_run - the verdict, once the kernel has computed an
 *	exec's credentials
 * @followed_caller: an interpreter walk of this exec was answered from
 *	the caller's environment, with another answer than the secure one
 * @secureexec: the kernel made the exec privileged (AT_SECURE)
 *
 * A file can gain a set-id bit or a capability between the walk and the
 * kernel's verdict (a package upgrade does chmod 4755 or setcap): the
 * caller's interpreter must then never run.  Any other exec runs.
 */
static inline bool varsym_exec_may_run(bool followed_caller, bool secureexec)
{
	return !followed_caller || !secureexec;
}

/*
 * The files one execve checks (security_bprm_check): its program and each
 * interpreter exec_binprm() follows, which refuses a sixth with ELOOP.  An
 * exec that checks more than this is doubtful: privileged.
 */
#define VARSYM_EXEC_FILES 6

/*
 * How deep user namespaces nest, the initial one included: the kernel
 * refuses a 33rd level below it.  A walk up a caller's namespaces to find
 * its owner takes at most this many steps.
 */
#define VARSYM_USERNS_LEVELS 33

/* Where in an execve, if anywhere, a walk is made. */
enum varsym_exec_phase {
	VARSYM_EXEC_NONE,	/* not inside an execve */
	VARSYM_EXEC_PROGRAM,	/* the program's own path: before any file */
	VARSYM_EXEC_INTERP,	/* an interpreter; no file gains privileges */
	VARSYM_EXEC_PRIVILEGED,	/* an interpreter of an exec that gains them */
	VARSYM_EXEC_DOUBT,	/* inside an execve, or may be: cannot tell */
};

/* What a layer knows of the thread a walk is made for. */
struct varsym_walk_facts {
	bool kthread;			/* no process: no environment */
	enum varsym_tri secure;		/* its program started with AT_SECURE */
	enum varsym_exec_phase exec;
	/*
	 * execve's envp is found: the call's ABI is known (and, as far as
	 * the layer knows, its memory may be read).
	 */
	bool envp_known;
	/*
	 * The mount serves other users than its owner, so it may be on a
	 * privileged program's path: doubt resolves as secure there, and as
	 * the caller's own environment on a mount only its owner walks.
	 */
	bool serves_others;
};

/* Where the walk's variables come from. */
enum varsym_env_from {
	VARSYM_ENV_NONE,	/* every variable unset: a kernel thread */
	VARSYM_ENV_AREA,	/* the exec-time environment area */
	VARSYM_ENV_ENVP,	/* execve's envp (where unreadable: the area) */
	VARSYM_ENV_SECURE,	/* as for a secure-exec process */
};

struct varsym_walk {
	enum varsym_env_from from;
	/* the answer holds until the process's next execve: may be kept */
	bool keep;
	/*
	 * An interpreter's walk: an answer from the caller's environment
	 * that differs from the secure one stands only once the layer has
	 * read the files' capabilities and recorded, for the verdict, that
	 * this exec followed its caller; else the secure answer.
	 */
	bool check_interp;
};

/**
 * varsym_walk_plan - which environment a walk follows
 * @f: the facts the layer gathered
 *
 * The whole of docs/SPEC.md sections 4 and 5 for one walk: a kernel
 * thread has no environment; a secure-exec process, an interpreter of an
 * exec that gains privileges, and doubt on a mount that serves others
 * resolve as secure; inside an execve, its envp decides the program's
 * own path and an unprivileged exec's interpreters; elsewhere the
 * exec-time environment.  Only answers outside an execve and without
 * doubt are kept.
 */
static inline struct varsym_walk
varsym_walk_plan(const struct varsym_walk_facts *f)
{
	struct varsym_walk w = { VARSYM_ENV_SECURE, false, false };
	enum varsym_env_from caller =
		f->envp_known ? VARSYM_ENV_ENVP : VARSYM_ENV_AREA;

	if (f->kthread) {
		w.from = VARSYM_ENV_NONE;
		return w;
	}
	if (f->secure != VARSYM_NO) {
		w.keep = f->secure == VARSYM_YES &&
			 f->exec == VARSYM_EXEC_NONE;
		return w;
	}
	switch (f->exec) {
	case VARSYM_EXEC_NONE:
		w.from = VARSYM_ENV_AREA;
		w.keep = true;
		break;
	case VARSYM_EXEC_PROGRAM:
		w.from = caller;
		break;
	case VARSYM_EXEC_INTERP:
		w.from = caller;
		w.check_interp = true;
		break;
	case VARSYM_EXEC_PRIVILEGED:
		break;
	case VARSYM_EXEC_DOUBT:
		if (!f->serves_others)
			w.from = caller;
		break;
	}
	return w;
}

#endif /* VARSYM_EXEC_RULE_H */

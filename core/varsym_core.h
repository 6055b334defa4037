/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * varsym_core.h - the shared core of varsymfs: its whole interface.
 *
 * Everything that both the kernel module and the FUSE daemon must agree on
 * lives behind this header: variable names, the environment-block scanner,
 * the mount-option parser, seed-mode resolution and templates.  The core
 * never allocates, never sleeps and never touches a process: the callers
 * bring the bytes of the environment and a buffer for the answer.
 *
 * Names: varsym_ is this core's prefix; varsymfs_ the kernel module's
 * (kmod/), vsfuse_ the FUSE daemon's (fuse/).  The varsym command
 * (tools/varsym.c) is a user of the core like the other two.
 */
#ifndef VARSYM_CORE_H
#define VARSYM_CORE_H

#include "varsym_port.h"
#include "execve_nrs.h"
#include "exec_rule.h"

#define VARSYM_NAME_MAX 255	/* longest variable name, in bytes */
#define VARSYM_NEST_MAX 8	/* deepest ${...} nesting in a template */
#define VARSYM_MSG_MAX 256	/* room for an option error message */
/*
 * The most execve(2) accepts for its arguments and environment together,
 * strings and pointers (3/4 of _STK_LIM): nobody reads more of a caller's
 * environment than this, whatever the caller claims; the rest is absent.
 */
#define VARSYM_ENV_MAX (6UL << 20)

/* [A-Za-z_][A-Za-z0-9_]*, 1 to VARSYM_NAME_MAX bytes. */
bool varsym_name_valid(const char *name, size_t len);

/*
 * Environment scanner.  An environment block is a run of NUL-terminated
 * NAME=value entries with an explicit end (as /proc/PID/environ or the
 * [env_start, env_end) area of a process); the last entry may lack its NUL.
 * The block is fed in chunks of any size, so a fixed buffer scans a block of
 * any size.  The first entry for the name wins, as with getenv(3).
 */
enum varsym_scan_state {
	VARSYM_SCAN_NAME,	/* matching the name of the current entry */
	VARSYM_SCAN_SKIP,	/* not our entry: skipping to its NUL */
	VARSYM_SCAN_VALUE,	/* copying our value */
	VARSYM_SCAN_FOUND,	/* done: value complete */
	VARSYM_SCAN_TOOLONG,	/* done: value larger than the buffer */
};

struct varsym_env_scan {
	const char *name;
	size_t name_len;
	char *buf;		/* receives the value, not NUL-terminated */
	size_t size;
	size_t len;		/* value bytes collected */
	size_t pos;		/* name bytes matched in the current entry */
	enum varsym_scan_state state;
};

void varsym_env_scan_init(struct varsym_env_scan *s, const char *name,
			  size_t name_len, char *buf, size_t size);
/* Returns true once the answer is known: feed no more. */
bool varsym_env_scan_feed(struct varsym_env_scan *s, const char *chunk,
			  size_t len);
/*
 * The block ended early (its memory could not be read): an entry cut short
 * does not count.  Feed nothing after this.
 */
void varsym_env_scan_cut(struct varsym_env_scan *s);
/*
 * After the last chunk (or a true from feed): the value's length (0 when
 * set but empty), -ENOENT when unset, -ENAMETOOLONG when it did not fit.
 */
ssize_t varsym_env_scan_result(const struct varsym_env_scan *s);
/* The three steps above for a block held in memory. */
ssize_t varsym_env_lookup(const char *env, size_t env_len, const char *name,
			  size_t name_len, char *buf, size_t size);

/*
 * How a value was chosen, reported to an optional note() hook so that
 * `varsym explain` can tell a person; the file systems pass no hook.
 */
enum varsym_source {
	VARSYM_FROM_ENV,	/* the caller's environment */
	VARSYM_FROM_USER,	/* the caller's user scope on the mount */
	VARSYM_FROM_SYSTEM,	/* the mount's system scope */
	VARSYM_FROM_BUILTIN,	/* a built-in name (@uid, @hostname...) */
	VARSYM_FROM_DEFAULT,	/* found nowhere: the default */
	VARSYM_FROM_NOTHING,	/* found nowhere, and no default */
	VARSYM_FROM_REFUSED,	/* set, but refused (a ".." under a prefix) */
};

/*
 * Built-in names (docs/SPEC.md section 4): facts about the caller that no
 * environment sets.  The real ids are unset for a secure-exec caller: the
 * user who starts a setuid program chooses them.
 */
enum varsym_builtin {
	VARSYM_BUILTIN_UID,		/* @uid: effective */
	VARSYM_BUILTIN_GID,		/* @gid: effective */
	VARSYM_BUILTIN_RUID,		/* @ruid: real */
	VARSYM_BUILTIN_RGID,		/* @rgid: real */
	VARSYM_BUILTIN_HOSTNAME,	/* @hostname: its UTS namespace's */
	VARSYM_BUILTIN_MACHINE,		/* @machine: uname -m as it sees it */
	VARSYM_BUILTIN_OSRELEASE,	/* @osrelease: uname -r */
	VARSYM_BUILTIN_COUNT
};

/* The caller's built-ins; a NULL string is unset. */
struct varsym_builtins {
	unsigned int uid, gid, ruid, rgid;
	const char *hostname, *machine, *osrelease;
};

/* The built-in's number for "@name" of len bytes, or -1. */
int varsym_builtin_id(const char *name, size_t len);

/* What a resolution consulted, for a layer that keeps answers. */
#define VARSYM_USED_USER 0x1U	/* a user scope: keyed by real uid */
#define VARSYM_USED_BUILTIN 0x2U	/* a built-in: never keep it */

/*
 * The process a link is resolved for.  A variable's value comes from the
 * first of these that has it, set and not empty:
 *   getenv(), the caller's environment: copies the value into buf (at
 *     most size bytes, no NUL) and returns its length, 0 for an empty
 *     value, -ENOENT when unset, -ENAMETOOLONG when it does not fit, or
 *     another -errno that ends the resolution;
 *   user_scope, the caller's (real uid's) values on the mount;
 *   system_scope, the mount's values, set by its administrator;
 *   then the template's or the mount's default.
 * A secure-exec caller (AT_SECURE) skips the first two: getenv() is never
 * called for it.  A name "@..." is a built-in, from builtins (NULL: all
 * unset).  The scopes are blocks as varsym_scope_edit() makes them, NULL
 * for none; a layer holds each for the whole resolution.
 */
struct varsym_caller {
	ssize_t (*getenv)(void *ctx, const char *name, size_t name_len,
			  char *buf, size_t size);
	void (*note)(void *ctx, const char *name, size_t name_len,
		     enum varsym_source from, const char *value,
		     size_t value_len);
	void *ctx;
	bool secure;
	const char *user_scope, *system_scope;
	size_t user_scope_len, system_scope_len;
	const struct varsym_builtins *builtins;
	unsigned int *used;	/* VARSYM_USED_* are or-ed in; may be NULL */
};

/*
 * Scopes.  A scope holds at most VARSYM_SCOPE_MAX bytes (an extended
 * attribute's most, so that one getxattr(2) lists it) and
 * VARSYM_SCOPE_ENTRIES_MAX names; a value is at most PATH_MAX - 1 bytes
 * of printable text (no control byte).
 */
#define VARSYM_SCOPE_MAX 65536
#define VARSYM_SCOPE_ENTRIES_MAX 1024
/*
 * On the mount's root: the caller's user scope and the system scope.  A
 * getxattr(2) gives the block; a setxattr(2) applies a change, NUL-
 * separated "NAME=VALUE" (set) and "NAME" (unset) entries, all or none;
 * a removexattr(2) empties the scope (varsymfs(5)).
 */
#define VARSYM_XATTR_USER_SCOPE "system.varsym_user"
#define VARSYM_XATTR_SYSTEM_SCOPE "system.varsym_system"
/*
 * "system.varsym_user.UID": user UID's scope (a decimal uid of the
 * caller's user namespace), read-only, for that user and the mount's
 * administrator (`varsym explain --pid`).
 */
#define VARSYM_XATTR_USER_SCOPE_OF "system.varsym_user."

struct varsym_scope_entry {
	const char *name, *value;
	size_t name_len, value_len;
	bool has_value;		/* "NAME=VALUE", not "NAME" */
};

/* The entry at *pos of a block of len bytes, advancing *pos; or false. */
bool varsym_scope_next(const char *block, size_t len, size_t *pos,
		       struct varsym_scope_entry *e);
/*
 * One entry a scope may hold: a settable name (not a built-in), a value
 * of 1 to PATH_MAX - 1 bytes when it has one, no control byte (below
 * 0x20, or 0x7f) in either.  0, or -EINVAL with the message, the same
 * for a change (varsym_scope_edit()) and for a line of varsym.conf.
 */
int varsym_entry_check(const struct varsym_scope_entry *e, char *msg,
		       size_t size);
/*
 * The scope old with a change applied, written to out (size bytes,
 * VARSYM_SCOPE_MAX is enough): its length, or -EINVAL for a bad change
 * and -E2BIG for a scope past its bounds, with a message naming the entry
 * in msg.  Entries the change does not name keep their place; names it
 * sets come after them, in its order.
 */
ssize_t varsym_scope_edit(const char *old, size_t old_len, const char *edits,
			  size_t edits_len, char *out, size_t size, char *msg,
			  size_t msg_size);

/*
 * varsym.conf, the configuration file of the system scopes (conf.c; user
 * space only; varsym.conf(5)).
 */
#define VARSYM_CONF_PATH "/etc/varsym.conf"

enum varsym_conf_kind {
	VARSYM_CONF_NOTHING,	/* empty, blanks, or a comment (# or ;) */
	VARSYM_CONF_SECTION,	/* [/MOUNT/POINT]: path */
	VARSYM_CONF_ENTRY,	/* NAME = VALUE: entry, blanks around cut */
	VARSYM_CONF_BAD,	/* anything else, with the message */
};

struct varsym_conf_line {
	enum varsym_conf_kind kind;
	bool header;		/* starts with '[' (a section, or a bad one) */
	const char *path;	/* a section's mount point, path_len bytes */
	size_t path_len;
	struct varsym_scope_entry entry;
};

/*
 * One line of n bytes (no newline) at p, into l: its kind, and for a bad
 * line why in msg (varsym_entry_check()'s message for a bad entry).
 */
enum varsym_conf_kind varsym_conf_line(const char *p, size_t n,
				       struct varsym_conf_line *l, char *msg,
				       size_t size);
/* Whether l is a section header of mount point mount ("/a/" is "/a"). */
bool varsym_conf_section_of(const struct varsym_conf_line *l,
			    const char *mount);
/*
 * The NAME=VALUE lines of text (len bytes) in the sections of mount point
 * mount, as one block in out (size bytes; VARSYM_SCOPE_MAX is enough):
 * its length.  A name set again takes its last line's value.  Each line
 * that is not applied (skipped) or that may not mean what it says (a
 * warning: a name set again, a value holding " #" or in quotes) goes to
 * report() with its number, if report is not NULL: a bad line of the
 * mount's sections, a line before any section, a broken section header.
 */
size_t varsym_conf_section(const char *text, size_t len, const char *mount,
			   char *out, size_t size,
			   void (*report)(void *ctx, unsigned int line,
					  bool skipped, const char *why),
			   void *ctx);
/*
 * The file at path whole, NUL bytes and all, in *text (malloc()ed, with a
 * NUL after it; the caller frees it): its length, or -errno.
 */
ssize_t varsym_conf_read(const char *path, char **text);
/* The same, from fd's offset to its end (fd stays open). */
ssize_t varsym_conf_read_fd(int fd, char **text);
/*
 * Whether this process has rights its real user has not: an effective uid
 * of 0 (that of any user namespace: the rights that write), a set-id
 * start (AT_SECURE, or real and effective uids apart), or any effective
 * capability.  Whoever started it chose its environment, and may be a
 * user: `su` without `-` and `sudo -E` keep the user's.
 */
bool varsym_privileged(void);
/*
 * The system scopes' file: $VARSYM_CONF where set (a staged file, the
 * tests), else VARSYM_CONF_PATH; *from_env says which.
 */
const char *varsym_conf_system_path(bool *from_env);
/*
 * That file read as varsym_conf_read() does, *path set to it.  Root takes
 * a file $VARSYM_CONF named only if root owns it and only root may write
 * it: -EPERM otherwise.  On an error, -errno with what to say in msg.
 */
ssize_t varsym_conf_read_system(const char **path, char **text, char *msg,
				size_t size);
/*
 * What to print of a report: "FILE:LINE: why (line skipped)", or
 * "FILE:LINE: warning: why", NUL-terminated in buf, cut to size.
 */
void varsym_conf_note(char *buf, size_t size, const char *path,
		      unsigned int line, bool skipped, const char *why);

/*
 * Mount options, one parser for both implementations.  Fixed arrays keep
 * the core free of allocation; a mount holds one of these.
 */
enum varsym_opt_bits {
	VARSYM_OPT_VAR = 1 << 0,	/* seed mode's variable, in var */
	VARSYM_OPT_DEFAULT = 1 << 1,
	VARSYM_OPT_PREFIX = 1 << 2,
	VARSYM_OPT_UID = 1 << 3,
	VARSYM_OPT_GID = 1 << 4,
	VARSYM_OPT_MODE = 1 << 5,
	VARSYM_OPT_NR_LINKS = 1 << 6,
	VARSYM_OPT_SEARCH = 1 << 7,	/* search mode's variable, in var */
	VARSYM_OPT_FALLBACK = 1 << 8,	/* search mode's list, in dflt */
};

struct varsym_opts {
	unsigned int given;	/* VARSYM_OPT_* seen so far */
	unsigned int uid, gid;	/* template mode: owner of the directory */
	unsigned int mode;	/* template mode: its permission bits */
	unsigned int nr_links;	/* template mode: most links at once */
	size_t var_len, prefix_len, dflt_len;
	char var[VARSYM_NAME_MAX + 1];
	char prefix[VARSYM_PATH_MAX];
	char dflt[VARSYM_PATH_MAX];
};

#define VARSYM_TEMPLATE_MODE_DEFAULT 0755
/*
 * Template mode's default limit on links (nr_links=, as tmpfs's nr_inodes):
 * each costs at most about 5 KiB of kernel memory (inode, dentry, a
 * template of up to PATH_MAX bytes), all charged to its creator.
 */
#define VARSYM_NR_LINKS_DEFAULT 16384
#define VARSYM_SEED_ROOT_MODE 0555
/* The seed mode's one link, in the mount's root directory. */
#define VARSYM_SEED_LINK_NAME "resolve"
/*
 * The raw text behind a link, readable by anyone: a template link's
 * template, the seed link's mount options (as varsym_opts_show gives them).
 */
#define VARSYM_XATTR_TEMPLATE "system.varsym_template"
#define VARSYM_XATTR_OPTIONS "system.varsym_options"
/* On a FUSE mount's links: how it tells the walks inside an execve apart. */
#define VARSYM_XATTR_EXEC "system.varsym_exec"
/*
 * Said there after the count, when the exec hooks could not keep some
 * execs' state (memory): those execs' walks got the secure answer.
 */
#define VARSYM_EXEC_UNKEPT "execs whose state the exec hooks could not keep"

/* parse_one() returns this for an option that belongs to the mount layer. */
#define VARSYM_OPT_FOREIGN 1

void varsym_opts_init(struct varsym_opts *o);
/*
 * One option: key with its value, or value NULL for a bare word.  Returns 0
 * when taken, VARSYM_OPT_FOREIGN for a generic mount or FUSE option that the
 * caller's layer handles (a bare word is a variable only when it is not
 * one), or -EINVAL with a message naming the option in msg.
 */
int varsym_opts_parse_one(struct varsym_opts *o, const char *key,
			  const char *value, char *msg, size_t size);
/* Checks the options as a whole once all are parsed: 0 or -EINVAL + msg. */
int varsym_opts_finish(const struct varsym_opts *o, char *msg, size_t size);
/* Calls show(ctx, key, value) for each option in force, in a fixed order. */
void varsym_opts_show(const struct varsym_opts *o,
		      void (*show)(void *ctx, const char *key,
				   const char *value),
		      void *ctx);
/*
 * Room for the longest options text and its NUL: the seed mode's
 * "var=,prefix=,default=" (21 bytes), a name of at most VARSYM_NAME_MAX
 * bytes, and a prefix and a default of at most VARSYM_PATH_MAX - 1 bytes
 * together (varsym_opts_finish() refuses more).  Template mode's four
 * numbers take far less.  More than any template (under PATH_MAX) too.
 */
#define VARSYM_OPTS_TEXT_MAX (VARSYM_NAME_MAX + VARSYM_PATH_MAX + 32)
/*
 * The same as one "key=value,key=value" text (what mountinfo shows, and the
 * seed link's VARSYM_XATTR_OPTIONS), NUL-terminated in buf, cut to size:
 * VARSYM_OPTS_TEXT_MAX bytes always hold it whole.  Returns its length.
 */
size_t varsym_opts_text(const struct varsym_opts *o, char *buf, size_t size);
/* The length of that text, without writing it: what to allocate for it. */
size_t varsym_opts_text_len(const struct varsym_opts *o);
/*
 * Whether a foreign option is a word of fstab and mount(8) that no file
 * system takes (defaults, noauto, nofail, x-*, the atime words...): a layer
 * that passes the other foreign options on drops these.
 */
bool varsym_opt_mount_only(const char *key);

static inline bool varsym_opts_seed_mode(const struct varsym_opts *o)
{
	return o->given & VARSYM_OPT_VAR;
}

static inline bool varsym_opts_search_mode(const struct varsym_opts *o)
{
	return o->given & VARSYM_OPT_SEARCH;
}

/*
 * Resolution.  Both write a NUL-terminated target into out (size bytes,
 * normally VARSYM_PATH_MAX) and return its length, or:
 *   -ENOENT        unset or empty and no default (or an empty result)
 *   -EACCES        secure-exec with no default, or a refused value
 *   -ENAMETOOLONG  the target would be longer than size - 1 bytes
 *   -EINVAL        a malformed template
 *   or an error from caller->getenv().
 */
ssize_t varsym_resolve_seed(const struct varsym_opts *o,
			    const struct varsym_caller *caller, char *out,
			    size_t size);
ssize_t varsym_template_expand(const char *tmpl, size_t len,
			       const struct varsym_caller *caller, char *out,
			       size_t size);
/* A link's target: its template's expansion, or the seed's (tmpl NULL). */
ssize_t varsym_link_target(const struct varsym_opts *o, const char *tmpl,
			   size_t len, const struct varsym_caller *caller,
			   char *out, size_t size);
/*
 * Whether a link's answer may read a built-in (the seed's variable is one,
 * or the template holds "${@"): such answers are never kept.
 */
bool varsym_link_reads_builtin(const struct varsym_opts *o, const char *tmpl,
			       size_t len);
/* 0 when tmpl is a well-formed template symlink(2) may store, or -EINVAL. */
int varsym_template_check(const char *tmpl, size_t len);

/*
 * Search mode (-o search[=VAR],fallback=DIR:...): every name is a link to
 * the first DIR/NAME the caller may execute, DIR running over the
 * absolute entries of the caller's VAR, then over the fallback list.  A
 * secure-exec caller's VAR comes from the system scope only.
 *
 * The bounds: VAR's first VARSYM_SEARCH_DIRS_MAX absolute entries whole
 * within its first VARSYM_SEARCH_BYTES_MAX bytes (a Nix development
 * shell's PATH of 80 entries takes about 9 KiB), read into a buffer of
 * VARSYM_SEARCH_VALUE_MAX bytes: the byte after the bound tells whether
 * the entry ending there is whole.  The fallback list, written by the
 * mount's administrator, holds at most VARSYM_SEARCH_FALLBACK_MAX
 * entries, checked at mount time.  A search makes at most the two
 * counts' sum of lookups.
 */
#define VARSYM_SEARCH_DIRS_MAX 1024
#define VARSYM_SEARCH_BYTES_MAX 32768
#define VARSYM_SEARCH_VALUE_MAX (VARSYM_SEARCH_BYTES_MAX + 1)
#define VARSYM_SEARCH_FALLBACK_MAX 256
/* A search mount's listing reads at most this many names (varsymfs(5)). */
#define VARSYM_SEARCH_LISTING_MAX 65536
#define VARSYM_NAME_BYTES_MAX 255	/* a file name's most: NAME_MAX */
#define VARSYM_SEARCH_VAR_DEFAULT "PATH"

/*
 * The part of VAR's value a search tries: value holds its first len bytes
 * (a value longer than VARSYM_SEARCH_BYTES_MAX bytes needs only its first
 * VARSYM_SEARCH_VALUE_MAX).  Given the whole value, all_dirs counts every
 * absolute entry of it: what a person is told was left out.
 */
struct varsym_search_span {
	size_t len;		/* value[0, len) is searched */
	unsigned int dirs;	/* the absolute entries in it */
	unsigned int all_dirs;	/* the absolute entries in all len bytes */
	bool bytes_cut;		/* bytes past VARSYM_SEARCH_BYTES_MAX left */
	bool dirs_cut;		/* entries past the DIRS_MAX-th left */
};

void varsym_search_span(const char *value, size_t len,
			struct varsym_search_span *span);

/* A name a search may answer: not ".", "..", empty, or holding a '/'. */
bool varsym_search_name_valid(const char *name, size_t len);
/*
 * The target of name (name_len bytes) for caller: "DIR/NAME" in out (size
 * bytes), its length; -ENOENT when no directory holds it; or the -errno
 * of probe() or of caller->getenv() that ended the search.  probe(ctx,
 * path) returns 1 when path is a regular file the caller may execute, 0
 * to try the next directory (absent, not executable, or a walk back into
 * a search mount), or -errno.  value is scratch room for the variable,
 * VARSYM_SEARCH_VALUE_MAX bytes: too many for a kernel stack.
 */
ssize_t varsym_search(const struct varsym_opts *o,
		      const struct varsym_caller *caller, const char *name,
		      size_t name_len,
		      int (*probe)(void *ctx, const char *path), void *ctx,
		      char *value, char *out, size_t size);

/*
 * Whether a resolution's result is an answer that holds until the caller's
 * next execve, and so may be kept: a length, or an errno of the table
 * above.  Any other error (a fault, a fatal signal, no memory) is not.
 */
bool varsym_is_answer(ssize_t result);
/*
 * Whether two results of varsym_link_target(), a and b with their targets
 * out_a and out_b, are the same: the same length and bytes, or the same
 * errno.  An interpreter walk's caller answer against the secure one.
 */
bool varsym_same_result(ssize_t a, const char *out_a, ssize_t b,
			const char *out_b);

/*
 * The answer of an interpreter's walk inside an execve whose files so far
 * gain no privilege by their modes (the walk plan's check_interp): the
 * caller's answer (n, in out) stands if it is the secure one too (m, in
 * secure), or if may_follow(ctx) says the exec may follow its caller: 1
 * once the layer has seen the files' capabilities and marked the exec as
 * having followed it, 0 if not (then out becomes the secure answer), or a
 * -errno when it cannot tell now (-ECHILD in the RCU walk), returned as it
 * is.  may_follow is called only when the two answers differ.  Results that
 * are no answer (varsym_is_answer()) are returned as they are.
 */
ssize_t varsym_interp_answer(char *out, ssize_t n, const char *secure,
			     ssize_t m, int (*may_follow)(void *ctx),
			     void *ctx);

/*
 * Whether an answer the walk plan lets a cache keep (its keep) may be kept
 * beyond the walk: result is an answer; it read no built-in (used, as
 * varsym_link_target() reported it: a built-in may change without an
 * execve, by setuid(2) or sethostname(2)); if it looked in a user scope,
 * a change of real uid cannot reach it unseen (ruid_keyed: the cache's key
 * holds the real uid, or the mount has no user scope at all, and setting
 * one forgets every kept answer), as setuid(2) changes it without an
 * execve; a search's answer only under a key of who searched and where
 * (search_keyed).
 */
bool varsym_may_keep(ssize_t result, unsigned int used, bool ruid_keyed,
		     bool search, bool search_keyed);

/*
 * AT_SECURE of an auxiliary vector of len bytes whose words are word bytes
 * (4 for a 32-bit program, 8 for a 64-bit one): 1 or 0, 0 too when the
 * vector has no AT_SECURE, or -EINVAL when it has no AT_NULL within len
 * or word is neither 4 nor 8.  Callers treat -EINVAL as secure.
 */
int varsym_auxv_secure(const void *auxv, size_t len, size_t word);

/*
 * The caller model (caller.c): how both implementations read a process's
 * environment from its memory, tell execve(2) by its system-call number,
 * and tell a program that gains privileges.
 *
 * A process's memory, as a host reads it: the kernel with its user copies,
 * the daemon with preads of /proc/TID/mem or /proc/TID/environ.  The scans
 * below hold the bounds (docs/SPEC.md, "Which environment"): VARSYM_ENV_MAX
 * in all, pointers included, and VARSYM_ARG_STRLEN_PAGES pages per envp
 * string; what lies past them counts as absent.
 */
struct varsym_mem_ops {
	/*
	 * Copies up to n bytes at addr into dst.  Returns the bytes copied
	 * (fewer than n only where the readable memory ends), 0 where the
	 * memory ends, -EFAULT where it cannot be read, or another -errno
	 * (-ECHILD, -EINTR) that stops the scan and is its result.
	 */
	ssize_t (*read)(void *ctx, void *dst, unsigned long long addr,
			size_t n);
	/*
	 * At every page boundary of a scan and between envp strings: 0, or
	 * -errno to stop the scan with it.  NULL: nothing to do.
	 */
	int (*next_page)(void *ctx);
};

/* MAX_ARG_STRLEN: execve(2) refuses a longer string, NUL included. */
#define VARSYM_ARG_STRLEN_PAGES 32
/* An envp string's first read: most strings are short. */
#define VARSYM_STRING_FIRST 256

struct varsym_mem {
	const struct varsym_mem_ops *ops;
	void *ctx;
	char *buf;		/* a window on the memory: reads go there */
	size_t buf_size;	/* the most one read asks, a page at most */
	/*
	 * envp's pointers are read into ptrs, ptrs_size bytes at a time at
	 * most; these reads alone may cross a page (and return a part).
	 */
	void *ptrs;
	size_t ptrs_size;
	size_t page_size;	/* a power of 2 */
};

/*
 * Feeds s the exec-time area [start, end), at most VARSYM_ENV_MAX bytes of
 * it (a bigger area is cut there).  A read of -EFAULT ends the area, and
 * cuts the entry in progress; a read of 0 ends it where it is.  Returns 0,
 * or the -errno that stopped it (see varsym_mem_ops); then
 * varsym_env_scan_result() holds the answer.
 */
int varsym_scan_area(const struct varsym_mem *m, struct varsym_env_scan *s,
		     unsigned long long start, unsigned long long end);
/*
 * Feeds s the strings of execve's envp, an array of ptr_size-byte (4 or 8)
 * pointers at envp that ends with a NULL or an unreadable pointer.  A
 * string that cannot be read whole, or that execve would refuse, is cut,
 * and so is everything after it.  Returns as varsym_scan_area().
 */
int varsym_scan_envp(const struct varsym_mem *m, struct varsym_env_scan *s,
		     unsigned long long envp, unsigned int ptr_size);

/*
 * 4 or 8: a program with an address above 4 GiB is a 64-bit one.  For
 * reading its auxiliary vector only: never the ABI of a system call.
 */
unsigned int varsym_word_size(unsigned long long addr);

#endif /* VARSYM_CORE_H */

// SPDX-License-Identifier: GPL-2.0-only
/*
 * test_core.c - table-driven unit tests of the shared core.
 *
 * One row per behaviour, one more for every bug fixed.  Each failure prints
 * the row and what came out; the last line is "N passed, N failed".
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec_mode.h"
#include "varsym_core.h"
#include "check.h"


static const char *err_name(ssize_t e)
{
	static char buf[32];

	switch (e) {
	case -ENOENT: return "ENOENT";
	case -EACCES: return "EACCES";
	case -EINVAL: return "EINVAL";
	case -ENAMETOOLONG: return "ENAMETOOLONG";
	case -EFAULT: return "EFAULT";
	case -EINTR: return "EINTR";
	case -ECHILD: return "ECHILD";
	}
	snprintf(buf, sizeof(buf), "%zd", e);
	return buf;
}

/* A string literal with embedded NULs, as pointer and exact length. */
#define BLOCK(s) s, sizeof(s) - 1

/* ---- names ---- */

static void test_names(void)
{
	static const struct {
		const char *name;
		bool valid;
	} rows[] = {
		{ "A", true }, { "_", true }, { "a1_B", true },
		{ "UNIVERSE", true }, { "", false }, { "1A", false },
		{ "A-B", false }, { "A=B", false }, { "A B", false },
		{ "\xc3\xa9", false },
	};
	char long_name[VARSYM_NAME_MAX + 2];
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check(varsym_name_valid(rows[i].name, strlen(rows[i].name)) ==
		      rows[i].valid, "name_valid(\"%s\") != %d", rows[i].name,
		      rows[i].valid);
	memset(long_name, 'x', sizeof(long_name));
	check(varsym_name_valid(long_name, VARSYM_NAME_MAX),
	      "a name of 255 bytes is valid");
	check(!varsym_name_valid(long_name, VARSYM_NAME_MAX + 1),
	      "a name of 256 bytes is invalid");
}

/* ---- environment blocks ---- */

struct env_row {
	const char *env;
	size_t env_len;
	const char *name;
	size_t bufsize;
	ssize_t result;		/* length, or -errno */
	const char *value;	/* expected bytes when result >= 0 */
};

static const struct env_row env_rows[] = {
	{ BLOCK("A=1\0B=2\0"), "B", 64, 1, "2" },
	{ BLOCK("A=1\0B=2\0"), "A", 64, 1, "1" },
	{ BLOCK("A=1\0A=2\0"), "A", 64, 1, "1" },	/* first wins */
	{ BLOCK("A=\0A=2\0"), "A", 64, 0, "" },	/* set but empty */
	{ BLOCK("A\0A=5\0"), "A", 64, 1, "5" },	/* entry without '=' */
	{ BLOCK("AB=1\0A=2\0"), "A", 64, 1, "2" },	/* longer name */
	{ BLOCK("A=1\0"), "AB", 64, -ENOENT, NULL },	/* shorter name */
	{ BLOCK("XA=1\0"), "A", 64, -ENOENT, NULL },
	{ BLOCK("A=1\0B=xyz"), "B", 64, 3, "xyz" },	/* no final NUL */
	{ BLOCK("A=1\0B"), "B", 64, -ENOENT, NULL },
	{ BLOCK("A=1\0B="), "B", 64, 0, "" },
	{ BLOCK(""), "A", 64, -ENOENT, NULL },
	{ BLOCK("\0\0\0A=1\0"), "A", 64, 1, "1" },	/* empty entries */
	{ BLOCK("=A=1\0A=2\0"), "A", 64, 1, "2" },
	{ BLOCK("A=b=c\0"), "A", 64, 3, "b=c" },
	{ BLOCK("A==\0"), "A", 64, 1, "=" },
	{ BLOCK("A=\xff\x01\x80\0"), "A", 64, 3, "\xff\x01\x80" },
	{ BLOCK("A=1234\0"), "A", 4, 4, "1234" },	/* exactly fits */
	{ BLOCK("A=12345\0"), "A", 4, -ENAMETOOLONG, NULL },
	{ BLOCK("A=12345\0A=1\0"), "A", 4, -ENAMETOOLONG, NULL },
	{ BLOCK("B=12345\0A=1\0"), "A", 4, 1, "1" },	/* others any size */
	{ BLOCK("a=1\0A=2\0"), "A", 64, 1, "2" },	/* case matters */
};

/* Feeds the block in chunks of a given size, as the kernel and daemon do. */
static ssize_t lookup_chunked(const struct env_row *r, size_t chunk,
			      char *buf)
{
	struct varsym_env_scan s;
	size_t off = 0;

	varsym_env_scan_init(&s, r->name, strlen(r->name), buf, r->bufsize);
	while (off < r->env_len) {
		size_t n = r->env_len - off < chunk ? r->env_len - off : chunk;

		if (varsym_env_scan_feed(&s, r->env + off, n))
			break;
		off += n;
	}
	return varsym_env_scan_result(&s);
}

static void test_env(void)
{
	static const size_t chunks[] = { 1, 2, 3, 7, 256 };
	char buf[64];
	size_t i, j;

	for (i = 0; i < sizeof(env_rows) / sizeof(env_rows[0]); i++) {
		const struct env_row *r = &env_rows[i];

		for (j = 0; j < sizeof(chunks) / sizeof(chunks[0]); j++) {
			ssize_t n = lookup_chunked(r, chunks[j], buf);

			check(n == r->result && (n < 0 ||
			      !memcmp(buf, r->value, n)),
			      "env row %zu (%s), chunk %zu: got %s", i,
			      r->name, chunks[j], err_name(n));
		}
		check(varsym_env_lookup(r->env, r->env_len, r->name,
					strlen(r->name), buf, r->bufsize) ==
		      r->result, "env_lookup row %zu", i);
	}
}

/* A block cut short by unreadable memory: a value in progress is dropped. */
static void test_env_cut(void)
{
	struct varsym_env_scan s;
	char buf[16];

	varsym_env_scan_init(&s, "A", 1, buf, sizeof(buf));
	varsym_env_scan_feed(&s, "B=1\0A=par", 9);
	varsym_env_scan_cut(&s);
	check(varsym_env_scan_result(&s) == -ENOENT,
	      "a value cut short by a fault is unset");
	varsym_env_scan_init(&s, "A", 1, buf, sizeof(buf));
	check(varsym_env_scan_feed(&s, "A=ok\0B=", 7), "found before the cut");
	varsym_env_scan_cut(&s);
	check(varsym_env_scan_result(&s) == 2 && !memcmp(buf, "ok", 2),
	      "a value complete before the cut stays");
}

/* A variable after a megabyte of others is still found, through 256 bytes. */
static void test_env_large(void)
{
	size_t big = (1 << 20) + 17, off = 0, len;
	char *env = malloc(big + 64), buf[16];
	struct varsym_env_scan s;

	if (!env)
		abort();
	memset(env, 'x', big);
	memcpy(env, "A", 1);		/* "Axxxx...": not A= */
	env[big / 2] = '\0';
	env[big - 1] = '\0';
	len = big + sprintf(env + big, "A=found");
	varsym_env_scan_init(&s, "A", 1, buf, sizeof(buf));
	while (off < len && !varsym_env_scan_feed(&s, env + off,
			len - off < 256 ? len - off : 256))
		off += 256;
	check(varsym_env_scan_result(&s) == 5 && !memcmp(buf, "found", 5),
	      "a variable after 1 MiB of environment is found");
	free(env);
}

/* ---- options ---- */

struct opt_row {
	const char *opts;	/* comma-separated, as mount -o */
	int result;		/* of parse_one/finish: 0 or -EINVAL */
	const char *msg;	/* expected message, or shown options */
};

static const struct opt_row opt_rows[] = {
	{ "UNIVERSE", 0, "var=UNIVERSE" },
	{ "var=UNIVERSE", 0, "var=UNIVERSE" },
	{ "UNIVERSE,prefix=/universes/,default=ucb", 0,
	  "var=UNIVERSE,prefix=/universes/,default=ucb" },
	{ "default=/ucb,UNIVERSE", 0, "var=UNIVERSE,default=/ucb" },
	{ "rw,UNIVERSE,nosuid,allow_other,x-systemd.automount", 0,
	  "var=UNIVERSE" },
	{ "var=allow_other", 0, "var=allow_other" },
	{ "", 0, "" },
	{ "uid=1000,gid=100,mode=1777", 0, "uid=1000,gid=100,mode=1777" },
	{ "mode=755", 0, "" },
	{ "uid=4294967294", 0, "uid=4294967294" },
	{ "UNIVERSE,OTHER", -EINVAL,
	  "unknown option 'OTHER' (the mount's variable is 'UNIVERSE' already)" },
	{ "var=A,B", -EINVAL,
	  "unknown option 'B' (the mount's variable is 'A' already)" },
	{ "A,var=B", -EINVAL, "variable given twice: 'A' and 'B'" },
	{ "var=A,var=B", -EINVAL, "variable given twice: 'A' and 'B'" },
	{ "1abc", -EINVAL, "unknown option or invalid variable name '1abc'" },
	{ "foo.bar", -EINVAL,
	  "unknown option or invalid variable name 'foo.bar'" },
	{ "var=1abc", -EINVAL, "invalid variable name in 'var=1abc'" },
	{ "var=", -EINVAL, "invalid variable name in 'var='" },
	{ "foo=bar", -EINVAL, "unknown option 'foo=bar'" },
	{ "A,prefix=", -EINVAL, "empty value in 'prefix='" },
	{ "A,default=", -EINVAL, "empty value in 'default='" },
	{ "A,default", -EINVAL, "option 'default' needs a value ('default=...')" },
	{ "var", -EINVAL, "option 'var' needs a value ('var=...')" },
	{ "A,default=x,default=y", -EINVAL, "option 'default=' given twice" },
	{ "A,prefix=/a,prefix=/b", -EINVAL, "option 'prefix=' given twice" },
	{ "default=x", -EINVAL,
	  "option 'default=' needs a variable (-o NAME or var=NAME); without one the mount is in template mode" },
	{ "prefix=/u/", -EINVAL,
	  "option 'prefix=' needs a variable (-o NAME or var=NAME); without one the mount is in template mode" },
	{ "A,mode=700", -EINVAL,
	  "option 'mode=' applies only to template mode (no variable), but variable 'A' is given" },
	{ "uid=0,A", -EINVAL,
	  "option 'uid=' applies only to template mode (no variable), but variable 'A' is given" },
	{ "mode=8", -EINVAL, "invalid value in 'mode=8'" },
	{ "mode=17777", -EINVAL, "invalid value in 'mode=17777'" },
	{ "uid=-1", -EINVAL, "invalid value in 'uid=-1'" },
	{ "uid=4294967295", -EINVAL, "invalid value in 'uid=4294967295'" },
	{ "uid=", -EINVAL, "invalid value in 'uid='" },
	{ "gid=1x", -EINVAL, "invalid value in 'gid=1x'" },
	{ "uid=1,uid=2", -EINVAL, "option 'uid=' given twice" },
	{ "A,default=a,b", -EINVAL,
	  "unknown option 'b' (the mount's variable is 'A' already)" },
	{ "nr_links=100", 0, "nr_links=100" },
	{ "nr_links=16384", 0, "" },
	{ "mode=1777,nr_links=2147483647", 0, "mode=1777,nr_links=2147483647" },
	{ "nr_links=0", -EINVAL,
	  "'nr_links=0': a mount needs room for one link at least" },
	{ "nr_links=2147483648", -EINVAL,
	  "invalid value in 'nr_links=2147483648'" },
	{ "nr_links=1,nr_links=2", -EINVAL, "option 'nr_links=' given twice" },
	{ "A,nr_links=5", -EINVAL,
	  "option 'nr_links=' applies only to template mode (no variable), but variable 'A' is given" },
};

struct shown {
	char text[VARSYM_OPTS_TEXT_MAX];
};

static void show_one(void *ctx, const char *key, const char *value)
{
	struct shown *s = ctx;
	size_t n = strlen(s->text);

	snprintf(s->text + n, sizeof(s->text) - n, "%s%s=%s", n ? "," : "",
		 key, value);
}

/* Parses "a,b=c" the way mount(8) splits -o, into o; returns 0 or -EINVAL. */
static int parse_opts(const char *opts, struct varsym_opts *o, char *msg)
{
	char *copy = strdup(opts), *save = NULL, *tok;
	int ret = 0;

	varsym_opts_init(o);
	msg[0] = '\0';
	for (tok = strtok_r(copy, ",", &save); tok && !ret;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq)
			*eq++ = '\0';
		ret = varsym_opts_parse_one(o, tok, eq, msg, VARSYM_MSG_MAX);
		if (ret == VARSYM_OPT_FOREIGN)
			ret = 0;
	}
	free(copy);
	if (!ret)
		ret = varsym_opts_finish(o, msg, VARSYM_MSG_MAX);
	return ret;
}

static void test_options(void)
{
	static struct varsym_opts o;
	static struct shown shown;
	char msg[VARSYM_MSG_MAX];
	size_t i;

	for (i = 0; i < sizeof(opt_rows) / sizeof(opt_rows[0]); i++) {
		const struct opt_row *r = &opt_rows[i];
		int ret = parse_opts(r->opts, &o, msg);

		if (ret == 0) {
			shown.text[0] = '\0';
			varsym_opts_show(&o, show_one, &shown);
		}
		check(ret == r->result &&
		      !strcmp(ret ? msg : shown.text, r->msg),
		      "options \"%s\": got %d \"%s\"", r->opts, ret,
		      ret ? msg : shown.text);
	}
	check(varsym_opts_parse_one(&o, "rw", NULL, msg, sizeof(msg)) ==
	      VARSYM_OPT_FOREIGN, "rw is left to the mount layer");
	check(varsym_opts_parse_one(&o, "source", "none", msg, sizeof(msg)) ==
	      VARSYM_OPT_FOREIGN, "source is left to the mount layer");
	/* fsconfig(2) can hand over a value with a comma in it */
	varsym_opts_init(&o);
	check(varsym_opts_parse_one(&o, "prefix", "/a,b", msg, sizeof(msg)) ==
	      -EINVAL && !strcmp(msg, "value of 'prefix=' contains a comma"),
	      "a comma inside a value is refused: %s", msg);
}

static void test_options_limits(void)
{
	static struct varsym_opts o;
	char msg[VARSYM_MSG_MAX], *opts = malloc(2 * VARSYM_PATH_MAX + 64);
	int ret;

	if (!opts)
		abort();
	memset(opts, 'N', VARSYM_NAME_MAX + 1);
	opts[VARSYM_NAME_MAX + 1] = '\0';
	ret = parse_opts(opts, &o, msg);
	check(ret == -EINVAL && strstr(msg, "is longer than 255 bytes"),
	      "a 256-byte variable name is refused: %s", msg);
	opts[VARSYM_NAME_MAX] = '\0';
	check(parse_opts(opts, &o, msg) == 0 && o.var_len == VARSYM_NAME_MAX,
	      "a 255-byte variable name is taken");

	strcpy(opts, "A,prefix=/");
	memset(opts + 10, 'p', VARSYM_PATH_MAX - 2);
	strcpy(opts + 10 + VARSYM_PATH_MAX - 2, ",default=d");
	ret = parse_opts(opts, &o, msg);
	check(ret == -EINVAL && strstr(msg, "together are longer"),
	      "prefix + default beyond PATH_MAX - 1 is refused: %s", msg);
	strcpy(opts, "A,prefix=/");
	memset(opts + 10, 'p', VARSYM_PATH_MAX - 1);
	opts[10 + VARSYM_PATH_MAX - 1] = '\0';
	ret = parse_opts(opts, &o, msg);
	check(ret == -EINVAL && strstr(msg, "longer than PATH_MAX - 1"),
	      "a prefix of PATH_MAX bytes is refused: %s", msg);
	free(opts);
}

/* ---- seed resolution and templates ---- */

struct test_env {
	const char *env;
	size_t len;
	int fail;		/* getenv() returns this if non-zero */
	char notes[512];	/* what note() was told */
};

static ssize_t test_getenv(void *ctx, const char *name, size_t len,
			   char *buf, size_t size)
{
	struct test_env *e = ctx;

	if (e->fail)
		return e->fail;
	return varsym_env_lookup(e->env, e->len, name, len, buf, size);
}

static void test_note(void *ctx, const char *name, size_t len,
		      enum varsym_source from, const char *value,
		      size_t value_len)
{
	static const char *const names[] = { "env", "user", "system",
					     "builtin", "default", "nothing",
					     "refused" };
	struct test_env *e = ctx;
	size_t n = strlen(e->notes);

	snprintf(e->notes + n, sizeof(e->notes) - n, "%s%.*s:%s=%.*s",
		 n ? " " : "", (int)len, name, names[from], (int)value_len,
		 value ? value : "");
}

struct resolve_row {
	const char *what;	/* options (seed) or template */
	const char *env;
	size_t env_len;
	bool secure;
	ssize_t result;		/* -errno, or 1 for "see expect" */
	const char *expect;
	const char *notes;	/* NULL: not checked */
};

#define OK(s) 1, s

static const struct resolve_row seed_rows[] = {
	{ "UNIVERSE", BLOCK("UNIVERSE=/att\0"), false, OK("/att"),
	  "UNIVERSE:env=/att" },
	{ "UNIVERSE", BLOCK("HOME=/\0"), false, -ENOENT, NULL,
	  "UNIVERSE:nothing=" },
	{ "UNIVERSE", BLOCK("UNIVERSE=\0"), false, -ENOENT, NULL, NULL },
	{ "UNIVERSE,default=/ucb", BLOCK(""), false, OK("/ucb"),
	  "UNIVERSE:default=/ucb" },
	{ "UNIVERSE,default=/ucb", BLOCK("UNIVERSE=\0"), false, OK("/ucb"),
	  NULL },
	{ "UNIVERSE,default=/ucb", BLOCK("UNIVERSE=/att\0"), false,
	  OK("/att"), NULL },
	{ "UNIVERSE,prefix=/universes/", BLOCK("UNIVERSE=att\0"), false,
	  OK("/universes/att"), NULL },
	{ "UNIVERSE,prefix=/universes/,default=ucb", BLOCK(""), false,
	  OK("/universes/ucb"), NULL },
	{ "U,prefix=/u/", BLOCK("U=../etc\0"), false, -EACCES, NULL,
	  "U:refused=../etc" },
	{ "U,prefix=/u/", BLOCK("U=a/../b\0"), false, -EACCES, NULL, NULL },
	{ "U,prefix=/u/", BLOCK("U=a/..\0"), false, -EACCES, NULL, NULL },
	{ "U,prefix=/u/", BLOCK("U=..\0"), false, -EACCES, NULL, NULL },
	{ "U,prefix=/u/", BLOCK("U=a//..//b\0"), false, -EACCES, NULL, NULL },
	{ "U,prefix=/u/", BLOCK("U=...\0"), false, OK("/u/..."), NULL },
	{ "U,prefix=/u/", BLOCK("U=..a\0"), false, OK("/u/..a"), NULL },
	{ "U,prefix=/u/", BLOCK("U=a..\0"), false, OK("/u/a.."), NULL },
	{ "U,prefix=/u/", BLOCK("U=./a\0"), false, OK("/u/./a"), NULL },
	{ "U,prefix=/u/.", BLOCK("U=./a\0"), false, -EACCES, NULL, NULL },
	{ "U,prefix=/u/.", BLOCK("U=.\0"), false, -EACCES, NULL, NULL },
	{ "U,prefix=/u/../", BLOCK("U=a\0"), false, OK("/u/../a"), NULL },
	{ "U,prefix=/u", BLOCK("U=x\0"), false, OK("/ux"), NULL },
	{ "U", BLOCK("U=../etc\0"), false, OK("../etc"), NULL },
	{ "U,default=d", BLOCK("U=x\0"), true, OK("d"), "U:default=d" },
	{ "U", BLOCK("U=x\0"), true, -EACCES, NULL, "U:nothing=" },
	{ "U,prefix=/p/,default=d", BLOCK("U=x\0"), true, OK("/p/d"), NULL },
	{ "U,default=/d", BLOCK("U=\xff\x01\0"), false, OK("\xff\x01"), NULL },
};

static const struct resolve_row template_rows[] = {
	{ "/opt/perl/${PERL_VERSION:-5.22.1}/lib",
	  BLOCK("PERL_VERSION=5.24.0\0"), false, OK("/opt/perl/5.24.0/lib"),
	  "PERL_VERSION:env=5.24.0" },
	{ "/opt/perl/${PERL_VERSION:-5.22.1}/lib", BLOCK(""), false,
	  OK("/opt/perl/5.22.1/lib"), "PERL_VERSION:default=5.22.1" },
	{ "/opt/perl/${PERL_VERSION:-5.22.1}/lib", BLOCK("PERL_VERSION=\0"),
	  false, OK("/opt/perl/5.22.1/lib"), NULL },
	{ "/opt/perl/${PERL_VERSION:-5.22.1}/lib",
	  BLOCK("PERL_VERSION=5.24.0\0"), true, OK("/opt/perl/5.22.1/lib"),
	  NULL },
	{ "${A}", BLOCK("A=x\0"), false, OK("x"), NULL },
	{ "${A}", BLOCK(""), false, -ENOENT, NULL, "A:nothing=" },
	{ "${A}", BLOCK("A=\0"), false, -ENOENT, NULL, NULL },
	{ "${A}", BLOCK("A=x\0"), true, -EACCES, NULL, NULL },
	{ "/${A}/${B}/${A}", BLOCK("A=a\0B=b\0"), false, OK("/a/b/a"), NULL },
	{ "/${A}/${B}", BLOCK("A=a\0"), false, -ENOENT, NULL, NULL },
	{ "${A:-${B:-c}}", BLOCK("A=a\0B=b\0"), false, OK("a"), "A:env=a" },
	{ "${A:-${B:-c}}", BLOCK("B=b\0"), false, OK("b"),
	  "B:env=b A:default=b" },
	{ "${A:-${B:-c}}", BLOCK(""), false, OK("c"),
	  "B:default=c A:default=c" },
	{ "${A:-${B}}", BLOCK("A=a\0"), false, OK("a"), NULL },
	{ "${A:-${B}}", BLOCK(""), false, -ENOENT, NULL, NULL },
	{ "${A:-x${B:-y}z}w", BLOCK(""), false, OK("xyzw"), NULL },
	{ "${A:-}", BLOCK(""), false, -ENOENT, NULL, NULL },
	{ "/x${A:-}", BLOCK(""), false, OK("/x"), NULL },
	{ "$$", BLOCK(""), false, OK("$"), NULL },
	{ "$$$", BLOCK(""), false, OK("$$"), NULL },
	{ "$${A}", BLOCK("A=x\0"), false, OK("${A}"), NULL },
	{ "$", BLOCK(""), false, OK("$"), NULL },
	{ "a$", BLOCK(""), false, OK("a$"), NULL },
	{ "a$b", BLOCK(""), false, OK("a$b"), NULL },
	{ "$A", BLOCK("A=x\0"), false, OK("$A"), NULL },
	{ "}", BLOCK(""), false, OK("}"), NULL },
	{ "a}b{", BLOCK(""), false, OK("a}b{"), NULL },
	{ "${A:-}}", BLOCK(""), false, OK("}"), NULL },
	{ "${A:-a:-b}", BLOCK(""), false, OK("a:-b"), NULL },
	{ "${A:-$$}", BLOCK(""), false, OK("$"), NULL },
	{ "${A}", BLOCK("A=${B}\0B=x\0"), false, OK("${B}"), NULL },
	{ "${A", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${}", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${1A}", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${A-x}", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${A:x}", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${A:}", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${A:-x", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${A.B}", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${A:-${B}", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "x${ A}", BLOCK(""), false, -EINVAL, NULL, NULL },
	{ "${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H}}}}}}}}", BLOCK("H=8\0"),
	  false, OK("8"), NULL },
	{ "${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H:-x}}}}}}}}", BLOCK(""),
	  false, OK("x"), NULL },
	{ "${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H:-${I}}}}}}}}}", BLOCK(""),
	  false, -EINVAL, NULL, NULL },
	{ "${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H:-${I}}}}}}}}}",
	  BLOCK("A=a\0"), false, -EINVAL, NULL, NULL },
	{ "${A}${B:-${C:-${D:-${E:-${F:-${G:-${H:-${I:-x}}}}}}}}",
	  BLOCK("A=a\0"), false, OK("ax"), NULL },
};

static void run_rows(const struct resolve_row *rows, size_t n, bool seed)
{
	static struct varsym_opts o;
	char out[VARSYM_PATH_MAX], msg[VARSYM_MSG_MAX];
	size_t i;

	for (i = 0; i < n; i++) {
		const struct resolve_row *r = &rows[i];
		struct test_env e = { .env = r->env, .len = r->env_len };
		struct varsym_caller c = {
			.getenv = test_getenv,
			.note = test_note,
			.ctx = &e,
			.secure = r->secure,
		};
		ssize_t got, want = r->result;

		if (seed) {
			if (parse_opts(r->what, &o, msg)) {
				check(false, "seed row %zu: options: %s", i,
				      msg);
				continue;
			}
			got = varsym_resolve_seed(&o, &c, out, sizeof(out));
		} else {
			got = varsym_template_expand(r->what, strlen(r->what),
						     &c, out, sizeof(out));
		}
		if (want == 1)
			want = strlen(r->expect);
		check(got == want && (got < 0 || !strcmp(out, r->expect)) &&
		      (!r->notes || !strcmp(e.notes, r->notes)),
		      "%s \"%s\" secure=%d: got %s \"%s\" notes \"%s\"",
		      seed ? "seed" : "template", r->what, r->secure,
		      err_name(got), got > 0 ? out : "", e.notes);
		if (!seed)
			check(varsym_template_check(r->what, strlen(r->what)) ==
			      (got == -EINVAL ? -EINVAL : 0),
			      "template_check(\"%s\")", r->what);
	}
}

/*
 * Scopes and built-ins (docs/SPEC.md section 4): one row per step of the
 * precedence, for a caller and for a secure-exec one.
 */
struct scope_row {
	const char *what;	/* options (seed: no '$') or template */
	const char *env, *user, *system;	/* blocks, NUL-separated */
	size_t env_len, user_len, system_len;
	bool secure;
	ssize_t result;
	const char *expect;
	const char *notes;
	unsigned int used;	/* VARSYM_USED_* expected */
};

#define SCOPE(s) s, sizeof(s) - 1

static const struct scope_row scope_rows[] = {
	{ "/p/${V:-d}", "V=env\0", "V=user\0", "V=sys\0", 6, 7, 6, false,
	  OK("/p/env"), "V:env=env", 0 },
	{ "/p/${V:-d}", "", "V=user\0", "V=sys\0", 0, 7, 6, false,
	  OK("/p/user"), "V:user=user", VARSYM_USED_USER },
	{ "/p/${V:-d}", "V=\0", "V=user\0", "V=sys\0", 3, 7, 6, false,
	  OK("/p/user"), NULL, VARSYM_USED_USER },
	{ "/p/${V:-d}", "", NULL, "V=sys\0", 0, 0, 6, false, OK("/p/sys"),
	  "V:system=sys", VARSYM_USED_USER },
	{ "/p/${V:-d}", "", "W=1\0", "W=2\0", 0, 4, 4, false, OK("/p/d"),
	  "V:default=d", VARSYM_USED_USER },
	{ "/p/${V}", "", NULL, NULL, 0, 0, 0, false, -ENOENT, NULL, NULL,
	  VARSYM_USED_USER },
	/* secure: the environment and the user scope are skipped */
	{ "/p/${V:-d}", "V=env\0", "V=user\0", "V=sys\0", 6, 7, 6, true,
	  OK("/p/sys"), "V:system=sys", 0 },
	{ "/p/${V:-d}", "V=env\0", "V=user\0", NULL, 6, 7, 0, true,
	  OK("/p/d"), NULL, 0 },
	{ "/p/${V}", "V=env\0", "V=user\0", NULL, 6, 7, 0, true, -EACCES,
	  NULL, NULL, 0 },
	{ "V,prefix=/u/", "", "V=x\0", "V=y\0", 0, 4, 4, false, OK("/u/x"),
	  "V:user=x", VARSYM_USED_USER },
	{ "V,prefix=/u/", "", "V=../x\0", NULL, 0, 7, 0, false, -EACCES,
	  NULL, "V:refused=../x", VARSYM_USED_USER },
	{ "V,prefix=/u/,default=d", "V=e\0", "V=x\0", "V=y\0", 4, 4, 4, true,
	  OK("/u/y"), "V:system=y", 0 },
	/* one change seen whole: both values from the same block */
	{ "${A}-${B}", "", NULL, "A=1\0B=1\0", 0, 0, 8, false, OK("1-1"),
	  "A:system=1 B:system=1", VARSYM_USED_USER },
	/* built-ins: never from any environment or scope */
	{ "/opt/${@machine}/lib", "@machine=x\0", NULL, "@machine=y\0", 11, 0,
	  11, false, OK("/opt/x86_64/lib"), "@machine:builtin=x86_64",
	  VARSYM_USED_BUILTIN },
	{ "/home/${@ruid}/${@uid}/${@gid}/${@rgid}", "", NULL, NULL, 0, 0, 0,
	  false, OK("/home/1000/0/5/1001"), NULL, VARSYM_USED_BUILTIN },
	{ "/h/${@ruid:-nobody}/${@uid}", "", NULL, NULL, 0, 0, 0, true,
	  OK("/h/nobody/0"), "@ruid:default=nobody @uid:builtin=0",
	  VARSYM_USED_BUILTIN },
	{ "/h/${@rgid}", "", NULL, NULL, 0, 0, 0, true, -EACCES, NULL, NULL,
	  VARSYM_USED_BUILTIN },
	{ "${@hostname}.${@osrelease}", "", NULL, NULL, 0, 0, 0, true,
	  OK("box.6.1.0-57-amd64"), NULL, VARSYM_USED_BUILTIN },
	{ "@machine,prefix=/opt/", "", NULL, NULL, 0, 0, 0, false,
	  OK("/opt/x86_64"), NULL, VARSYM_USED_BUILTIN },
	{ "${@nope}", "", NULL, NULL, 0, 0, 0, false, -EINVAL, NULL, NULL, 0 },
	{ "${@}", "", NULL, NULL, 0, 0, 0, false, -EINVAL, NULL, NULL, 0 },
	{ "${@UID}", "", NULL, NULL, 0, 0, 0, false, -EINVAL, NULL, NULL, 0 },
};

static void test_scopes(void)
{
	static const struct varsym_builtins ids = {
		.uid = 0, .gid = 5, .ruid = 1000, .rgid = 1001,
		.hostname = "box", .machine = "x86_64",
		.osrelease = "6.1.0-57-amd64",
	};
	static struct varsym_opts o;
	char out[VARSYM_PATH_MAX], msg[VARSYM_MSG_MAX];
	size_t i;

	for (i = 0; i < sizeof(scope_rows) / sizeof(scope_rows[0]); i++) {
		const struct scope_row *r = &scope_rows[i];
		struct test_env e = { .env = r->env, .len = r->env_len };
		unsigned int used = 0;
		struct varsym_caller c = {
			.getenv = test_getenv, .note = test_note, .ctx = &e,
			.secure = r->secure,
			.user_scope = r->user, .user_scope_len = r->user_len,
			.system_scope = r->system,
			.system_scope_len = r->system_len,
			.builtins = &ids, .used = &used,
		};
		ssize_t got, want = r->result;

		if (!strchr(r->what, '$')) {
			if (parse_opts(r->what, &o, msg)) {
				check(false, "scope row %zu: options: %s", i,
				      msg);
				continue;
			}
			got = varsym_resolve_seed(&o, &c, out, sizeof(out));
		} else {
			got = varsym_template_expand(r->what, strlen(r->what),
						     &c, out, sizeof(out));
		}
		if (want == 1)
			want = strlen(r->expect);
		check(got == want && (got < 0 || !strcmp(out, r->expect)) &&
		      (!r->notes || !strcmp(e.notes, r->notes)) &&
		      used == r->used,
		      "scope row %zu \"%s\" secure=%d: got %s \"%s\" notes \"%s\" used %u",
		      i, r->what, r->secure, err_name(got), got > 0 ? out : "",
		      e.notes, used);
	}
}

/* Edits: all or nothing, with the bounds and the message. */
static void test_scope_edit(void)
{
	static char big[2 * VARSYM_SCOPE_MAX], out[VARSYM_SCOPE_MAX];
	static const struct {
		const char *old;
		size_t old_len;
		const char *edits;
		size_t edits_len;
		ssize_t result;
		const char *expect;	/* the new block, or the message */
		size_t expect_len;
	} rows[] = {
		{ SCOPE(""), SCOPE("A=1\0B=2\0"), 8, SCOPE("A=1\0B=2\0") },
		{ SCOPE("A=1\0B=2\0"), SCOPE("A=3"), 8, SCOPE("B=2\0A=3\0") },
		{ SCOPE("A=1\0B=2\0"), SCOPE("A\0C=4\0"), 8,
		  SCOPE("B=2\0C=4\0") },
		{ SCOPE("A=1\0"), SCOPE("Z\0"), 4, SCOPE("A=1\0") },
		{ SCOPE("A=1\0"), SCOPE("A\0"), 0, SCOPE("") },
		{ SCOPE("A=1\0"), SCOPE("B=\0"), -EINVAL,
		  SCOPE("empty value for 'B' (unset it instead)") },
		{ SCOPE("A=1\0"), SCOPE("1B=x\0"), -EINVAL,
		  SCOPE("invalid variable name '1B'") },
		{ SCOPE("A=1\0"), SCOPE("@uid=0\0"), -EINVAL,
		  SCOPE("'@uid' is a built-in name: nobody sets it") },
		{ SCOPE("A=1\0"), SCOPE("B=1\0B\0"), -EINVAL,
		  SCOPE("'B' given twice") },
		{ SCOPE("A=1\0"), SCOPE("B=1\0\0C=2"), -EINVAL,
		  SCOPE("invalid variable name ''") },
		{ SCOPE("A=1\0"), SCOPE(""), -EINVAL,
		  SCOPE("no NAME=VALUE or NAME given") },
		{ SCOPE("A=1\0"), SCOPE("\0"), -EINVAL,
		  SCOPE("no NAME=VALUE or NAME given") },
		/* control bytes, in a value or a name: one message */
		{ SCOPE("A=1\0"), SCOPE("B=2\0V=a\nb\0"), -EINVAL,
		  SCOPE("control character 0x0a in 'V=...': names and values are printable text") },
		{ SCOPE("A=1\0"), SCOPE("V=a\tb\0"), -EINVAL,
		  SCOPE("control character 0x09 in 'V=...': names and values are printable text") },
		{ SCOPE("A=1\0"), SCOPE("V=\x7f\0"), -EINVAL,
		  SCOPE("control character 0x7f in 'V=...': names and values are printable text") },
		{ SCOPE("A=1\0"), SCOPE("V=\x1f\0"), -EINVAL,
		  SCOPE("control character 0x1f in 'V=...': names and values are printable text") },
		{ SCOPE("A=1\0"), SCOPE("AB\rC=1\0"), -EINVAL,
		  SCOPE("control character 0x0d in 'AB...': names and values are printable text") },
		{ SCOPE("A=1\0"), SCOPE("\033[2J\0"), -EINVAL,
		  SCOPE("control character 0x1b in '...': names and values are printable text") },
		{ SCOPE("A=1\0"), SCOPE("A\n\0"), -EINVAL,
		  SCOPE("control character 0x0a in 'A...': names and values are printable text") },
		/* a space, and bytes above 0x7f (UTF-8), are text */
		{ SCOPE(""), SCOPE("V=a b\xc3\xa9\x80\0"), 9,
		  SCOPE("V=a b\xc3\xa9\x80\0") },
	};
	static struct varsym_opts seed_o;
	char msg[VARSYM_MSG_MAX];
	struct varsym_scope_entry e;
	size_t i, pos, n;
	ssize_t got;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		msg[0] = '\0';
		got = varsym_scope_edit(rows[i].old, rows[i].old_len,
					rows[i].edits, rows[i].edits_len, out,
					sizeof(out), msg, sizeof(msg));
		check(got == rows[i].result &&
		      (got < 0 ? !strcmp(msg, rows[i].expect) :
		       (size_t)got == rows[i].expect_len &&
		       !memcmp(out, rows[i].expect, got)),
		      "scope edit row %zu: %s (%s)", i, err_name(got), msg);
	}
	/* a value of PATH_MAX - 1 bytes is taken, PATH_MAX is not */
	memcpy(big, "V=", 2);
	memset(big + 2, 'v', VARSYM_PATH_MAX);
	got = varsym_scope_edit("", 0, big, 2 + VARSYM_PATH_MAX - 1, out,
				sizeof(out), msg, sizeof(msg));
	check(got == 2 + VARSYM_PATH_MAX, "scope edit: PATH_MAX - 1: %s",
	      err_name(got));
	got = varsym_scope_edit("", 0, big, 2 + VARSYM_PATH_MAX, out,
				sizeof(out), msg, sizeof(msg));
	check(got == -EINVAL, "scope edit: PATH_MAX: %s", err_name(got));
	/* 1024 names fit; the 1025th is refused, and so are 65536 bytes */
	for (n = 0, i = 0; i < VARSYM_SCOPE_ENTRIES_MAX + 1; i++)
		n += snprintf(big + n, sizeof(big) - n, "V%zu=x", i) + 1;
	got = varsym_scope_edit("", 0, big, n, out, sizeof(out), msg,
				sizeof(msg));
	check(got == -EINVAL, "scope edit: 1025 names in one change: %s",
	      err_name(got));
	got = varsym_scope_edit(big, n, "W=1", 3, out, sizeof(out), msg,
				sizeof(msg));
	check(got == -E2BIG, "scope edit: past 1024 names: %s (%s)",
	      err_name(got), msg);
	for (n = 0, i = 0; i < 16; i++) {
		n += snprintf(big + n, sizeof(big) - n, "V%zu=", i);
		memset(big + n, 'v', VARSYM_PATH_MAX - 1);
		n += VARSYM_PATH_MAX - 1;
		big[n++] = '\0';
	}
	got = varsym_scope_edit("", 0, big, n, out, sizeof(out), msg,
				sizeof(msg));
	check(got == -E2BIG, "scope edit: past 65536 bytes: %s",
	      err_name(got));
	/* which links' answers are never kept */
	parse_opts("@machine", &seed_o, msg);
	check(varsym_link_reads_builtin(&seed_o, NULL, 0) &&
	      varsym_link_reads_builtin(NULL, "/a/${@uid}", 10) &&
	      !varsym_link_reads_builtin(NULL, "/a/${uid}@", 10),
	      "link_reads_builtin");
	/* the iterator: names and values of a block */
	pos = 0;
	n = 0;
	while (varsym_scope_next("A=1\0BB=22\0", 10, &pos, &e))
		n += e.has_value && e.value_len == e.name_len;
	check(n == 2 && pos == 10, "scope_next: two entries (%zu)", n);
}

/* What varsym_conf_section() reported: "LINE s|w why\n" each. */
struct conf_reports {
	char text[2048];
	size_t len;
};

static void conf_report(void *ctx, unsigned int line, bool skipped,
			const char *why)
{
	struct conf_reports *r = ctx;

	r->len += snprintf(r->text + r->len, sizeof(r->text) - r->len,
			   "%u %c %s\n", line, skipped ? 's' : 'w', why);
}

#define CTL_MSG ": names and values are printable text"

/*
 * /etc/varsym.conf: the mount's sections only; each bad line reported by
 * number and skipped, the rest applied; blanks around a line and its '='
 * are not part of it.
 */
static void test_conf(void)
{
	static char out[VARSYM_SCOPE_MAX], big[4 * VARSYM_SCOPE_MAX];
	static const struct {
		const char *text, *mount;
		const char *expect;	/* the block */
		size_t expect_len;
		const char *reports;
	} rows[] = {
		{ "# c\n[/a]\nA=1\nB=/x y\n[/b]\nC=3\n", "/a",
		  SCOPE("A=1\0B=/x y\0"), "" },
		{ "[/a]\nA=1\n[/b]\nC=3\n[/a/]\nD=4\n", "/a",
		  SCOPE("A=1\0D=4\0"), "" },
		/* another mount's bad line is not this one's business */
		{ "[/b]\n1bad\n[/a]\nA=1", "/a", SCOPE("A=1\0"), "" },
		/* a line before any section belongs to no mount: said */
		{ "# top\nA=1\n", "/a", SCOPE(""),
		  "2 s before any [/MOUNT/POINT] section: no mount's\n" },
		/* one bad line costs itself only */
		{ "[/a]\n\n\n1A=2\nB=3\n", "/a", SCOPE("B=3\0"),
		  "4 s invalid variable name '1A'\n" },
		{ "[/a]\nA\nB=1\n", "/a", SCOPE("B=1\0"),
		  "2 s NAME=VALUE expected\n" },
		{ "[/a]\nA=\nB=1\n", "/a", SCOPE("B=1\0"),
		  "2 s empty value for 'A' (unset it instead)\n" },
		{ "[/a]\nA= \t \n", "/a", SCOPE(""),
		  "2 s empty value for 'A' (unset it instead)\n" },
		{ "[/a]\n@uid=0\n", "/a", SCOPE(""),
		  "2 s '@uid' is a built-in name: nobody sets it\n" },
		{ "[/a]\nA=x\x1b[2J\n", "/a", SCOPE(""),
		  "2 s control character 0x1b in 'A=...'" CTL_MSG "\n" },
		/* blanks: around the line, around '=', at its end */
		{ "[/a]\n  A = 1  \n\tB\t=\t/b c\t\r\n   # indented comment\n"
		  "; another comment\n  \t\n", "/a", SCOPE("A=1\0B=/b c\0"), "" },
		{ "  [/a]  \r\nA=1\r\n", "/a", SCOPE("A=1\0"), "" },
		/* no end-of-line comments: the value holds it, with a word */
		{ "[/a]\nA=1 # note\nB=/x#y\n", "/a", SCOPE("A=1 # note\0B=/x#y\0"),
		  "2 w the value of 'A' holds ' #', which is part of it: "
		  "varsym.conf has no end-of-line comments\n" },
		{ "[/a]\nA=\"/x y\"\nB='\n", "/a", SCOPE("A=\"/x y\"\0B='\0"),
		  "2 w the value of 'A' is in quotes, which are part of it\n" },
		/* a name set again: the last line wins, and that is said */
		{ "[/a]\nA=1\nB=2\nA=3\n", "/a", SCOPE("B=2\0A=3\0"),
		  "4 w 'A' is set on line 2 too: this line wins\n" },
		{ "[/a]\nA=1\n[/b]\nA=9\n[/a]\nA=3\nA=4\n", "/a", SCOPE("A=4\0"),
		  "6 w 'A' is set on line 2 too: this line wins\n"
		  "7 w 'A' is set on line 6 too: this line wins\n" },
		/* a broken header: said at every mount, its lines ignored */
		{ "[/a]\nA=1\n[b]\nB=2\n[/a]\nC=3\n", "/a", SCOPE("A=1\0C=3\0"),
		  "3 s a section is [/MOUNT/POINT]; the lines up to the next "
		  "one are ignored\n" },
		{ "[/b]\n[/a\nA=1\n", "/c", SCOPE(""),
		  "2 s a section is [/MOUNT/POINT]; the lines up to the next "
		  "one are ignored\n" },
		{ "[ /a ]\nA=1\n", "/a", SCOPE(""),
		  "1 s a section is [/MOUNT/POINT]; the lines up to the next "
		  "one are ignored\n" },
		{ "[/]\nR=/\n", "/", SCOPE("R=/\0"), "" },
		{ "", "/a", SCOPE(""), "" },
	};
	struct conf_reports r;
	size_t i, n, got;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const char *t = rows[i].text;
		size_t len = strlen(t);

		memset(&r, 0, sizeof(r));
		got = varsym_conf_section(t, len, rows[i].mount, out,
					  sizeof(out), conf_report, &r);
		check(got == rows[i].expect_len &&
		      !memcmp(out, rows[i].expect, got) &&
		      !strcmp(r.text, rows[i].reports),
		      "conf row %zu: %zu bytes, reports:\n%s", i, got, r.text);
	}
	/* past 1024 names: the lines after are skipped, each said */
	n = snprintf(big, sizeof(big), "[/a]\n");
	for (i = 0; i < VARSYM_SCOPE_ENTRIES_MAX + 2; i++)
		n += snprintf(big + n, sizeof(big) - n, "V%zu=x\n", i);
	memset(&r, 0, sizeof(r));
	got = varsym_conf_section(big, n, "/a", out, sizeof(out), conf_report,
				  &r);
	/* V0..V9=x: 5 bytes each, V10..V99 6, V100..V999 7, V1000.. 8 */
	check(got == 10 * 5 + 90 * 6 + 900 * 7 + 24 * 8,
	      "conf: 1026 names (%zu bytes)", got);
	check(!strcmp(r.text, "1026 s past 65536 bytes or 1024 names for one mount\n"
			      "1027 s past 65536 bytes or 1024 names for one mount\n"),
	      "conf: 1026 names: %s", r.text);
	/* a NUL byte ends nothing: the line is bad, the next one is read */
	memset(&r, 0, sizeof(r));
	got = varsym_conf_section("[/a]\nA=x\0y\nB=1\n", 15, "/a", out,
				  sizeof(out), conf_report, &r);
	check(got == 4 && !memcmp(out, "B=1", 4) &&
	      !strcmp(r.text, "2 s a NUL byte\n"), "conf: a NUL byte: %s",
	      r.text);
	/* no report hook: the same block, nothing said */
	got = varsym_conf_section("[/a]\n1A=1\nB=2\n", 15, "/a", out,
				  sizeof(out), NULL, NULL);
	check(got == 4 && !memcmp(out, "B=2", 4), "conf: no report hook");
	varsym_conf_note(big, 64, "/etc/varsym.conf", 4, true, "why");
	check(!strcmp(big, "/etc/varsym.conf:4: why (line skipped)"),
	      "conf note: %s", big);
	varsym_conf_note(big, 64, "/etc/varsym.conf", 5, false, "why");
	check(!strcmp(big, "/etc/varsym.conf:5: warning: why"),
	      "conf note: %s", big);
}

/* Lengths around PATH_MAX - 1, and getenv() failures passed through. */
static void test_limits(void)
{
	static struct varsym_opts o;
	static char env[2 * VARSYM_PATH_MAX], tmpl[VARSYM_PATH_MAX + 2];
	static char out[VARSYM_PATH_MAX];
	struct test_env e = { .env = env };
	struct varsym_caller c = { .getenv = test_getenv, .ctx = &e };
	char msg[VARSYM_MSG_MAX];
	ssize_t got;

	/* a value of 4095 bytes fits, 4096 does not */
	memcpy(env, "U=", 2);
	memset(env + 2, 'v', VARSYM_PATH_MAX);
	e.len = 2 + VARSYM_PATH_MAX - 1;
	parse_opts("U", &o, msg);
	got = varsym_resolve_seed(&o, &c, out, sizeof(out));
	check(got == VARSYM_PATH_MAX - 1 && strlen(out) == (size_t)got,
	      "seed: a value of PATH_MAX - 1 bytes resolves (%s)",
	      err_name(got));
	e.len = 2 + VARSYM_PATH_MAX;
	got = varsym_resolve_seed(&o, &c, out, sizeof(out));
	check(got == -ENAMETOOLONG, "seed: a value of PATH_MAX bytes: %s",
	      err_name(got));
	parse_opts("U,prefix=/p/", &o, msg);
	e.len = 2 + VARSYM_PATH_MAX - 4;
	got = varsym_resolve_seed(&o, &c, out, sizeof(out));
	check(got == VARSYM_PATH_MAX - 1, "seed: prefix + value = 4095: %s",
	      err_name(got));
	e.len++;
	got = varsym_resolve_seed(&o, &c, out, sizeof(out));
	check(got == -ENAMETOOLONG, "seed: prefix + value = 4096: %s",
	      err_name(got));

	/* templates: 4095 bytes are a template, 4096 are not */
	memset(tmpl, 't', VARSYM_PATH_MAX);
	check(varsym_template_check(tmpl, VARSYM_PATH_MAX - 1) == 0,
	      "a template of PATH_MAX - 1 bytes is valid");
	check(varsym_template_check(tmpl, VARSYM_PATH_MAX) == -EINVAL,
	      "a template of PATH_MAX bytes is refused");
	got = varsym_template_expand(tmpl, VARSYM_PATH_MAX - 1, &c, out,
				     sizeof(out));
	check(got == VARSYM_PATH_MAX - 1, "a 4095-byte literal expands");

	/* ${U}${U} with 3000 bytes each: too long */
	e.len = 2 + 3000;
	got = varsym_template_expand("${U}${U}", 8, &c, out, sizeof(out));
	check(got == -ENAMETOOLONG, "template: result too long: %s",
	      err_name(got));
	got = varsym_template_expand("${U:-x}", 7, &c, out, 3000);
	check(got == -ENAMETOOLONG, "template: value beyond the buffer: %s",
	      err_name(got));

	/* a 255-byte name in a template is fine, 256 is not */
	memcpy(tmpl, "${", 2);
	memset(tmpl + 2, 'N', VARSYM_NAME_MAX);
	memcpy(tmpl + 2 + VARSYM_NAME_MAX, ":-d}", 4);
	check(varsym_template_check(tmpl, VARSYM_NAME_MAX + 6) == 0,
	      "a 255-byte name in a template");
	memset(tmpl + 2, 'N', VARSYM_NAME_MAX + 1);
	memcpy(tmpl + 3 + VARSYM_NAME_MAX, ":-d}", 4);
	check(varsym_template_check(tmpl, VARSYM_NAME_MAX + 7) == -EINVAL,
	      "a 256-byte name in a template");

	/* errors of getenv() end the resolution unchanged */
	e.fail = -EFAULT;
	parse_opts("U,default=d", &o, msg);
	check(varsym_resolve_seed(&o, &c, out, sizeof(out)) == -EFAULT,
	      "seed: a getenv() error is passed through");
	check(varsym_template_expand("${U:-d}", 7, &c, out, sizeof(out)) ==
	      -EFAULT, "template: a getenv() error is passed through");
	c.secure = true;
	check(varsym_resolve_seed(&o, &c, out, sizeof(out)) == 1,
	      "seed: secure-exec never asks getenv()");
}

/* ---- auxiliary vectors (AT_SECURE), in both word sizes ---- */

/* Lays out pairs (type, value) in words of word bytes, as execve does. */
static size_t make_auxv(unsigned char *buf, size_t word,
			const unsigned long long *pairs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned long long v8 = pairs[i];
		unsigned int v4 = (unsigned int)pairs[i];

		memcpy(buf + i * word, word == 4 ? (void *)&v4 : (void *)&v8,
		       word);
	}
	return n * word;
}

static void test_auxv(void)
{
	/* AT_SYSINFO_EHDR, AT_PAGESZ, AT_UID, AT_SECURE, AT_RANDOM, AT_NULL */
	static const unsigned long long secure[] = {
		33, 0xf7f1c000, 6, 4096, 11, 1000, 23, 1, 25, 0xffd0c2bb, 0, 0,
	};
	static const unsigned long long plain[] = {
		33, 0xf7f1c000, 6, 4096, 11, 1000, 23, 0, 25, 0xffd0c2bb, 0, 0,
	};
	static const unsigned long long none[] = { 6, 4096, 0, 0 };
	static const unsigned long long unended[] = { 6, 4096, 11, 1000 };
	static const struct {
		const unsigned long long *pairs;
		size_t n;
		int want;
		const char *what;
	} rows[] = {
		{ secure, 12, 1, "AT_SECURE 1" },
		{ plain, 12, 0, "AT_SECURE 0" },
		{ none, 4, 0, "no AT_SECURE before AT_NULL" },
		{ unended, 4, -EINVAL, "no AT_NULL" },
	};
	unsigned char buf[256];
	size_t i, len, word;

	for (word = 4; word <= 8; word += 4) {
		for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
			len = make_auxv(buf, word, rows[i].pairs, rows[i].n);
			check(varsym_auxv_secure(buf, len, word) == rows[i].want,
			      "auxv, %zu-byte words, %s", word, rows[i].what);
		}
	}
	/*
	 * The bug both implementations had: a 32-bit program's vector read
	 * as 8-byte pairs.  (AT_SECURE, 1) then reads as one type word that
	 * matches nothing, and ordinary programs lose their variables.
	 */
	len = make_auxv(buf, 4, secure, 12);
	check(varsym_auxv_secure(buf, len, 8) != 1,
	      "a 32-bit secure vector read as 64-bit is not secure (the bug)");
	check(varsym_auxv_secure(buf, len, 4) == 1,
	      "a 32-bit secure vector read as 32-bit is secure");
	/* /proc/PID/auxv of a 32-bit program is padded to 16 bytes */
	len = make_auxv(buf, 4, plain, 12);
	memset(buf + len, 0, 8);
	check(varsym_auxv_secure(buf, len + 8, 4) == 0,
	      "a padded 32-bit vector");
	/* cut short inside a pair, unaligned, odd word sizes */
	len = make_auxv(buf + 1, 8, secure, 12);
	check(varsym_auxv_secure(buf + 1, len, 8) == 1, "unaligned vector");
	check(varsym_auxv_secure(buf + 1, 6 * 8 + 4, 8) == -EINVAL,
	      "a vector cut inside a pair has no AT_NULL");
	check(varsym_auxv_secure(buf, 0, 8) == -EINVAL, "an empty vector");
	check(varsym_auxv_secure(buf, len, 2) == -EINVAL, "2-byte words");
}

static void test_is_answer(void)
{
	static const struct {
		ssize_t result;
		bool answer;
	} rows[] = {
		{ 0, true }, { 17, true }, { -ENOENT, true }, { -EACCES, true },
		{ -ENAMETOOLONG, true }, { -EINVAL, true }, { -EFAULT, false },
		{ -EINTR, false }, { -ENOMEM, false }, { -E2BIG, false },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check(varsym_is_answer(rows[i].result) == rows[i].answer,
		      "is_answer(%s) != %d", err_name(rows[i].result),
		      rows[i].answer);
}

static void test_same_result(void)
{
	check(varsym_same_result(4, "/att", 4, "/att"), "same target");
	check(!varsym_same_result(4, "/att", 4, "/ucb"), "same length, other bytes");
	check(!varsym_same_result(4, "/att", 5, "/att2"), "other length");
	check(varsym_same_result(0, "", 0, "x"), "two empty targets");
	check(varsym_same_result(-EACCES, "a", -EACCES, "b"), "the same errno");
	check(!varsym_same_result(-EACCES, NULL, -ENOENT, NULL), "other errnos");
	check(!varsym_same_result(0, "", -ENOENT, NULL), "empty against ENOENT");
}

/* may_follow for test_interp_answer: its row's verdict, and a count */
struct follow_row {
	int verdict;
	int asked;
};

static int row_may_follow(void *ctx)
{
	struct follow_row *f = ctx;

	f->asked++;
	return f->verdict;
}

/* One row per outcome of the interpreter step, both implementations'. */
static void test_interp_answer(void)
{
	static const struct {
		const char *what;
		ssize_t n;		/* the caller's answer */
		const char *caller;
		ssize_t m;		/* the secure one */
		const char *secure;
		int verdict;		/* may_follow's */
		ssize_t want;
		const char *want_out;
		int asked;		/* whether may_follow was asked */
	} rows[] = {
		{ "the same answer stands, unasked", 4, "/sec", 4, "/sec", 0, 4, "/sec", 0 },
		{ "the same errno stands, unasked", -ENOENT, "", -ENOENT, "", 0, -ENOENT, "", 0 },
		{ "a different answer, the exec may follow", 4, "/att", 4, "/ucb", 1, 4, "/att", 1 },
		{ "a different answer, it may not: the secure one", 4, "/att", 4, "/ucb", 0, 4, "/ucb", 1 },
		{ "it may not, and the secure answer is an errno", 4, "/att", -EACCES, "", 0, -EACCES, "/att", 1 },
		{ "cannot tell now (RCU walk)", 4, "/att", 4, "/ucb", -ECHILD, -ECHILD, "/att", 1 },
		{ "no answer (a fatal signal) goes back unasked", -EINTR, "", 4, "/ucb", 0, -EINTR, "", 0 },
		{ "the caller's errno against a target, may not", -ENOENT, "", 5, "/dflt", 0, 5, "/dflt", 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct follow_row f = { .verdict = rows[i].verdict };
		char out[64];
		ssize_t got;

		snprintf(out, sizeof(out), "%s", rows[i].caller);
		got = varsym_interp_answer(out, rows[i].n, rows[i].secure,
					   rows[i].m, row_may_follow, &f);
		check(got == rows[i].want, "%s: %zd, not %zd", rows[i].what,
		      got, rows[i].want);
		if (got >= 0)
			check(!strcmp(out, rows[i].want_out), "%s: '%s', not '%s'",
			      rows[i].what, out, rows[i].want_out);
		check(f.asked == rows[i].asked, "%s: asked %d times",
		      rows[i].what, f.asked);
	}
}

/* One row per condition of the keep rule, both implementations'. */
static void test_may_keep(void)
{
	static const struct {
		const char *what;
		ssize_t result;
		unsigned int used;
		bool ruid_keyed, search, search_keyed, keep;
	} rows[] = {
		{ "an answer from the environment", 4, 0, false, false, false, true },
		{ "an errno that holds till the next exec", -ENOENT, 0, false, false, false, true },
		{ "no answer (no memory)", -ENOMEM, 0, true, false, false, false },
		{ "a built-in", 4, VARSYM_USED_BUILTIN, true, false, false, false },
		{ "a user scope, the key holds the real uid", 4, VARSYM_USED_USER, true, false, false, true },
		{ "a user scope, the key does not", 4, VARSYM_USED_USER, false, false, false, false },
		{ "a search, under its key", 4, 0, false, true, true, true },
		{ "a search without a key", 4, 0, true, true, false, false },
		{ "a built-in and a user scope", 4, VARSYM_USED_USER | VARSYM_USED_BUILTIN, true, false, false, false },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check(varsym_may_keep(rows[i].result, rows[i].used,
				      rows[i].ruid_keyed, rows[i].search,
				      rows[i].search_keyed) == rows[i].keep,
		      "may_keep: %s != %d", rows[i].what, rows[i].keep);
}

/* ---- the caller model: scans of a process's memory, as both hosts ---- */

#define PG 4096UL
#define MIB (1UL << 20)
#define MEM_SIZE (8 * MIB)
#define STRLEN_MAX (VARSYM_ARG_STRLEN_PAGES * PG)
#define ADDR64 0x7ffe00000000ULL	/* a 64-bit program's memory */
#define ADDR32 0x10000000ULL		/* a 32-bit program's */

/*
 * A process's memory: MEM_SIZE bytes at base, but for one page that cannot
 * be read, and errors to inject as the kernel's RCU budget (-ECHILD) or a
 * fatal signal (-EINTR) would give them.
 */
struct fake_mem {
	uint64_t base;
	unsigned char *bytes;
	size_t hole;		/* offset of the unreadable page; 0: none */
	bool partial;		/* reads copy what they can, as pread does */
	ssize_t read_err;	/* every read after err_after reads fails so */
	int page_err;		/* every next_page after err_after calls */
	unsigned long err_after, reads, pages;
	const char *buf;	/* the scan's window: reads stay in a page */
	bool crossed;
	uint64_t top;		/* the highest address read, plus one */
	size_t sizes[4];	/* the sizes of the first reads into buf */
	unsigned int nsizes;
};

/* How many bytes at addr can be read, up to n. */
static size_t fake_readable(const struct fake_mem *f, uint64_t addr,
			    size_t n)
{
	uint64_t off = addr - f->base;
	size_t k = 0;

	if (addr < f->base || off >= MEM_SIZE)
		return 0;
	while (k < n && off + k < MEM_SIZE) {
		if (f->hole && (off + k) / PG == f->hole / PG)
			break;
		k += PG - (off + k) % PG;
	}
	if (k > MEM_SIZE - off)
		k = MEM_SIZE - off;
	return k < n ? k : n;
}

static ssize_t fake_read(void *ctx, void *dst, unsigned long long addr,
			 size_t n)
{
	struct fake_mem *f = ctx;
	size_t k;

	if (f->read_err && ++f->reads > f->err_after)
		return f->read_err;
	if (dst == f->buf) {
		if (n && addr / PG != (addr + n - 1) / PG)
			f->crossed = true;
		if (f->nsizes < 4)
			f->sizes[f->nsizes++] = n;
	}
	k = fake_readable(f, addr, n);
	if (k < n && (!f->partial || !k))
		return -EFAULT;
	memcpy(dst, f->bytes + (addr - f->base), k);
	if (addr + k > f->top)
		f->top = addr + k;
	return k;
}

static int fake_next_page(void *ctx)
{
	struct fake_mem *f = ctx;

	if (f->page_err && ++f->pages > f->err_after)
		return f->page_err;
	return 0;
}

/* The two hosts' tunings, as kmod/caller.c and fuse/reader.c set them. */
#define KERNEL 1
#define DAEMON 2
static const struct host {
	const char *name;
	size_t buf_size;
	size_t ptr_batch;	/* pointers per read */
	bool partial;		/* pread's short reads, or all or nothing */
	bool next_page;
} hosts[] = {
	{ "kernel", 256, 1, false, true },
	{ "daemon", 4096, 64, true, false },
};

static const struct varsym_mem_ops fake_ops = {
	.read = fake_read, .next_page = fake_next_page,
};
static const struct varsym_mem_ops fake_ops_no_page = { .read = fake_read };

static void fake_init(struct fake_mem *f, unsigned char *bytes,
		      uint64_t base, size_t hole)
{
	memset(f, 0, sizeof(*f));
	f->bytes = bytes;
	f->base = base;
	f->hole = hole;
	memset(bytes, 0, MEM_SIZE);
}

/* len bytes of entries that are not A's, the last one's NUL at the end. */
static void fill(unsigned char *p, size_t len)
{
	size_t i;

	memset(p, 'x', len);
	for (i = 999; i < len; i += 1000)
		p[i] = '\0';
	if (len)
		p[len - 1] = '\0';
}

struct area_row {
	const char *what;
	size_t before;		/* bytes of other entries before A's */
	const char *entry;	/* A's entry */
	size_t entry_len;
	size_t after;		/* bytes of others after it */
	size_t hole;		/* an unreadable page, from the area's page */
	ssize_t read_err;
	int page_err;
	unsigned long err_after;
	unsigned int hosts;
	ssize_t want;
};

#define AREA_AT 100		/* the area's offset in its first page */
#define ENTRY(s) s, sizeof(s) - 1

static const struct area_row area_rows[] = {
	{ "a variable after 5 MiB of others is found", 5 * MIB,
	  ENTRY("A=found\0"), 0, 0, 0, 0, 0, KERNEL | DAEMON, 5 },
	{ "a variable past 6 MiB is absent", 6 * MIB,
	  ENTRY("A=found\0"), 0, 0, 0, 0, 0, KERNEL | DAEMON, -ENOENT },
	{ "a variable cut by the 6 MiB bound is absent", 6 * MIB - 4,
	  ENTRY("A=found\0"), 100, 0, 0, 0, 0, KERNEL | DAEMON, -ENOENT },
	{ "a variable ending at 6 MiB is found", 6 * MIB - 8,
	  ENTRY("A=found\0"), 100, 0, 0, 0, 0, KERNEL | DAEMON, 5 },
	{ "the last entry may lack its NUL", 10, ENTRY("A=found"), 0, 0,
	  0, 0, 0, KERNEL | DAEMON, 5 },
	{ "an unreadable page cuts the entry it ends", 2 * PG - AREA_AT - 3,
	  ENTRY("A=found\0"), 100, 2 * PG, 0, 0, 0, KERNEL | DAEMON,
	  -ENOENT },
	{ "entries before an unreadable page count", 10,
	  ENTRY("A=found\0"), 3 * PG, 2 * PG, 0, 0, 0, KERNEL | DAEMON, 5 },
	{ "entries after an unreadable page do not", 3 * PG,
	  ENTRY("A=found\0"), 0, 2 * PG, 0, 0, 0, KERNEL | DAEMON, -ENOENT },
	{ "-EINTR at a page boundary stops the scan", 5 * PG,
	  ENTRY("A=found\0"), 0, 0, 0, -EINTR, 2, KERNEL, -EINTR },
	{ "-ECHILD from a read stops the scan", 5 * PG,
	  ENTRY("A=found\0"), 0, 0, -ECHILD, 0, 3, KERNEL, -ECHILD },
	{ "an answer before a fatal signal stands", 10,
	  ENTRY("A=found\0"), 5 * PG, 0, 0, -EINTR, 0, KERNEL, 5 },
};

/* One scan as host h would run it; the scanner's result, or the error. */
static ssize_t scan_as(const struct host *h, struct fake_mem *f,
		       bool envp, uint64_t start, uint64_t end,
		       unsigned int ptr_size, char *value, size_t size)
{
	static char chunk[4096];
	static unsigned char ptrs[64 * 8];
	struct varsym_env_scan s;
	struct varsym_mem m = {
		.ops = h->next_page ? &fake_ops : &fake_ops_no_page,
		.ctx = f,
		.buf = chunk, .buf_size = h->buf_size,
		.ptrs = ptrs, .ptrs_size = h->ptr_batch * ptr_size,
		.page_size = PG,
	};
	int err;

	f->partial = h->partial;
	f->buf = chunk;
	varsym_env_scan_init(&s, "A", 1, value, size);
	err = envp ? varsym_scan_envp(&m, &s, start, ptr_size) :
		     varsym_scan_area(&m, &s, start, end);
	return err ? err : varsym_env_scan_result(&s);
}

static void test_scan_area(unsigned char *mem)
{
	char value[16];
	size_t i, j, len;

	for (i = 0; i < sizeof(area_rows) / sizeof(area_rows[0]); i++) {
		const struct area_row *r = &area_rows[i];

		for (j = 0; j < sizeof(hosts) / sizeof(hosts[0]); j++) {
			struct fake_mem f;
			uint64_t start = ADDR64 + AREA_AT;
			ssize_t n;

			if (!(r->hosts & (1 << j)))
				continue;
			fake_init(&f, mem, ADDR64, r->hole);
			f.read_err = r->read_err;
			f.page_err = r->page_err;
			f.err_after = r->err_after;
			fill(mem + AREA_AT, r->before);
			len = AREA_AT + r->before;
			fill(mem + AREA_AT, r->before);
			memcpy(mem + len, r->entry, r->entry_len);
			fill(mem + len + r->entry_len, r->after);
			len = r->before + r->entry_len + r->after;
			n = scan_as(&hosts[j], &f, false, start, start + len, 0,
				    value, sizeof(value));
			check(n == r->want &&
			      (n < 0 || !memcmp(value, "found", 5)),
			      "area, %s: %s: got %s", hosts[j].name, r->what,
			      err_name(n));
			check(!f.crossed && f.top <= start + VARSYM_ENV_MAX,
			      "area, %s: %s: read across a page or past 6 MiB",
			      hosts[j].name, r->what);
		}
	}
}

struct envp_row {
	const char *what;
	unsigned int ptr_size;
	uint64_t base;
	size_t nfill;		/* strings before A's... */
	size_t fill_len;	/* ...of this many bytes, NUL included */
	size_t ptrs_at;		/* where envp is; strings from str_at... */
	size_t str_at;
	size_t a_at;		/* ...and A's there, 0: right after them */
	bool null_first;	/* a NULL pointer before A's */
	size_t hole;
	ssize_t read_err;
	int page_err;
	unsigned long err_after;
	unsigned int hosts;
	ssize_t want;
};

#define BOTH (KERNEL | DAEMON)

static const struct envp_row envp_rows[] = {
	{ "a variable after 5 MiB of others is found", 8, ADDR64, 41,
	  128000, 0, PG, 0, false, 0, 0, 0, 0, BOTH, 5 },
	{ "a variable past 6 MiB is absent", 8, ADDR64, 50, 128000, 0, PG,
	  0, false, 0, 0, 0, 0, BOTH, -ENOENT },
	/* 48 strings of 131064 bytes and A's 8: 376 bytes left for 49 */
	{ "64-bit pointers count against the 6 MiB", 8, ADDR64, 48,
	  STRLEN_MAX - 8, 0, PG, 0, false, 0, 0, 0, 0, BOTH, -ENOENT },
	{ "32-bit pointers count for 4 bytes each", 4, ADDR32, 48,
	  STRLEN_MAX - 8, 0, PG, 0, false, 0, 0, 0, 0, BOTH, 5 },
	{ "a string of MAX_ARG_STRLEN bytes is taken", 8, ADDR64, 1,
	  STRLEN_MAX, 0, PG, 0, false, 0, 0, 0, 0, BOTH, 5 },
	{ "a string over MAX_ARG_STRLEN cuts the scan", 8, ADDR64, 1,
	  STRLEN_MAX + 1, 0, PG, 0, false, 0, 0, 0, 0, BOTH, -ENOENT },
	{ "an unreadable page mid-string cuts the scan", 8, ADDR64, 1, 100,
	  0, 2 * PG - 3, 5 * PG, false, 2 * PG, 0, 0, 0, BOTH, -ENOENT },
	{ "a string ending at an unreadable page counts", 8, ADDR64, 1,
	  100, 0, 2 * PG - 100, 5 * PG, false, 2 * PG, 0, 0, 0, BOTH, 5 },
	{ "a variable cut by an unreadable page is absent", 8, ADDR64, 0,
	  0, 0, 2 * PG - 3, 0, false, 2 * PG, 0, 0, 0, BOTH, -ENOENT },
	{ "an unreadable pointer ends the array", 8, ADDR64, 1, 100,
	  PG - 8, 4 * PG, 0, false, PG, 0, 0, 0, BOTH, -ENOENT },
	{ "the pointers before it count", 8, ADDR64, 1, 100, PG - 16,
	  4 * PG, 0, false, PG, 0, 0, 0, BOTH, 5 },
	{ "compat: 32-bit pointers at 32-bit addresses", 4, ADDR32, 3, 50,
	  0, PG, 0, false, 0, 0, 0, 0, BOTH, 5 },
	{ "a NULL pointer ends the array", 8, ADDR64, 2, 50, 0, PG, 0, true,
	  0, 0, 0, 0, BOTH, -ENOENT },
	{ "compat: a NULL pointer ends the array", 4, ADDR32, 2, 50, 0, PG,
	  0, true, 0, 0, 0, 0, BOTH, -ENOENT },
	{ "-EINTR between strings stops the scan", 8, ADDR64, 3, 50, 0, PG,
	  0, false, 0, 0, -EINTR, 1, KERNEL, -EINTR },
	{ "-EINTR inside a long string stops the scan", 8, ADDR64, 1,
	  3 * PG, 0, PG, 0, false, 0, 0, -EINTR, 0, KERNEL, -EINTR },
	{ "-ECHILD from a string's read stops the scan", 8, ADDR64, 3, 50,
	  0, PG, 0, false, 0, -ECHILD, 0, 1, KERNEL, -ECHILD },
	{ "-ECHILD from a pointer's read stops the scan", 8, ADDR64, 3, 50,
	  0, PG, 0, false, 0, -ECHILD, 0, 2, KERNEL, -ECHILD },
	{ "an answer before a fatal signal stands", 8, ADDR64, 0, 0, 0, PG,
	  0, false, 0, 0, -EINTR, 0, KERNEL, 5 },
};

/* Writes a pointer of size w at p, in the machine's byte order. */
static void put_ptr(unsigned char *p, uint64_t v, unsigned int w)
{
	uint32_t v4 = v;

	if (w == 4)
		memcpy(p, &v4, 4);
	else
		memcpy(p, &v, 8);
}

static void lay_out_envp(const struct envp_row *r, unsigned char *mem)
{
	unsigned char *ptr = mem + r->ptrs_at;
	size_t off = r->str_at, i;

	for (i = 0; i < r->nfill; i++, ptr += r->ptr_size) {
		memset(mem + off, 'x', r->fill_len - 1);
		memcpy(mem + off, "X=", 2);
		put_ptr(ptr, r->base + off, r->ptr_size);
		off += r->fill_len;
	}
	if (r->null_first)
		ptr += r->ptr_size;	/* mem is zeroed */
	if (r->a_at)
		off = r->a_at;
	memcpy(mem + off, "A=found", 8);
	put_ptr(ptr, r->base + off, r->ptr_size);
}

static void test_scan_envp(unsigned char *mem)
{
	char value[16];
	size_t i, j;

	for (i = 0; i < sizeof(envp_rows) / sizeof(envp_rows[0]); i++) {
		const struct envp_row *r = &envp_rows[i];

		for (j = 0; j < sizeof(hosts) / sizeof(hosts[0]); j++) {
			struct fake_mem f;
			ssize_t n;

			if (!(r->hosts & (1 << j)))
				continue;
			fake_init(&f, mem, r->base, r->hole);
			f.read_err = r->read_err;
			f.page_err = r->page_err;
			f.err_after = r->err_after;
			lay_out_envp(r, mem);
			n = scan_as(&hosts[j], &f, true, r->base + r->ptrs_at,
				    0, r->ptr_size, value, sizeof(value));
			check(n == r->want &&
			      (n < 0 || !memcmp(value, "found", 5)),
			      "envp, %s: %s: got %s", hosts[j].name, r->what,
			      err_name(n));
			check(!f.crossed, "envp, %s: %s: a read crossed a page",
			      hosts[j].name, r->what);
		}
	}
}

/* The daemon reads a string's first 256 bytes, then a page at a time. */
static void test_scan_tuning(unsigned char *mem)
{
	static const struct envp_row r = {
		"", 8, ADDR64, 1, 3 * PG, 0, PG + 100, 0, false, 0, 0, 0, 0,
		DAEMON, 0,
	};
	struct fake_mem f;
	char value[16];

	fake_init(&f, mem, ADDR64, 0);
	lay_out_envp(&r, mem);
	scan_as(&hosts[1], &f, true, ADDR64, 0, 8, value, sizeof(value));
	check(f.nsizes == 4 && f.sizes[0] == 256 &&
	      f.sizes[1] == PG - 100 - 256 && f.sizes[2] == PG &&
	      f.sizes[3] == PG,
	      "daemon: a string's reads are 256 bytes, then up to a page");
	fake_init(&f, mem, ADDR64, 0);
	lay_out_envp(&r, mem);
	scan_as(&hosts[0], &f, true, ADDR64, 0, 8, value, sizeof(value));
	check(f.nsizes == 4 && f.sizes[0] == 256 && f.sizes[1] == 256,
	      "kernel: a string's reads are 256 bytes");
}

static void test_scans(void)
{
	unsigned char *mem = malloc(MEM_SIZE);

	if (!mem)
		abort();
	test_scan_area(mem);
	test_scan_envp(mem);
	test_scan_tuning(mem);
	free(mem);
}

/* ---- the caller model: execve's numbers, word sizes, privileges ---- */

static void test_execve_calls(void)
{
	static const struct {
		enum varsym_abi abi;
		long nr;
		int want;
		unsigned int envp_arg, ptr_size;
	} rows[] = {
		{ VARSYM_ABI_X86_64, 59, 1, 2, 8 },
		{ VARSYM_ABI_X86_64, 322, 1, 3, 8 },
		{ VARSYM_ABI_X86_64, 11, 0, 0, 0 },		/* munmap */
		{ VARSYM_ABI_X86_64, VARSYM_X32_BIT | 520, 0, 0, 0 },
		{ VARSYM_ABI_IA32, 11, 1, 2, 4 },
		{ VARSYM_ABI_IA32, 358, 1, 3, 4 },
		{ VARSYM_ABI_IA32, 59, 0, 0, 0 },
		{ VARSYM_ABI_X32, VARSYM_X32_BIT | 520, 1, 2, 4 },
		{ VARSYM_ABI_X32, VARSYM_X32_BIT | 545, 1, 3, 4 },
		{ VARSYM_ABI_X32, VARSYM_X32_BIT | 59, 0, 0, 0 },
		{ VARSYM_ABI_X32, 520, 0, 0, 0 },
		{ VARSYM_ABI_X86, 59, 1, 2, 8 },
		{ VARSYM_ABI_X86, 11, 1, 2, 4 },	/* ia32, or munmap */
		{ VARSYM_ABI_X86, 358, 1, 3, 4 },
		{ VARSYM_ABI_X86, VARSYM_X32_BIT | 545, 1, 3, 4 },
		{ VARSYM_ABI_X86, 520, 0, 0, 0 },
		{ VARSYM_ABI_X86, 0, 0, 0, 0 },
		{ VARSYM_ABI_X86, -1, 0, 0, 0 },
		{ VARSYM_ABI_ARM32, 11, 1, 2, 4 },
		{ VARSYM_ABI_ARM32, 387, 1, 3, 4 },
		{ VARSYM_ABI_ARM32, 221, 0, 0, 0 },	/* arm64's execve */
		{ VARSYM_ABI_ARM32, 358, 0, 0, 0 },	/* ia32's execveat */
		{ VARSYM_ABI_NATIVE, VARSYM_NR_EXECVE, 1, 2, sizeof(long) },
		{ VARSYM_ABI_NATIVE, VARSYM_NR_EXECVEAT, 1, 3, sizeof(long) },
		{ VARSYM_ABI_NATIVE, -1, 0, 0, 0 },
		/* arm64's two ABIs at once: AArch32's 11 (arm64's listxattr) */
		{ VARSYM_ABI_ARM64, 11, 1, 2, 4 },
		{ VARSYM_ABI_ARM64, 387, 1, 3, 4 },
		{ VARSYM_ABI_ARM64, VARSYM_NR_EXECVE, 1, 2, sizeof(long) },
		{ VARSYM_ABI_ARM64, VARSYM_NR_EXECVEAT, 1, 3, sizeof(long) },
		{ VARSYM_ABI_ARM64, 358, 0, 0, 0 },	/* ia32's execveat */
		{ VARSYM_ABI_ARM64, -1, 0, 0, 0 },
		{ VARSYM_ABI_UNKNOWN, 59, -1, 0, 0 },
		{ VARSYM_ABI_UNKNOWN, 0, -1, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct varsym_execve call = { 0, 0 };
		int got = varsym_execve_call(rows[i].abi, rows[i].nr, &call);

		check(got == rows[i].want && (got != 1 ||
		      (call.envp_arg == rows[i].envp_arg &&
		       call.ptr_size == rows[i].ptr_size)),
		      "execve_call(abi %d, %ld) = %d, arg %u, %u-byte pointers",
		      rows[i].abi, rows[i].nr, got, call.envp_arg,
		      call.ptr_size);
	}
	/* int $0x80 from a 64-bit process: the upper half is anything */
	check(varsym_user_ptr(0xdeadbeef00401000ULL, 4) == 0x401000,
	      "a 32-bit ABI's pointer is its register's low half");
	check(varsym_user_ptr(0xdeadbeef00401000ULL, 8) ==
	      0xdeadbeef00401000ULL, "a 64-bit ABI's pointer is whole");
}

static void test_word_size(void)
{
	static const struct {
		uint64_t addr;
		unsigned int word;
	} rows[] = {
		{ 0xffffdfff, 4 },		/* ia32's TASK_SIZE - 1 */
		{ 0xffffffff, 4 },
		{ 0xffd00000, 4 },		/* a 32-bit stack */
		{ 0x100000000ULL, 8 },
		{ 0x7ffffffff000ULL, 8 },	/* x86-64's TASK_SIZE - 1 */
		{ 0x7ffc12345000ULL, 8 },	/* a 64-bit stack */
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check(varsym_word_size(rows[i].addr) == rows[i].word,
		      "word_size(%#llx) != %u",
		      (unsigned long long)rows[i].addr, rows[i].word);
}

/* ---- the exec rule (core/exec_rule.h) ---- */

/* Short names for the tables' cells. */
#define N VARSYM_NO
#define Y VARSYM_YES
#define U VARSYM_UNKNOWN
#define NOTHING VARSYM_GAINS_NOTHING
#define GAINS VARSYM_GAINS_PRIVILEGES
#define UNREAD VARSYM_CAPS_UNREAD
#define NONE VARSYM_ENV_NONE
#define AREA VARSYM_ENV_AREA
#define ENVP VARSYM_ENV_ENVP
#define SECURE VARSYM_ENV_SECURE
#define OUT VARSYM_EXEC_NONE
#define PROGRAM VARSYM_EXEC_PROGRAM
#define INTERP VARSYM_EXEC_INTERP
#define PRIV VARSYM_EXEC_PRIVILEGED
#define DOUBT VARSYM_EXEC_DOUBT

static void test_exec_file_privilege(void)
{
	static const struct {
		unsigned int mode;
		enum varsym_tri honours, caps;
		bool secureexec;
		enum varsym_privilege want;
		const char *why;
	} rows[] = {
		{ 0100755, Y, N, false, NOTHING, "plain file, no capabilities" },
		{ 0100755, Y, U, false, UNREAD, "plain file, capabilities unread" },
		{ 0100755, U, U, false, UNREAD, "the module: namespace unknown" },
		{ 0100755, Y, Y, false, GAINS, "file capabilities" },
		{ 0104755, Y, U, false, GAINS, "setuid" },
		{ 0104700, Y, U, false, GAINS, "setuid, whoever runs it" },
		{ 0104755, U, U, false, GAINS, "setuid, namespace unknown" },
		{ 0102755, Y, N, false, GAINS, "setgid, group execute" },
		{ 0102010, Y, N, false, GAINS, "setgid, group execute only" },
		{ 0102745, Y, N, false, NOTHING, "setgid without group execute" },
		{ 0102000, Y, N, false, NOTHING, "mandatory locking" },
		{ 0106755, Y, N, false, GAINS, "setuid and setgid" },
		{ 0101777, Y, N, false, NOTHING, "sticky" },
		{ 0104755, N, U, false, NOTHING, "setuid on a nosuid mount" },
		{ 0100755, N, Y, false, NOTHING, "capabilities on a nosuid mount" },
		{ 0104755, N, N, true, GAINS, "nosuid, but an LSM's secureexec" },
		{ 0100755, Y, N, true, GAINS, "an LSM's secureexec" },
		{ 0100755, U, Y, false, GAINS, "capabilities, namespace unknown" },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct varsym_exec_file f = {
			.mode = rows[i].mode, .honours_ids = rows[i].honours,
			.caps = rows[i].caps, .secureexec = rows[i].secureexec,
		};

		check(varsym_exec_file_privilege(&f) == rows[i].want,
		      "exec_file_privilege: %s (mode %#o)", rows[i].why,
		      rows[i].mode);
	}
}

static void test_exec_may_run(void)
{
	check(varsym_exec_may_run(false, false), "ordinary exec runs");
	check(varsym_exec_may_run(false, true), "setuid exec, no walk followed");
	check(varsym_exec_may_run(true, false),
	      "unprivileged exec whose loader followed its caller runs");
	check(!varsym_exec_may_run(true, true),
	      "an exec made privileged after its loader followed its caller");
}

/*
 * One row per fact set each layer can produce (the module; the daemon
 * with its exec hooks, without them, serving only its owner) and per
 * place in an execve: where the variables come from, and what is kept.
 */
static void test_walk_plan(void)
{
	static const struct {
		const char *layer;
		bool kthread;
		enum varsym_tri secure;
		enum varsym_exec_phase exec;
		bool envp_known, serves_others;
		enum varsym_env_from from;
		bool keep, check;
	} rows[] = {
		/* the module: every mount serves others, AT_SECURE known */
		{ "kernel", true, N, OUT, false, true, NONE, false, false },
		{ "kernel", false, N, OUT, false, true, AREA, true, false },
		{ "kernel", false, Y, OUT, false, true, SECURE, true, false },
		{ "kernel", false, Y, PROGRAM, true, true, SECURE, false, false },
		{ "kernel", false, N, PROGRAM, true, true, ENVP, false, false },
		{ "kernel", false, N, PROGRAM, false, true, AREA, false, false },
		{ "kernel", false, N, INTERP, true, true, ENVP, false, true },
		{ "kernel", false, N, INTERP, false, true, AREA, false, true },
		{ "kernel", false, N, PRIV, true, true, SECURE, false, false },
		{ "kernel", false, N, DOUBT, true, true, SECURE, false, false },
		/* the daemon with its exec hooks, serving every user */
		{ "hooks", false, N, OUT, false, true, AREA, true, false },
		{ "hooks", false, U, OUT, false, true, SECURE, false, false },
		{ "hooks", false, Y, INTERP, true, true, SECURE, false, false },
		{ "hooks", false, N, PROGRAM, true, true, ENVP, false, false },
		{ "hooks", false, N, INTERP, true, true, ENVP, false, true },
		{ "hooks", false, N, PRIV, true, true, SECURE, false, false },
		{ "hooks", false, N, DOUBT, true, true, SECURE, false, false },
		{ "hooks", true, U, DOUBT, false, true, NONE, false, false },
		/* without them: inside an execve cannot be placed */
		{ "syscall", false, N, OUT, false, true, AREA, true, false },
		{ "syscall", false, N, DOUBT, true, true, SECURE, false, false },
		{ "syscall", false, N, DOUBT, false, true, SECURE, false, false },
		{ "syscall", false, U, DOUBT, false, true, SECURE, false, false },
		/* serving only its owner: doubt is the caller's own choice */
		{ "owner", false, N, OUT, false, false, AREA, true, false },
		{ "owner", false, N, DOUBT, true, false, ENVP, false, false },
		{ "owner", false, N, DOUBT, false, false, AREA, false, false },
		{ "owner", false, U, OUT, false, false, SECURE, false, false },
		{ "owner", false, Y, OUT, false, false, SECURE, true, false },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct varsym_walk_facts f = {
			.kthread = rows[i].kthread, .secure = rows[i].secure,
			.exec = rows[i].exec, .envp_known = rows[i].envp_known,
			.serves_others = rows[i].serves_others,
		};
		struct varsym_walk w = varsym_walk_plan(&f);

		check(w.from == rows[i].from && w.keep == rows[i].keep &&
		      w.check_interp == rows[i].check,
		      "walk_plan row %zu (%s): from %d keep %d check %d, "
		      "want %d %d %d", i, rows[i].layer, w.from, w.keep,
		      w.check_interp, rows[i].from, rows[i].keep,
		      rows[i].check);
	}
}

#undef N
#undef Y
#undef U
#undef NOTHING
#undef GAINS
#undef UNREAD
#undef NONE
#undef AREA
#undef ENVP
#undef SECURE
#undef OUT
#undef PROGRAM
#undef INTERP
#undef PRIV
#undef DOUBT

/* ---- one home for what every implementation does alike ---- */

static void test_opts_text(void)
{
	static const struct {
		const char *options;
		const char *text;
	} rows[] = {
		{ "UNIVERSE", "var=UNIVERSE" },
		{ "UNIVERSE,default=/ucb", "var=UNIVERSE,default=/ucb" },
		{ "default=d,prefix=/u/,var=V", "var=V,prefix=/u/,default=d" },
		{ "", "" },
		{ "mode=1777", "mode=1777" },
		{ "uid=1000,gid=100,mode=700", "uid=1000,gid=100,mode=700" },
	};
	struct varsym_opts o;
	char msg[VARSYM_MSG_MAX], text[VARSYM_OPTS_TEXT_MAX];
	size_t i, n;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		parse_opts(rows[i].options, &o, msg);
		n = varsym_opts_text(&o, text, sizeof(text));
		check(!strcmp(text, rows[i].text) && n == strlen(text),
		      "opts_text(\"%s\") = \"%s\", not \"%s\"",
		      rows[i].options, text, rows[i].text);
		check(varsym_opts_text_len(&o) == n,
		      "opts_text_len(\"%s\") = %zu, not %zu",
		      rows[i].options, varsym_opts_text_len(&o), n);
	}
	parse_opts("UNIVERSE,default=/ucb", &o, msg);
	n = varsym_opts_text(&o, text, 8);
	check(n == 7 && !strcmp(text, "var=UNI"),
	      "opts_text cut to 8 bytes: \"%s\" (%zu)", text, n);
	/* the longest options fit VARSYM_OPTS_TEXT_MAX */
	varsym_opts_init(&o);
	memset(o.var, 'V', VARSYM_NAME_MAX);
	o.var_len = VARSYM_NAME_MAX;
	memset(o.prefix, 'p', VARSYM_PATH_MAX / 2);
	o.prefix_len = VARSYM_PATH_MAX / 2;
	memset(o.dflt, 'd', VARSYM_PATH_MAX / 2 - 1);
	o.dflt_len = VARSYM_PATH_MAX / 2 - 1;
	o.given = VARSYM_OPT_VAR | VARSYM_OPT_PREFIX | VARSYM_OPT_DEFAULT;
	n = varsym_opts_text(&o, text, sizeof(text));
	check(n == strlen("var=,prefix=,default=") + VARSYM_NAME_MAX +
	      VARSYM_PATH_MAX - 1, "the longest options text is whole (%zu)", n);
	check(varsym_opts_text_len(&o) == n,
	      "opts_text_len of the longest text: %zu", varsym_opts_text_len(&o));
}

static void test_mount_only(void)
{
	static const struct {
		const char *word;
		bool mount_only;
	} rows[] = {
		{ "defaults", true }, { "noauto", true }, { "nofail", true },
		{ "_netdev", true }, { "x-systemd.automount", true },
		{ "relatime", true }, { "user", true }, { "rw", false },
		{ "nosuid", false }, { "allow_other", false },
		{ "fsname", false }, { "UNIVERSE", false },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check(varsym_opt_mount_only(rows[i].word) == rows[i].mount_only,
		      "mount_only(%s) != %d", rows[i].word,
		      rows[i].mount_only);
}

static void test_link_target(void)
{
	struct test_env e = { .env = "V=x", .len = 4 };
	struct varsym_caller c = { .getenv = test_getenv, .ctx = &e };
	struct varsym_opts o;
	char msg[VARSYM_MSG_MAX], out[VARSYM_PATH_MAX];

	parse_opts("V,prefix=/p/", &o, msg);
	check(varsym_link_target(&o, NULL, 0, &c, out, sizeof(out)) == 4 &&
	      !strcmp(out, "/p/x"), "link_target, seed: %s", out);
	check(varsym_link_target(&o, "/t/${V}", 7, &c, out, sizeof(out)) == 4 &&
	      !strcmp(out, "/t/x"), "link_target, template: %s", out);
}

/* ---- search mode ---- */

/* The probe: a path is "found" when it is in the list; records the tries. */
struct test_probe {
	const char *found[4];
	int fail_at;		/* this try returns -EINTR; 0: none */
	int tries;
	char last[VARSYM_PATH_MAX];
};

static int test_probe_fn(void *ctx, const char *path)
{
	struct test_probe *p = ctx;
	size_t i;

	p->tries++;
	snprintf(p->last, sizeof(p->last), "%s", path);
	if (p->fail_at && p->tries == p->fail_at)
		return -EINTR;
	for (i = 0; i < 4 && p->found[i]; i++)
		if (!strcmp(p->found[i], path))
			return 1;
	return 0;
}

static ssize_t search(const char *opts, const char *env, bool secure,
		      const char *system, struct test_probe *p,
		      const char *name, char *out)
{
	static char value[VARSYM_SEARCH_VALUE_MAX];
	static char block[2 * VARSYM_SEARCH_VALUE_MAX];
	struct test_env e = { .env = block, .len = strlen(env) + 1 };
	struct varsym_caller c = {
		.getenv = test_getenv, .ctx = &e, .secure = secure,
		.system_scope = system,
		.system_scope_len = system ? strlen(system) + 1 : 0,
	};
	char msg[VARSYM_MSG_MAX];
	struct varsym_opts o;

	char *nl;

	/* env: entries separated by newlines */
	snprintf(block, sizeof(block), "%s", env);
	for (nl = block; (nl = strchr(nl, '\n'));)
		*nl = '\0';
	if (parse_opts(opts, &o, msg))
		return -1000;
	return varsym_search(&o, &c, name, strlen(name), test_probe_fn, p,
			     value, out, VARSYM_PATH_MAX);
}

static void test_search_options(void)
{
	static const struct {
		const char *opts, *error;	/* NULL: accepted */
	} rows[] = {
		{ "search", NULL },
		{ "search=MYPATH,fallback=/a:/b/", NULL },
		{ "search,fallback=/a:bin", "entry 'bin' is not an absolute path" },
		{ "search,fallback=/a::/b", "entry '' is not an absolute path" },
		{ "search,fallback=", "empty value in 'fallback='" },
		{ "fallback=/bin", "applies only to search mode" },
		{ "search,U", "'search=PATH' makes this a search mount" },
		{ "U,search", "variable given twice" },
		{ "search=1X", "invalid variable name in 'search=1X'" },
		{ "search,search=P", "'search' given twice" },
		{ "search,prefix=/p", "applies only to seed mode" },
		{ "search,mode=700", "applies only to template mode" },
		{ "var=search", NULL },
	};
	char msg[VARSYM_MSG_MAX], text[VARSYM_OPTS_TEXT_MAX];
	char list[16 + 5 * VARSYM_SEARCH_FALLBACK_MAX];
	struct varsym_opts o;
	size_t i;
	int ret;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		ret = parse_opts(rows[i].opts, &o, msg);
		if (!rows[i].error)
			check(!ret, "search options '%s': %s", rows[i].opts,
			      msg);
		else
			check(ret == -EINVAL && strstr(msg, rows[i].error),
			      "search options '%s': got '%s'", rows[i].opts,
			      msg);
	}
	/* fallback=: 256 directories at most, whatever VAR's bound */
	strcpy(list, "search,fallback=/0");
	for (i = 1; i < VARSYM_SEARCH_FALLBACK_MAX; i++)
		sprintf(list + strlen(list), ":/%zu", i);
	check(!parse_opts(list, &o, msg), "256 fallback directories: %s",
	      msg);
	strcat(list, ":/x");
	check(parse_opts(list, &o, msg) == -EINVAL &&
	      strstr(msg, "'fallback=' has more than 256 directories"),
	      "257 fallback directories: %s", msg);
	parse_opts("search,fallback=/a:/b", &o, msg);
	varsym_opts_text(&o, text, sizeof(text));
	check(!strcmp(text, "search=PATH,fallback=/a:/b"), "search text: %s",
	      text);
	parse_opts("var=search", &o, msg);
	check(varsym_opts_seed_mode(&o) && !varsym_opts_search_mode(&o),
	      "var=search is a seed variable");
}

static void test_search(void)
{
	struct test_probe p = { .found = { "/f/sh", "/p/sh", "/sh" } };
	char out[VARSYM_PATH_MAX], *env;
	ssize_t n;
	size_t i;

	n = search("search,fallback=/f", "PATH=/p", false, NULL, &p, "sh", out);
	check(n == 5 && !strcmp(out, "/p/sh"), "search: PATH first: %s", out);
	n = search("search,fallback=/f", "PATH=/q", false, NULL, &p, "sh", out);
	check(n == 5 && !strcmp(out, "/f/sh"), "search: then fallback: %s", out);
	n = search("search,fallback=/f", "PATH=/q", false, NULL, &p, "zz", out);
	check(n == -ENOENT, "search: found nowhere: %zd", n);
	p.tries = 0;
	n = search("search,fallback=/f", "PATH=::rel:./p:/q/", false, NULL, &p,
		   "zz", out);
	check(n == -ENOENT && p.tries == 2,
	      "search: empty and relative entries skipped: %d tries", p.tries);
	n = search("search,fallback=/f", "PATH=/p///", false, NULL, &p, "sh",
		   out);
	check(n == 5 && !strcmp(out, "/p/sh"), "search: trailing slashes: %s",
	      out);
	n = search("search,fallback=/", "", false, NULL, &p, "sh", out);
	check(n == 3 && !strcmp(out, "/sh"), "search: '/' gives /NAME: %s", out);
	/* secure: the system scope's PATH, never the environment's */
	n = search("search,fallback=/f", "PATH=/p", true, NULL, &p, "sh", out);
	check(n == 5 && !strcmp(out, "/f/sh"), "search: secure: %s", out);
	n = search("search,fallback=/x", "PATH=/f", true, "PATH=/p", &p, "sh",
		   out);
	check(n == 5 && !strcmp(out, "/p/sh"), "search: secure, system: %s",
	      out);
	n = search("search=MYPATH", "PATH=/f\nMYPATH=/p", false, NULL, &p,
		   "sh", out);
	check(n == 5 && !strcmp(out, "/p/sh"), "search=MYPATH: %s", out);
	/* names never searched */
	n = search("search,fallback=/", "", false, NULL, &p, "..", out);
	check(n == -ENOENT, "search: '..' is no name");
	n = search("search,fallback=/", "", false, NULL, &p, "a/sh", out);
	check(n == -ENOENT, "search: a name with '/' is no name");
	/* a probe's error ends the search */
	p.tries = 0;
	p.fail_at = 1;
	n = search("search,fallback=/f", "PATH=/q", false, NULL, &p, "sh", out);
	check(n == -EINTR && p.tries == 1, "search: a probe's error ends it");
	p.fail_at = 0;
	/* bounds: 1024 entries, then the fallback */
	env = malloc(8 + 1100 * 3 + 16);
	strcpy(env, "PATH=");
	for (i = 0; i < 1100; i++)
		strcat(env, i < 1099 ? "/q:" : "/p");
	p.tries = 0;
	n = search("search,fallback=/f", env, false, NULL, &p, "sh", out);
	check(n == 5 && !strcmp(out, "/f/sh") && p.tries == 1025,
	      "search: 1024 entries of PATH, then the fallback: %s, %d tries",
	      out, p.tries);
	free(env);
	/* a Nix shell's PATH: 80 entries, 9 KiB, the last one searched */
	env = malloc(8 + 80 * 120);
	strcpy(env, "PATH=");
	for (i = 0; i < 79; i++)
		sprintf(env + strlen(env), "/nix/store/%0100zu-pkg/bin:", i);
	strcat(env, "/p");
	p.tries = 0;
	n = search("search", env, false, NULL, &p, "sh", out);
	check(strlen(env) > 9000 && n == 5 && !strcmp(out, "/p/sh") &&
	      p.tries == 80, "search: a 9 KiB PATH's 80th entry: %zd, %d tries",
	      n, p.tries);
	free(env);
	/* a value cut at 32768 bytes: 42-byte entries, 780 whole in them */
	env = malloc(VARSYM_SEARCH_VALUE_MAX + 64);
	strcpy(env, "PATH=");
	for (i = 0; strlen(env) - 5 < VARSYM_SEARCH_BYTES_MAX - 3; i++)
		strcat(env, "/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq:");
	strcat(env, "/p:/p");
	p.tries = 0;
	n = search("search", env, false, NULL, &p, "sh", out);
	check(n == -ENOENT && p.tries == (VARSYM_SEARCH_BYTES_MAX + 1) / 42,
	      "search: the value's first 32768 bytes only: %zd, %d tries of %zu",
	      n, p.tries, i);
	/* a directory ending at byte 32768 is whole: the next byte is ':' */
	strcpy(env, "PATH=");
	for (i = 0; i < 700; i++)
		strcat(env, "/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq:");
	strcat(env, "/");
	memset(env + strlen(env), 'y', VARSYM_SEARCH_BYTES_MAX - 700 * 42 - 1);
	env[5 + VARSYM_SEARCH_BYTES_MAX] = '\0';
	strcat(env, ":/p");
	p.tries = 0;
	n = search("search", env, false, NULL, &p, "sh", out);
	check(n == -ENOENT && p.tries == 701 && p.last[1] == 'y',
	      "search: a directory ending at byte 32768 is searched: %zd, %d",
	      n, p.tries);
	/* one byte longer, it is not */
	env[5 + VARSYM_SEARCH_BYTES_MAX] = 'y';
	env[5 + VARSYM_SEARCH_BYTES_MAX + 1] = '\0';
	strcat(env, ":/p");
	p.tries = 0;
	n = search("search", env, false, NULL, &p, "sh", out);
	check(n == -ENOENT && p.tries == 700,
	      "search: a directory ending at byte 32769 is not: %zd, %d", n,
	      p.tries);
	free(env);
}

/* What a search takes of a value, as varsym explain tells it. */
static void test_search_span(void)
{
	struct varsym_search_span sp;
	char *v = malloc(2 * VARSYM_SEARCH_VALUE_MAX);
	size_t i;

	strcpy(v, "::rel:/a:./b:/b/");
	varsym_search_span(v, strlen(v), &sp);
	check(sp.len == strlen(v) && sp.dirs == 2 && sp.all_dirs == 2 &&
	      !sp.dirs_cut && !sp.bytes_cut, "span: a short PATH whole");
	v[0] = '\0';
	for (i = 0; i < 1500; i++)
		strcat(v, i ? ":/q" : "/q");
	varsym_search_span(v, strlen(v), &sp);
	check(sp.len == 1024 * 3 - 1 && sp.dirs == 1024 &&
	      sp.all_dirs == 1500 && sp.dirs_cut && !sp.bytes_cut,
	      "span: 1500 entries, 1024 searched: %zu, %u of %u", sp.len,
	      sp.dirs, sp.all_dirs);
	v[0] = '\0';
	for (i = 0; i < 1000; i++)
		strcat(v, "/qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq:");
	varsym_search_span(v, strlen(v), &sp);
	check(sp.len == 780 * 42 && sp.dirs == 780 && sp.all_dirs == 1000 &&
	      !sp.dirs_cut && sp.bytes_cut,
	      "span: 42,000 bytes, 32768 searched: %zu, %u of %u", sp.len,
	      sp.dirs, sp.all_dirs);
	/* the file systems give the buffer's bytes only: the same span */
	varsym_search_span(v, VARSYM_SEARCH_VALUE_MAX, &sp);
	check(sp.len == 780 * 42 && sp.dirs == 780 && sp.bytes_cut,
	      "span: the buffer's bytes give the same cut");
	free(v);
}

/*
 * The FUSE mount's exec mode: what the daemon says is what varsym
 * explain reads back, for every mode, with or without a why; a name
 * that only starts like one is none.
 */
static void test_exec_mode(void)
{
	static const struct {
		const char *said;
		int mode;
	} rows[] = {
		{ "exec hooks: the execve rule, privileged execs secure",
		  VARSYM_EXECMODE_HOOKS },
		{ "exec hooks: x (3 execs whose state ...)",
		  VARSYM_EXECMODE_HOOKS },
		{ "syscall only: every walk inside an execve secure (EPERM)",
		  VARSYM_EXECMODE_SYSCALL_ONLY },
		{ "owner only: every walk follows the caller",
		  VARSYM_EXECMODE_OWNER_ONLY },
		{ "syscall only", -1 },
		{ "syscall onlyx: y", -1 },
		{ "exec hook: x", -1 },
		{ "", -1 },
	};
	char buf[256];
	unsigned int i;
	int m;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		check(varsym_exec_mode_of(rows[i].said) == rows[i].mode,
		      "exec mode of '%s': %d, not %d", rows[i].said,
		      varsym_exec_mode_of(rows[i].said), rows[i].mode);
	for (m = 0; m < VARSYM_EXECMODES; m++) {
		check(varsym_exec_modes[m].key && varsym_exec_modes[m].what,
		      "exec mode %d has no words", m);
		varsym_exec_mode_say(buf, sizeof(buf), m, NULL);
		check(varsym_exec_mode_of(buf) == m, "'%s' reads back as %d",
		      buf, varsym_exec_mode_of(buf));
		varsym_exec_mode_say(buf, sizeof(buf), m, "no BPF LSM");
		check(varsym_exec_mode_of(buf) == m &&
		      !strcmp(buf + strlen(buf) - 12, "(no BPF LSM)"),
		      "'%s' with a why reads back as %d", buf,
		      varsym_exec_mode_of(buf));
		/* only a mode that loses something says what */
		check(!varsym_exec_modes[m].runs ==
		      (m != VARSYM_EXECMODE_SYSCALL_ONLY) &&
		      !varsym_exec_modes[m].runs_search ==
		      (m != VARSYM_EXECMODE_SYSCALL_ONLY),
		      "exec mode %d's consequences", m);
	}
}

int main(void)
{
	test_names();
	test_env();
	test_env_cut();
	test_env_large();
	test_options();
	test_options_limits();
	run_rows(seed_rows, sizeof(seed_rows) / sizeof(seed_rows[0]), true);
	test_scopes();
	test_scope_edit();
	test_conf();
	run_rows(template_rows,
		 sizeof(template_rows) / sizeof(template_rows[0]), false);
	test_limits();
	test_auxv();
	test_is_answer();
	test_same_result();
	test_interp_answer();
	test_may_keep();
	test_scans();
	test_execve_calls();
	test_word_size();
	test_exec_file_privilege();
	test_exec_may_run();
	test_walk_plan();
	test_opts_text();
	test_mount_only();
	test_link_target();
	test_search_options();
	test_search();
	test_search_span();
	test_exec_mode();
	return report();
}

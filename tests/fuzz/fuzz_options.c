// SPDX-License-Identifier: GPL-2.0-only
/*
 * fuzz_options.c - libFuzzer target: the mount-option parser.
 *
 * Input: an option string, split on commas and at the first '=' as mount(8)
 * and the kernel do.  Whatever it holds: a failure leaves a message naming
 * the problem; a success shows options that, parsed again, give the same
 * options (what mountinfo shows can be mounted again).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "varsym_core.h"

struct shown {
	char text[4 * VARSYM_PATH_MAX];
	size_t len;
};

static void show(void *ctx, const char *key, const char *value)
{
	struct shown *s = ctx;
	int n = snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s%s=%s",
			 s->len ? "," : "", key, value);

	if (n < 0 || (size_t)n >= sizeof(s->text) - s->len)
		abort();	/* the text is bounded: it must fit */
	s->len += n;
}

/* Parses "a,b=c" into o; 0, or -EINVAL with a message. */
static int parse(char *opts, struct varsym_opts *o, char *msg)
{
	char *save = NULL, *tok;
	int ret;

	varsym_opts_init(o);
	for (tok = strtok_r(opts, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq)
			*eq++ = '\0';
		msg[0] = '\0';
		ret = varsym_opts_parse_one(o, tok, eq, msg, VARSYM_MSG_MAX);
		if (ret < 0) {
			if (ret != -EINVAL || !msg[0] ||
			    strlen(msg) >= VARSYM_MSG_MAX)
				abort();
			return ret;
		}
		if (ret != 0 && ret != VARSYM_OPT_FOREIGN)
			abort();
	}
	msg[0] = '\0';
	ret = varsym_opts_finish(o, msg, VARSYM_MSG_MAX);
	if (ret && (ret != -EINVAL || !msg[0]))
		abort();
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct varsym_opts a, b;
	static struct shown s1, s2;
	char msg[VARSYM_MSG_MAX], *text;

	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = '\0';
	if (parse(text, &a, msg) == 0) {
		s1.len = 0;
		s1.text[0] = '\0';
		varsym_opts_show(&a, show, &s1);
		if (parse(s1.text, &b, msg) != 0)
			abort();
		s1.len = 0;
		s1.text[0] = '\0';
		varsym_opts_show(&a, show, &s1);
		s2.len = 0;
		s2.text[0] = '\0';
		varsym_opts_show(&b, show, &s2);
		if (strcmp(s1.text, s2.text))
			abort();
	}
	free(text);
	return 0;
}

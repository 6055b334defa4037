// SPDX-License-Identifier: GPL-2.0-only
/*
 * caller.c - the caller model, one for both implementations.
 *
 * What a link's resolution needs to know of the process walking it: its
 * environment, scanned in its own memory within the bounds execve(2) sets,
 * whichever way the host reads that memory (the kernel's user copies, the
 * daemon's reader processes); which system call is execve in which ABI;
 * the word size of its program; and whether a file it executes gains
 * privileges.  The hosts only do the I/O, so the two cannot drift apart.
 */
#include "internal.h"

/* scan_string()'s ends besides 0 (next string) and -errno (stop) */
#define STRING_DONE 1		/* the scanner has its answer */
#define STRING_CUT 2		/* unreadable, or execve would refuse it */

static size_t min_size(size_t a, unsigned long long b)
{
	return b < a ? (size_t)b : a;
}

/* Bytes from addr to the end of its page. */
static size_t page_room(const struct varsym_mem *m, unsigned long long addr)
{
	return m->page_size - (size_t)(addr & (m->page_size - 1));
}

static bool page_start(const struct varsym_mem *m, unsigned long long addr)
{
	return !(addr & (m->page_size - 1));
}

static int next_page(const struct varsym_mem *m)
{
	return m->ops->next_page ? m->ops->next_page(m->ctx) : 0;
}

/**
 * varsym_scan_area - feed a scanner the exec-time environment area
 * @m: the process's memory
 * @s: the scanner, initialised
 * @start: the area's first byte
 * @end: the byte after its last, or a bound no area reaches where the
 *	host knows none (the daemon: a read of 0 ends the area)
 *
 * Reads at most VARSYM_ENV_MAX bytes (only prctl(PR_SET_MM) makes a bigger
 * area, cut there), in reads of at most m->buf_size bytes that never cross
 * a page, calling m->ops->next_page at every page boundary.  A page that
 * cannot be read ends the area: the entry it cuts short does not count,
 * nor anything after it.
 *
 * Return: 0, then varsym_env_scan_result() holds the answer; or an error
 * of m->ops other than -EFAULT (-ECHILD, -EINTR), as it came.
 */
int varsym_scan_area(const struct varsym_mem *m, struct varsym_env_scan *s,
		     unsigned long long start, unsigned long long end)
{
	unsigned long long pos = start;
	unsigned long long stop = start + min_size(VARSYM_ENV_MAX, end - start);
	ssize_t n;
	int err;

	while (pos < stop) {
		n = m->ops->read(m->ctx, m->buf, pos,
				 min_size(min_size(m->buf_size, stop - pos),
					  page_room(m, pos)));
		if (n == -EFAULT) {
			varsym_env_scan_cut(s);
			return 0;
		}
		if (n <= 0)
			return n;
		if (varsym_env_scan_feed(s, m->buf, n))
			return 0;
		pos += n;
		if (page_start(m, pos)) {
			err = next_page(m);
			if (err)
				return err;
		}
	}
	if (stop < end)
		varsym_env_scan_cut(s);
	return 0;
}

/*
 * One string of execve's envp; *budget is what execve would still accept.
 * A string longer than MAX_ARG_STRLEN, or past the budget, makes execve
 * fail with E2BIG anyway.  Most strings are short: VARSYM_STRING_FIRST
 * bytes first, then up to m->buf_size per read (each may walk the
 * caller's page tables).  Returns 0 for the next string, STRING_DONE,
 * STRING_CUT, or an error of m->ops to stop with.
 */
static int scan_string(const struct varsym_mem *m, struct varsym_env_scan *s,
		       unsigned long long str, size_t *budget)
{
	size_t max = VARSYM_ARG_STRLEN_PAGES * m->page_size;
	size_t len = 0;
	int err;

	for (;;) {
		size_t want = len ? m->buf_size :
				    min_size(m->buf_size, VARSYM_STRING_FIRST);
		const char *nul;
		ssize_t n;

		n = m->ops->read(m->ctx, m->buf, str + len,
				 min_size(want, page_room(m, str + len)));

		if (n == 0 || n == -EFAULT)
			return STRING_CUT;
		if (n < 0)
			return n;
		nul = memchr(m->buf, '\0', n);
		if (nul)
			n = nul - m->buf + 1;
		len += n;
		if (len > max || len > *budget)
			return STRING_CUT;
		if (varsym_env_scan_feed(s, m->buf, n))
			return STRING_DONE;
		if (nul) {
			*budget -= len;
			return 0;
		}
		if (page_start(m, str + len)) {
			err = next_page(m);
			if (err)
				return err;
		}
	}
}

/**
 * varsym_scan_envp - feed a scanner the strings of execve's envp
 * @m: the process's memory
 * @s: the scanner, initialised
 * @envp: the array's address, not NULL
 * @ptr_size: the size of its pointers: 4 (a 32-bit ABI) or 8
 *
 * The array ends at a NULL pointer or one that cannot be read; its
 * pointers are read up to m->ptrs_size bytes at a time (a host whose reads
 * are all or nothing reads one pointer at a time), never past the budget.
 * Pointers and strings count against VARSYM_ENV_MAX together, as execve
 * counts them; each string has at most MAX_ARG_STRLEN bytes.  A string
 * that cannot be read whole, or breaks a bound, does not count, nor any
 * after it.  m->ops->next_page is called between strings, and at every
 * page boundary inside one.
 *
 * Return: as varsym_scan_area().
 */
int varsym_scan_envp(const struct varsym_mem *m, struct varsym_env_scan *s,
		     unsigned long long envp, unsigned int ptr_size)
{
	size_t batch = m->ptrs_size - m->ptrs_size % ptr_size;
	size_t budget = VARSYM_ENV_MAX, i;
	unsigned long long addr = envp;
	ssize_t n;
	int ret;

	while (budget >= ptr_size) {
		n = m->ops->read(m->ctx, m->ptrs, addr,
				 min_size(batch, budget - budget % ptr_size));
		if (n < 0 && n != -EFAULT)
			return n;
		if (n < (ssize_t)ptr_size)
			return 0;
		for (i = 0; i + ptr_size <= (size_t)n; i += ptr_size) {
			const unsigned char *p = m->ptrs;
			unsigned long long str = varsym_word_at(p + i, ptr_size);

			if (budget < ptr_size)
				return 0;
			budget -= ptr_size;
			if (!str)
				return 0;
			ret = scan_string(m, s, str, &budget);
			if (ret == STRING_CUT)
				varsym_env_scan_cut(s);
			if (ret)
				return ret < 0 ? ret : 0;
			ret = next_page(m);
			if (ret)
				return ret;
		}
		addr += n - n % ptr_size;
	}
	return 0;
}

/**
 * varsym_word_size - the word size of a program, from one of its addresses
 * @addr: an address of the program's (where its stack starts, or the last
 *	address of its address space)
 *
 * A 32-bit program (ia32, x32, or any compat program on a 64-bit kernel)
 * lives below 4 GiB, a 64-bit one never does; its auxiliary vector is
 * made of words of this size.  Only for reading that vector: any process
 * may move where its stack starts (PR_SET_MM_MAP) and lie about its own,
 * never about a setuid program's.  The ABI of a system call is never
 * guessed so (core/execve_nrs.h).
 *
 * Return: 4 or 8.
 */
unsigned int varsym_word_size(unsigned long long addr)
{
	return addr >> 32 ? 8 : 4;
}

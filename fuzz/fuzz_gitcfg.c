/*
 * fuzz_gitcfg.c: libFuzzer target for the git config reader (gitcfg.c),
 * which decides what sbx holds in a repository: any text, of any length,
 * with NULs, is read to its end with no memory error, and each key
 * handed on starts with a lower-case section name (the part after it may
 * be cut short by a NUL in a subsection, as git cuts it). Build and run:
 * fuzz/run.
 */
#include <assert.h>
#include <stdint.h>
#include <string.h>
#include "../sbx.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int
keychar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

static void
entry(void *arg, const char *key, const char *val)
{
	const char *p;
	size_t *n = arg;

	(*n)++;
	assert(*key != '\0');
	/* The section, lower case; what follows its dot may be cut short
	 * by a NUL in a subsection, as git cuts it. */
	for (p = key; *p != '\0' && *p != '.'; p++)
		assert(keychar((unsigned char)*p));
	if (val != NULL)
		(void)strlen(val);
}

int
LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	size_t keys = 0;

	gitcfg_parse((const char *)d, n, entry, &keys);
	return 0;
}

/* How many threads and descriptors this process has, from /proc/self (tests and benchmarks). */
#ifndef OWS_TEST_SELFCOUNT_H
#define OWS_TEST_SELFCOUNT_H

#include <dirent.h>

static inline int count_entries(const char *path)
{
	DIR *d = opendir(path);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static inline int self_threads(void) { return count_entries("/proc/self/task"); }
/* Less the one the listing itself holds open. */
static inline int self_fds(void) { return count_entries("/proc/self/fd") - 1; }

#endif

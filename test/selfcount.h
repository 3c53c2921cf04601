/* How many threads and descriptors this process has, from /proc/self (tests and benchmarks). */
#ifndef OWS_TEST_SELFCOUNT_H
#define OWS_TEST_SELFCOUNT_H

#include <dirent.h>
#include <time.h>

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
/*
 * The thread count once it is `want`, or what it is after 5 s: a thread
 * pthread_join() has returned for can stay listed in /proc/self/task for a
 * moment (the kernel wakes the joiner before it unlinks the task), which a
 * loaded machine makes long enough to count.
 */
static inline int self_threads_settled(int want)
{
	int n = self_threads();
	for (int i = 0; i < 500 && n != want; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
		n = self_threads();
	}
	return n;
}
/* Less the one the listing itself holds open. */
static inline int self_fds(void) { return count_entries("/proc/self/fd") - 1; }

#endif

/*
 * Runs the fuzz target without libFuzzer: the seed corpus, then random
 * mutations of it for the given number of seconds.  Used where clang's
 * libFuzzer is missing.  Usage: driver SECONDS SEED_DIR
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAXSEEDS 256
#define MAXLEN 20000

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 5;
	static uint8_t *seeds[MAXSEEDS];
	static size_t lens[MAXSEEDS];
	int n = 0;
	DIR *d = argc > 2 ? opendir(argv[2]) : NULL;
	struct dirent *e;
	while (d && (e = readdir(d)) && n < MAXSEEDS) {
		if (e->d_name[0] == '.')
			continue;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", argv[2], e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		seeds[n] = malloc(MAXLEN);
		lens[n] = fread(seeds[n], 1, MAXLEN, f);
		fclose(f);
		LLVMFuzzerTestOneInput(seeds[n], lens[n]);
		n++;
	}
	if (d)
		closedir(d);
	if (n == 0) {
		seeds[0] = calloc(1, MAXLEN);
		n = 1;
	}
	srand((unsigned)time(NULL));
	static uint8_t buf[MAXLEN];
	static const char *tokens[] = {"\r\n", "\r\n\r\n", ":", " ", "CONNECT ", "http://", "[",
				       "]", "*.", "+private", "Content-Length: ", "Transfer-Encoding: chunked",
				       "Host: ", ".", "0", "65535", "\n", "@"};
	long runs = 0;
	clock_t end = clock() + (clock_t)(seconds * CLOCKS_PER_SEC);
	while (clock() < end) {
		int s = rand() % n;
		size_t len = lens[s];
		memcpy(buf, seeds[s], len);
		int muts = 1 + rand() % 8;
		for (int m = 0; m < muts; m++) {
			size_t pos = len ? (size_t)rand() % len : 0;
			switch (rand() % 5) {
			case 0: if (len) buf[pos] = (uint8_t)rand(); break;
			case 1: if (len) { memmove(buf + pos, buf + pos + 1, len - pos - 1); len--; } break;
			case 2: {
				const char *t = tokens[rand() % (sizeof(tokens) / sizeof(tokens[0]))];
				size_t tl = strlen(t);
				if (len + tl < MAXLEN) {
					memmove(buf + pos + tl, buf + pos, len - pos);
					memcpy(buf + pos, t, tl);
					len += tl;
				}
				break;
			}
			case 3: if (len) len = (size_t)rand() % len + 1; break;
			case 4: if (len) buf[0] ^= 1; break;
			}
		}
		LLVMFuzzerTestOneInput(buf, len);
		runs++;
	}
	printf("driver: %ld runs over %d seeds, no failure\n", runs, n);
	return 0;
}

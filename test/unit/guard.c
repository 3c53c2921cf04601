/* The guard's plan (what is pinned, bound read-only, watched) and its sweep. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/linux.h"
#include "tap.h"

static char F[64];

static const char *at(const char *rel)
{
	static char buf[8][256];
	static int n;
	char *b = buf[n++ % 8];
	snprintf(b, sizeof(buf[0]), "%s/%s", F, rel);
	return b;
}

static void put(const char *rel, const char *text)
{
	FILE *f = fopen(at(rel), "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static bool has(const ows__strv *sv, const char *rel)
{
	for (size_t i = 0; i < sv->len; i++)
		if (strcmp(sv->v[i], at(rel)) == 0)
			return true;
	return false;
}

static bool exists(const char *rel)
{
	struct stat st;
	return lstat(at(rel), &st) == 0;
}

int main(void)
{
	char tmpl[] = "/tmp/owstest-guard-XXXXXX";
	if (!mkdtemp(tmpl))
		bail_out("mkdtemp: %s", strerror(errno));
	char *real = realpath(tmpl, NULL);
	snprintf(F, sizeof(F), "%s", real);
	free(real);
	char outside[80];
	snprintf(outside, sizeof(outside), "%s-outside", F);
	mkdir(outside, 0755);

	/* A repository without hooks, whose config sends git to two places in the folder. */
	mkdir(at(".git"), 0755);
	mkdir(at(".git/modules"), 0755);
	mkdir(at(".git/modules/sub"), 0755);
	put(".git/modules/sub/config", "[core]\n");
	put(".git/HEAD", "ref: refs/heads/main\n");
	put(".git/config", "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = \"../inc.gitconfig\"\n");
	mkdir(at("tools"), 0755);
	mkdir(at("tools/hooks"), 0755);
	put("inc.gitconfig", "[user]\n");
	put(".envrc", "export A=1\n");
	mkdir(at(".vscode"), 0755);
	mkdir(at("dotfiles"), 0755);
	put("dotfiles/bashrc", "echo hi\n");
	ok(symlink("dotfiles/bashrc", at(".bashrc")) == 0, "a .bashrc that links into the folder");
	ok(symlink(".", at(".idea")) == 0, "an .idea that links to the folder itself");

	ows__strv ro = {0}, pin = {0};
	ows__guard_watch *g = NULL;
	is_int(ows__guard_plan(F, NULL, &ro, &pin, &g, NULL), 0, "planned");
	ok(has(&pin, ".git") && has(&pin, ".git/modules") && has(&pin, ".git/modules/sub"),
	   "the git folder, modules and each submodule's git folder are pinned");
	ok(has(&ro, ".git/config") && has(&ro, ".git/modules/sub/config"), "configs are read-only");
	ok(exists(".git/hooks") && has(&ro, ".git/hooks"), "a missing hooks folder is made, read-only");
	ok(has(&ro, "tools/hooks"), "core.hooksPath in the folder is read-only");
	ok(has(&ro, "inc.gitconfig"), "a config an include names is read-only");
	ok(has(&ro, ".envrc") && has(&ro, ".vscode"), "protected names that exist are read-only");
	ok(has(&ro, "dotfiles/bashrc") && !has(&ro, ".bashrc"),
	   "a protected link: its target in the folder is read-only, the link watched");
	bool folder_ro = false;
	for (size_t i = 0; i < ro.len; i++)
		folder_ro |= strcmp(ro.v[i], F) == 0;
	ok(!folder_ro, "a link to the folder itself does not make the folder read-only");
	ok(!has(&ro, ".git/commondir") && !has(&pin, ".git/commondir") && !exists(".git/commondir"),
	   "no commondir placeholder");

	/* What the agent leaves: new names, a replaced link, a link on the way out. */
	put(".git/commondir", "../evil\n");
	put(".mcp.json", "{}\n");
	unlink(at(".bashrc"));
	put(".bashrc", "evil\n");
	ows__strv moved = {0};
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, NULL), 0, "swept");
	ok(!exists(".git/commondir") && exists(".git/commondir.owsbx-moved-abcdef01"),
	   "a new commondir is moved aside");
	ok(!exists(".mcp.json") && !exists(".bashrc") && exists(".bashrc.owsbx-moved-abcdef01"),
	   "a new protected file and a replaced link are moved aside");
	ok(exists(".idea") && exists("dotfiles/bashrc"), "what was there at the plan stays");
	is_int((int)moved.len, 3, "each is reported");
	ows__strv_free(&moved);
	put(".mcp.json", "{}\n");
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, NULL), 0, "swept again");
	ok(exists(".mcp.json.owsbx-moved-abcdef01-2"), "a second time beside the first");
	ows__strv_free(&moved);
	ows__guard_watch_free(g);
	ows__strv_free(&ro);
	ows__strv_free(&pin);

	/* A machine's own list; a link planted above a watched name is never followed. */
	ows_config cfg;
	ows__config_defaults(&cfg, NULL);
	cfg.protect_set = true;
	ows__strv_push(&cfg.protect, "conf/tool.json", NULL);
	ows__strv_push(&cfg.protect, "new/deep/tool.json", NULL);
	mkdir(at("conf"), 0755);
	g = NULL;
	is_int(ows__guard_plan(F, &cfg, &ro, &pin, &g, NULL), 0, "planned with the machine's list");
	ok(!has(&ro, ".envrc"), "a list without `default` replaces the built-in one");
	char path[160];
	snprintf(path, sizeof(path), "%s/tool.json", outside);
	close(open(path, O_CREAT | O_WRONLY, 0644));
	rmdir(at("conf"));
	ok(symlink(outside, at("conf")) == 0, "the agent links conf/ out of the folder");
	mkdir(at("new"), 0755);
	mkdir(at("new/deep"), 0755);
	put("new/deep/tool.json", "{}\n");
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, NULL), 0, "swept");
	ok(access(path, F_OK) == 0, "the sweep does not follow a link out");
	ok(!exists("new") && exists("new.owsbx-moved-abcdef01") && moved.len == 1,
	   "a name under new folders: the first new folder is moved aside");
	ows__strv_free(&moved);
	ows__guard_watch_free(g);
	ows__strv_free(&ro);
	ows__strv_free(&pin);
	ows__config_release(&cfg);

	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", F, outside);
	if (system(cmd) != 0)
		diag("could not remove %s", F);
	return done_testing();
}

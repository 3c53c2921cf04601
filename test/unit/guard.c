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
	static char buf[8][512];
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

static void fresh(void)
{
	char cmd[160];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", F, F);
	if (system(cmd) != 0)
		bail_out("cannot empty %s", F);
}

/* What git takes for a git directory: HEAD, objects, refs (and a config). */
static void gitdir(const char *rel, const char *config)
{
	char sub[200];
	mkdir(at(rel), 0755);
	snprintf(sub, sizeof(sub), "%s/objects", rel);
	mkdir(at(sub), 0755);
	snprintf(sub, sizeof(sub), "%s/refs", rel);
	mkdir(at(sub), 0755);
	snprintf(sub, sizeof(sub), "%s/HEAD", rel);
	put(sub, "ref: refs/heads/main\n");
	snprintf(sub, sizeof(sub), "%s/config", rel);
	put(sub, config);
}

/* mkdir -p of `rel`, below the test folder. */
static void mkdirs(const char *rel)
{
	char buf[200];
	snprintf(buf, sizeof(buf), "%s", rel);
	for (char *s = strchr(buf, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(at(buf), 0755);
		*s = '/';
	}
	mkdir(at(buf), 0755);
}

/* Each entry of the built-in list: bound read-only when there, moved aside when new. */
static void test_table(void)
{
	for (size_t i = 0; ows__guard_default_at(i); i++) {
		const char *name = ows__guard_default_at(i);
		char dir[200];
		fresh();
		snprintf(dir, sizeof(dir), "%s", name);
		char *slash = strrchr(dir, '/');
		if (slash) {
			*slash = '\0';
			mkdirs(dir);
		}
		put(name, "x\n");
		ows__strv ro = {0}, pin = {0}, moved = {0};
		ows__guard_watch *g = NULL;
		int rc = ows__guard_plan(F, NULL, &ro, &pin, &g, NULL);
		ok(rc == 0 && has(&ro, name), "%s is read-only when the folder has it", name);
		ows__guard_watch_free(g);
		ows__strv_free(&ro);
		g = NULL;
		fresh();
		rc = ows__guard_plan(F, NULL, &ro, &pin, &g, NULL);
		if (slash)
			mkdirs(dir);
		put(name, "x\n");
		rc = rc ? rc : ows__guard_sweep(g, "abcdef0123", &moved, NULL, NULL);
		ok(rc == 0 && !exists(slash ? dir : name) && moved.len == 1,
		   "%s made inside is moved aside", name);
		ows__strv_free(&moved);
		ows__guard_watch_free(g);
		ows__strv_free(&ro);
		ows__strv_free(&pin);
	}
}

/* Each config key that names a command: a relative path in it is read-only, or moved aside
 * when new; the same name looked up in PATH guards nothing. */
static void test_git_commands(void)
{
	const char *section, *key;
	for (size_t i = 0; ows__guard_git_command_at(i, &section, &key); i++) {
		char config[200];
		fresh();
		mkdir(at(".git"), 0755);
		/* A driver's or a URL's subsection where git has one (`[filter "lfs"]`). */
		bool sub = strstr("filter diff merge credential gpg", section) != NULL;
		snprintf(config, sizeof(config), "[%s%s]\n\t%s = %stools/run.sh --flag\n"
			 "[%s]\n\t%s = run.sh\n", section, sub ? " \"sub\"" : "", key ? key : "log",
			 strcmp(section, "alias") == 0 ? "!" : "", section, key ? key : "diff");
		put(".git/config", config);
		mkdir(at("tools"), 0755);
		put("tools/run.sh", "true\n");
		put("run.sh", "true\n");
		ows__strv ro = {0}, pin = {0}, moved = {0};
		ows__guard_watch *g = NULL;
		int rc = ows__guard_plan(F, NULL, &ro, &pin, &g, NULL);
		ok(rc == 0 && has(&ro, "tools/run.sh") && !has(&ro, "run.sh"),
		   "%s.%s: a command by a relative path is read-only, one from PATH is not", section,
		   key ? key : "*");
		ows__guard_watch_free(g);
		ows__strv_free(&ro);
		ows__strv_free(&pin);
		g = NULL;
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", at("tools"));
		if (system(cmd) != 0)
			bail_out("cannot remove %s", at("tools"));
		rc = ows__guard_plan(F, NULL, &ro, &pin, &g, NULL);
		mkdir(at("tools"), 0755);
		put("tools/run.sh", "true\n");
		rc = rc ? rc : ows__guard_sweep(g, "abcdef0123", &moved, NULL, NULL);
		ok(rc == 0 && !exists("tools") && exists("run.sh") && moved.len == 1,
		   "%s.%s: its folder made inside is moved aside", section, key ? key : "*");
		ows__strv_free(&moved);
		ows__guard_watch_free(g);
		ows__strv_free(&ro);
		ows__strv_free(&pin);
	}
}

/* init.templateDir: the hooks `git init` copies into every new repository. */
static void test_template_dir(void)
{
	fresh();
	mkdir(at(".git"), 0755);
	put(".git/config", "[init]\n\ttemplateDir = tmpl\n");
	mkdir(at("tmpl"), 0755);
	ows__strv ro = {0}, pin = {0};
	ows__guard_watch *g = NULL;
	int rc = ows__guard_plan(F, NULL, &ro, &pin, &g, NULL);
	ok(rc == 0 && has(&ro, "tmpl"), "init.templateDir in the folder is read-only");
	ows__guard_watch_free(g);
	ows__strv_free(&ro);
	ows__strv_free(&pin);
}

/* A folder inside a Mercurial repository: the hgrc above names a hook by a path into it. */
static void test_hg_above(void)
{
	fresh();
	mkdir(at(".hg"), 0755);
	put(".hg/hgrc", "[hooks]\npre-status = sub/tools/h.sh\n");
	mkdir(at("sub"), 0755);
	mkdir(at("sub/tools"), 0755);
	put("sub/tools/h.sh", "touch x\n");
	char folder[600];
	snprintf(folder, sizeof(folder), "%s", at("sub"));
	ows__strv ro = {0}, pin = {0};
	ows__guard_watch *g = NULL;
	int rc = ows__guard_plan(folder, NULL, &ro, &pin, &g, NULL);
	ok(rc == 0 && has(&ro, "sub/tools/h.sh"),
	   "Mercurial: a hook the repository above names by a path into the folder is read-only");
	ows__guard_watch_free(g);
	ows__strv_free(&ro);
	ows__strv_free(&pin);
}

/* What an .envrc loads by name: read-only when there, watched when not. */
static void test_envrc(void)
{
	fresh();
	put(".envrc", "dotenv_if_exists .env.local\nsource_env sub\nsource_env_if_exists 'x.sh' # c\n"
		      "dotenv $HOME/.env\nPATH_add bin\n");
	put(".env.local", "A=1\n");
	mkdir(at("sub"), 0755);
	put("sub/.envrc", "export B=1\n");
	mkdir(at("bin"), 0755);
	ows__strv ro = {0}, pin = {0}, moved = {0};
	ows__guard_watch *g = NULL;
	int rc = ows__guard_plan(F, NULL, &ro, &pin, &g, NULL);
	ok(rc == 0 && has(&ro, ".env.local") && has(&ro, "sub/.envrc"),
	   "what an .envrc loads (dotenv_if_exists FILE, source_env DIR) is read-only");
	ok(!has(&ro, "bin") && !has(&ro, "sub"), "a PATH_add folder and source_env's folder are not");
	put("x.sh", "touch x\n");
	rc = rc ? rc : ows__guard_sweep(g, "abcdef0123", &moved, NULL, NULL);
	ok(rc == 0 && !exists("x.sh") && moved.len == 1, "a file it sources made inside is moved aside");
	ows__strv_free(&moved);
	ows__guard_watch_free(g);
	ows__strv_free(&ro);
	ows__strv_free(&pin);
}

/* Every repository in the folder, found by git's rules, and what is new made inert. */
static void test_repos(void)
{
	fresh();
	mkdir(at("a"), 0755);
	gitdir("a/.git", "[core]\n\tfsmonitor = tools/fsmon.sh\n");
	mkdir(at("a/tools"), 0755);
	put("a/tools/fsmon.sh", "true\n");
	mkdir(at("b"), 0755);
	mkdir(at("gitdirs"), 0755);
	gitdir("gitdirs/b", "[core]\n");
	put("b/.git", "gitdir: ../gitdirs/b\n");
	gitdir("x.git", "[core]\n\tbare = true\n");
	mkdir(at("c"), 0755);
	mkdir(at("c/.hg"), 0755);
	put("c/.hg/hgrc", "[ui]\n%include ../inc.rc\n");
	put("c/inc.rc", "[hooks]\n");
	put("a/.envrc", "export A=1\n");

	ows__strv ro = {0}, pin = {0}, moved = {0}, modes = {0};
	ows__guard_watch *g = NULL;
	is_int(ows__guard_plan(F, NULL, &ro, &pin, &g, NULL), 0, "planned a folder of repositories");
	ok(has(&pin, "a/.git") && has(&ro, "a/.git/config") && has(&ro, "a/.git/hooks"),
	   "a nested repository is guarded as the folder's own would be");
	ok(has(&ro, "a/tools/fsmon.sh"), "its core.fsmonitor in the folder is read-only");
	ok(has(&ro, "a/.envrc"), "the tools' names at its work tree are read-only");
	ok(has(&ro, "b/.git") && has(&pin, "gitdirs/b") && has(&ro, "gitdirs/b/config"),
	   "a gitdir: file and the folder it names");
	ok(has(&pin, "x.git") && has(&ro, "x.git/config"), "a bare repository (no .git leads to it)");
	ok(has(&pin, "c/.hg") && has(&ro, "c/.hg/hgrc") && has(&ro, "c/inc.rc"),
	   "Mercurial: .hg pinned, hgrc and what it includes read-only");

	/* What the agent makes afterwards. */
	mkdir(at("d"), 0755);
	gitdir("d/.git", "[core]\n");
	gitdir("e", "[core]\n\tworktree = ..\n");
	mkdir(at("f"), 0755);
	mkdir(at("f/.hg"), 0755);
	mkdir(at("deep"), 0755);
	mkdir(at("deep/er"), 0755);
	put("deep/er/.git", "gitdir: /elsewhere\n");
	chmod(at("a/.git"), 0777);
	chmod(F, 0777);
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, &modes, NULL), 0, "swept");
	ok(!exists("d/.git") && exists("d/.git.owsbx-moved-abcdef01/HEAD.owsbx-moved-abcdef01") &&
	   !exists("d/.git.owsbx-moved-abcdef01/HEAD"),
	   "a new .git loses its HEAD, then is moved aside");
	ok(!exists("e/HEAD") && exists("e/HEAD.owsbx-moved-abcdef01"),
	   "a new folder git would take for a bare repository loses its HEAD");
	ok(!exists("f/.hg") && !exists("deep/er/.git"), "a new .hg and a new .git file are moved aside");
	ok(exists("a/.git/HEAD") && exists("gitdirs/b/HEAD") && exists("x.git/HEAD") &&
	   exists("c/.hg"), "what was there at the plan stays");
	is_int((int)moved.len, 5, "each is reported");
	struct stat st;
	ok(stat(at("a/.git"), &st) == 0 && (st.st_mode & 07777) == 0755 && stat(F, &st) == 0 &&
	   (st.st_mode & 07777) == 0755 && modes.len == 2,
	   "the modes of a git folder and of the folder are put back, and reported");
	if (modes.len)
		diag("%s", modes.v[0]);
	ows__strv_free(&moved);
	ows__strv_free(&modes);
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, &modes, NULL), 0, "swept again");
	is_int((int)(moved.len + modes.len), 0, "nothing new: nothing reported");
	ows__strv_free(&moved);
	ows__guard_watch_free(g);
	ows__strv_free(&ro);
	ows__strv_free(&pin);
}

/* The person's git settings outside, with paths into the folder. */
static void test_outside_configs(void)
{
	fresh();
	char home[96], path[160], *old = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
	snprintf(home, sizeof(home), "%s-home", F);
	mkdir(home, 0755);
	snprintf(path, sizeof(path), "%s/.gitconfig", home);
	FILE *f = fopen(path, "w");
	if (f) {
		fprintf(f, "[core]\n\thooksPath = .githooks\n[includeIf \"gitdir:/x/\"]\n\tpath = %s/team.inc\n", F);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/.config", home);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.config/git", home);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/.config/git/config", home);
	if ((f = fopen(path, "w"))) {
		fputs("[core]\n\tfsmonitor = tools/fsmon.sh --flag\n", f);
		fclose(f);
	}
	setenv("HOME", home, 1);
	gitdir(".git", "[core]\n");
	put("team.inc", "[alias]\n");
	mkdir(at("tools"), 0755);
	put("tools/fsmon.sh", "true\n");
	ows__strv ro = {0}, pin = {0}, moved = {0};
	ows__guard_watch *g = NULL;
	is_int(ows__guard_plan(F, NULL, &ro, &pin, &g, NULL), 0, "planned with the person's settings");
	ok(has(&ro, "team.inc"), "a file ~/.gitconfig includes (includeIf) from the folder is read-only");
	ok(has(&ro, "tools/fsmon.sh"), "a relative core.fsmonitor of ~/.config/git/config is read-only");
	mkdir(at(".githooks"), 0755);
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, NULL, NULL), 0, "swept");
	ok(!exists(".githooks") && moved.len == 1,
	   "a relative core.hooksPath of ~/.gitconfig, made inside, is moved aside");
	ows__strv_free(&moved);
	ows__guard_watch_free(g);
	ows__strv_free(&ro);
	ows__strv_free(&pin);
	if (old)
		setenv("HOME", old, 1);
	free(old);
	char cmd[200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", F, home);
	if (system(cmd) != 0)
		diag("could not remove %s", home);
}

/* More repositories than the mounts can hold: refused, saying what to do. */
static void test_too_many(void)
{
	fresh();
	for (int i = 0; i < 70; i++) {
		char rel[32];
		snprintf(rel, sizeof(rel), "r%d", i);
		mkdir(at(rel), 0755);
		snprintf(rel, sizeof(rel), "r%d/.git", i);
		gitdir(rel, "[core]\n");
	}
	ows__guard_list list = {0};
	ows__guard_watch *g = NULL;
	ows_error err;
	ows_error_clear(&err);
	is_int(ows__guard_add(&list, F, NULL, &g, &err), OWS_EINVAL,
	       "70 repositories (210 paths to bind) are refused");
	ok(strstr(err.what, "too many repositories") && strstr(err.hint, "--rw"),
	   "with the reason and the one thing to do");
	diag("%s: %s", err.what, err.hint);
	ows__guard_free(&list);
	ows__guard_watch_free(g);
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
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, NULL, NULL), 0, "swept");
	ok(!exists(".git/commondir") && exists(".git/commondir.owsbx-moved-abcdef01"),
	   "a new commondir is moved aside");
	ok(!exists(".mcp.json") && !exists(".bashrc") && exists(".bashrc.owsbx-moved-abcdef01"),
	   "a new protected file and a replaced link are moved aside");
	ok(exists(".idea") && exists("dotfiles/bashrc"), "what was there at the plan stays");
	is_int((int)moved.len, 3, "each is reported");
	ows__strv_free(&moved);
	put(".mcp.json", "{}\n");
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, NULL, NULL), 0, "swept again");
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
	is_int(ows__guard_sweep(g, "abcdef0123", &moved, NULL, NULL), 0, "swept");
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
	test_table();
	test_git_commands();
	test_template_dir();
	test_hg_above();
	test_envrc();
	test_repos();
	test_outside_configs();
	test_too_many();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", F);
	if (system(cmd) != 0)
		diag("could not remove %s", F);
	return done_testing();
}

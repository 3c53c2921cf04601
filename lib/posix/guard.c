/*
 * The guard: what other tools run later stays out of the agent's reach in a
 * read-write folder.
 *
 * The person's own git, Mercurial, shell, editor and agent tools run,
 * outside the wall and later, code that files in a project name: git's
 * hooks and config (core.hooksPath, core.fsmonitor, aliases, filters), an
 * hgrc, a shell's rc files, .envrc, hook managers', editor and MCP
 * settings.  What git runs is derived from git's own rules: every
 * repository it would find in the folder (guard_walk.c), and every config
 * it would read there, the person's outside ones included.  The guard
 * plans, for each read-write folder:
 *
 *   ro   existing files and folders to bind read-only over themselves;
 *   pin  git folders to bind read-write over themselves: a mount point
 *        cannot be renamed or removed (EBUSY), so `.git` cannot be moved
 *        away and replaced by one the agent wrote, while git inside still
 *        writes objects, refs, the index and its lock files;
 *   watch names that do not exist yet (commondir, config.worktree, a
 *        protected file the project does not have): no mount can cover a
 *        name that is not there without a placeholder on the person's
 *        disk, so the host looks after each command and at close, and
 *        moves aside whatever appeared there.  After the fact: the limit
 *        is in the README.  A repository that was not there at the plan
 *        is made inert the same way (its HEAD, then its `.git` or `.hg`);
 *   modes of the folder, of what is bound, and of the folders between,
 *        put back then too: a bind holds inside the sandbox, not outside.
 *
 * `.git/hooks` is the one placeholder made: an empty folder, which is what
 * `git init` makes anyway.  Never `commondir`: git would take the
 * repository for a linked worktree.
 *
 * Host side; it allocates, and uses neither jansson nor inih, so that the
 * setuid launcher may link it or be handed its lists.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef __linux__
#include <sys/syscall.h>
#include <linux/openat2.h>
#endif

#include "posix.h"

/*
 * Relative to each read-write folder and to each work tree found in it:
 * what other tools run, or read to decide what to run, on a plain action
 * there (a new shell, a `cd`, opening the folder, a commit).  What peers
 * protect by default, and the hook managers' configs.  Data: each entry
 * says whose it is and why; test/unit/guard.c checks every one.
 */
static const struct {
	const char *name;
	const char *why;
} protect_default[] = {
	{".bashrc", "bash: sourced by an interactive shell started there"},
	{".bash_profile", "bash: sourced by a login shell"},
	{".bash_login", "bash: sourced by a login shell"},
	{".bash_logout", "bash: sourced when a login shell exits"},
	{".profile", "sh, bash: sourced by a login shell"},
	{".zshrc", "zsh: sourced by an interactive shell"},
	{".zprofile", "zsh: sourced by a login shell"},
	{".zshenv", "zsh: sourced by every zsh"},
	{".zlogin", "zsh: sourced by a login shell"},
	{".gitconfig", "git: included by a repository config that names it"},
	{".gitmodules", "git: submodule paths and update commands (`!cmd`)"},
	{".envrc", "direnv: run on `cd` once allowed"},
	{".envrc.local", "direnv: what an allowed .envrc commonly sources (source_env_if_exists)"},
	{".env", "direnv: dotenv / load_dotenv sets PATH and more on `cd`"},
	{".ripgreprc", "ripgrep: flags such as --pre, a command run on each file"},
	{".husky", "husky: the scripts its git hooks run"},
	{".pre-commit-config.yaml", "pre-commit: the hooks its git hook runs (`repo: local` runs any entry)"},
	{"lefthook.yml", "lefthook: the commands its git hooks run"},
	{"lefthook.yaml", "lefthook: the same, another spelling"},
	{".lefthook.yml", "lefthook: the same, hidden"},
	{".lefthook.yaml", "lefthook: the same, hidden"},
	{"lefthook.toml", "lefthook: the same, as TOML"},
	{"lefthook.json", "lefthook: the same, as JSON"},
	{"lefthook-local.yml", "lefthook: local overrides, merged over lefthook.yml"},
	{"lefthook-local.yaml", "lefthook: local overrides"},
	{".lefthook-local.yml", "lefthook: local overrides, hidden"},
	{".lefthook", "lefthook: the scripts folder its commands run from"},
	{".lefthook-local", "lefthook: the local scripts folder"},
	{".vscode", "VS Code: tasks and settings that run programs"},
	{".idea", "JetBrains IDEs: run configurations and tool settings"},
	{".mcp.json", "agents: MCP servers started by the person's agent"},
	{".cursor", "Cursor: settings and MCP servers"},
	{".claude", "Claude Code: settings and hooks"},
	{".codex", "Codex: settings"},
	{".gemini", "Gemini CLI: settings"},
	{".yarnrc.yml", "Yarn 2+: yarnPath names the script every yarn command runs"},
	{".yarnrc", "Yarn 1: yarn-path names the script every yarn command runs"},
	{"rust-toolchain", "rustup: a toolchain by path, run by every cargo and rustc there"},
	{"rust-toolchain.toml", "rustup: the same ([toolchain] path)"},
	{".tool-versions", "asdf, mise: a tool version `path:DIR` runs DIR's programs"},
	{"mise.toml", "mise: hooks and env scripts run on `cd` (as direnv), tool paths"},
	{".mise.toml", "mise: the same, hidden"},
	{"mise.local.toml", "mise: local overrides of mise.toml"},
	{".mise.local.toml", "mise: local overrides, hidden"},
	{".mise", "mise: its config folder (.mise/config.toml)"},
	{".config/mise.toml", "mise: the same config under .config"},
	{".config/mise", "mise: its config folder under .config"},
	{".pdbrc", "pdb: its commands (Python statements) run when the debugger starts there"},
	{".irbrc", "irb: Ruby run when irb starts there"},
	{".pryrc", "pry: Ruby run when pry starts there"},
	{".Rprofile", "R: run when R starts there"},
	{".lfsconfig", "git-lfs: the server (lfs.url) the person's push uploads the large files to"},
	{".jj/repo/config.toml", "Jujutsu: ui.pager, diff and merge tools, signing programs, run by `jj log`, `jj diff`, each snapshot"},
	{".jj/repo/store/git_target", "Jujutsu: the git repository it uses, whose config git runs on `jj git fetch` and push"},
	{".sl/config", "Sapling: hooks and extensions, as hgrc"},
};

#define GUARD_MAX_DEPTH 4 /* submodules of submodules, commondir, includes */

struct watch {
	char *path;
	bool link;       /* a symbolic link was there: watched for being replaced */
	dev_t dev;
	ino_t ino;
};

/* A mode the sweep puts back: a folder's, or what the guard binds over itself. */
struct mode {
	char *path;
	dev_t dev;
	ino_t ino;
	mode_t mode;
};

struct ows__guard_watch {
	struct watch *v;
	size_t len, cap;
	ows__strv folders;   /* walked again after each command */
	ows__strv fifo_only; /* read-only folders walked for new FIFOs alone, before each command */
	ows__repos known;    /* the repositories (and FIFOs) found there at the plan */
	size_t unread;       /* folders the plan's walk could not open */
	struct mode *modes;
	size_t nmodes;
};

struct plan {
	const char *folder;
	ows__strv *ro;
	ows__strv *pin;
	ows__guard_watch *g;
	ows__strv worktrees; /* where a relative core.hooksPath or core.fsmonitor resolves */
	ows_error *err;
};

const char *ows__guard_default_at(size_t i)
{
	return i < OWS__ARRAY_LEN(protect_default) ? protect_default[i].name : NULL;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static bool listed(const ows__strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->len; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

/* No symbolic link on the way: what a bind over itself may take as its source. */
static bool plain(const char *path)
{
	char *real = realpath(path, NULL);
	bool same = real && strcmp(real, path) == 0;
	free(real);
	return same;
}

static int add_unique(ows__strv *sv, const char *path, ows_error *err)
{
	return listed(sv, path) ? 0 : ows__strv_push(sv, path, err);
}

static int watch(struct plan *pl, const char *path, const struct stat *link)
{
	ows__guard_watch *g = pl->g;
	for (size_t i = 0; i < g->len; i++)
		if (strcmp(g->v[i].path, path) == 0)
			return 0;
	if (g->len == g->cap) {
		size_t cap = g->cap ? g->cap * 2 : 16;
		struct watch *v = realloc(g->v, cap * sizeof(*v));
		if (!v)
			return ows__fail(pl->err, OWS_ENOMEM, 0, NULL, NULL, "out of memory");
		g->v = v;
		g->cap = cap;
	}
	struct watch *w = &g->v[g->len];
	if (!(w->path = ows__strdup(path, pl->err)))
		return OWS_ENOMEM;
	w->link = link != NULL;
	w->dev = link ? link->st_dev : 0;
	w->ino = link ? link->st_ino : 0;
	g->len++;
	return 0;
}

/*
 * An absent name is watched from its first missing folder (`.claude` for
 * `.claude/settings.json`), so that the sweep renames in a folder that was
 * there before the agent, which the person may write under either provider.
 */
static int watch_absent(struct plan *pl, const char *path)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", path);
	size_t base = strlen(pl->folder);
	if (!under(buf, pl->folder) || strlen(buf) <= base)
		return watch(pl, path, NULL);
	for (char *s = strchr(buf + base + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		struct stat st;
		if (lstat(buf, &st) != 0)
			return watch(pl, buf, NULL);
		*s = '/';
	}
	return watch(pl, buf, NULL);
}

/* The canonical form of `path` when it is inside the folder, else NULL (caller frees). */
static char *inside(const struct plan *pl, const char *path)
{
	char *real = realpath(path, NULL);
	if (real && !under(real, pl->folder)) {
		free(real);
		real = NULL;
	}
	return real;
}

/*
 * One guarded name: bound read-only when it is a plain file or folder,
 * watched when it is absent or a symbolic link (whose target is guarded
 * too when it is in the folder).  Returns 1 when it was bound, 0 when
 * not, or an error.
 */
static int guard_path(struct plan *pl, const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT || errno == ENOTDIR ? watch_absent(pl, path) : 0;
	if (S_ISLNK(st.st_mode)) {
		int rc = watch(pl, path, &st);
		char *target = rc == 0 ? inside(pl, path) : NULL;
		/* Never the folder itself: a link to `.` must not make the whole folder read-only. */
		if (target && strcmp(target, pl->folder) != 0 && stat(target, &st) == 0 &&
		    (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			rc = add_unique(pl->ro, target, pl->err);
		free(target);
		return rc;
	}
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return 0;
	if (!plain(path))
		return watch(pl, path, NULL); /* a link above it: only the name is watched */
	int rc = add_unique(pl->ro, path, pl->err);
	return rc < 0 ? rc : 1;
}

static char *join(const char *dir, const char *rel, ows_error *err)
{
	return rel[0] == '/' ? ows__strdup(rel, err) : ows__asprintf(err, "%s/%s", dir, rel);
}

/*
 * A regular file opened for reading, else -1.  What the guard reads lies in
 * a read-write folder, where the agent may have left a FIFO (an open that
 * waits for a writer forever) or a link to /dev/zero (a read that never
 * ends) under a name the next session's plan reads: neither may stop it.
 */
static int open_regular(const char *path, int flags)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | flags);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* open_regular's descriptor as a stream, or NULL. */
static FILE *fopen_regular(const char *path)
{
	int fd = open_regular(path, 0);
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (fd >= 0 && !f)
		close(fd);
	return f;
}

/* The first line of a small file, trimmed, into buf; false when unreadable. */
static bool read_line(const char *path, char *buf, size_t size)
{
	int fd = open_regular(path, O_NOFOLLOW);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\r\n")] = '\0';
	return true;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r' || s[n - 1] == '\n'))
		s[--n] = '\0';
	if (n >= 2 && s[0] == '"' && s[n - 1] == '"') {
		s[n - 1] = '\0';
		s++;
	}
	return s;
}

static int guard_config(struct plan *pl, const char *path, const char *worktree, int depth);

/*
 * A path a git config names (core.hooksPath, include.path): guarded when
 * it is in the folder.  `base` resolves a relative one.
 */
static int guard_named(struct plan *pl, const char *base, const char *value,
		       const char *worktree, bool config, int depth)
{
	char *path;
	if (strncmp(value, "~/", 2) == 0) {
		const char *home = getenv("HOME");
		if (!home)
			return 0;
		path = ows__asprintf(pl->err, "%s/%s", home, value + 2);
	} else {
		path = join(base, value, pl->err);
	}
	if (!path)
		return OWS_ENOMEM;
	/* Where it would be, links resolved as far as they go: folders on the way may not
	 * exist yet (core.fsmonitor = tools/fsmon.sh, and no tools/). */
	char *dir = ows__strdup(path, pl->err);
	int rc = dir ? 0 : OWS_ENOMEM;
	char *slash = dir ? strrchr(dir, '/') : NULL;
	char *real = NULL;
	while (slash && slash != dir) {
		*slash = '\0';
		if ((real = realpath(dir, NULL)) || errno != ENOENT)
			break;
		char *up = strrchr(dir, '/');
		*slash = '/';
		slash = up;
	}
	if (real) {
		char *full = ows__asprintf(pl->err, "%s/%s", real, slash + 1);
		bool in = under(real, pl->folder);
		if (!full)
			rc = OWS_ENOMEM;
		else if (full && in)
			rc = guard_path(pl, full);
		/* A config outside is read on: what it includes may send git into the folder. */
		if (full && config && (rc > 0 || (!in && rc == 0)))
			rc = guard_config(pl, full, worktree, depth + 1);
		free(full);
		free(real);
	}
	free(dir);
	free(path);
	return rc < 0 ? rc : 0;
}

/*
 * The config keys whose value is a command git runs through the shell, from
 * the top of the work tree, on a plain action (status, diff, log, commit,
 * fetch) or an alias the person types: a relative path there (`tools/x.sh`)
 * is a file in the folder.  Section, then key (NULL: any key of the section,
 * `[pager] log`); a subsection (`[filter "lfs"]`) may come between.
 */
static const struct {
	const char *section, *key;
} git_commands[] = {
	{"core", "fsmonitor"},   /* status */
	{"core", "pager"},       /* log, diff */
	{"core", "editor"},      /* commit */
	{"core", "sshcommand"},  /* fetch, push */
	{"core", "askpass"},     /* fetch, push */
	{"sequence", "editor"},  /* rebase -i */
	{"diff", "external"},    /* diff */
	{"diff", "command"},     /* diff, per driver */
	{"diff", "textconv"},    /* diff, log -p */
	{"filter", "clean"},     /* status, add */
	{"filter", "smudge"},    /* checkout, switch */
	{"filter", "process"},   /* the same, long-running */
	{"merge", "driver"},     /* merge, pull */
	{"gpg", "program"},      /* commit with commit.gpgSign, log --show-signature */
	{"credential", "helper"}, /* fetch, push */
	{"interactive", "difffilter"}, /* add -p */
	{"pager", NULL},         /* per command */
	{"alias", NULL},         /* `!cmd` aliases */
};

bool ows__guard_git_command_at(size_t i, const char **section, const char **key)
{
	if (i >= OWS__ARRAY_LEN(git_commands))
		return false;
	*section = git_commands[i].section;
	*key = git_commands[i].key;
	return true;
}

static bool git_runs(const char *section, const char *key)
{
	for (size_t i = 0; i < OWS__ARRAY_LEN(git_commands); i++)
		if (strcasecmp(section, git_commands[i].section) == 0 &&
		    (!git_commands[i].key || strcasecmp(key, git_commands[i].key) == 0))
			return true;
	return false;
}

/*
 * A path git resolves against the work tree where it runs a hook or a
 * command (core.hooksPath, and the commands of git_commands): against
 * `worktree`, or, for a config outside any repository (system, global),
 * against every work tree the plan found in the folder.  Of a command only
 * its first word counts, and only when it names a path: `true` is git's
 * own fsmonitor daemon, a bare name is looked up in PATH.
 */
static int guard_hook_path(struct plan *pl, bool command, char *value, const char *worktree,
			   int depth)
{
	if (command) {
		value[strcspn(value, " \t")] = '\0';
		if (!strchr(value, '/'))
			return 0;
	}
	if (value[0] == '/' || strncmp(value, "~/", 2) == 0 || worktree)
		return guard_named(pl, worktree ? worktree : pl->folder, value, worktree, false, depth);
	int rc = 0;
	for (size_t i = 0; i < pl->worktrees.len && rc == 0; i++)
		rc = guard_named(pl, pl->worktrees.v[i], value, pl->worktrees.v[i], false, depth);
	return rc;
}

/*
 * Reads one git config file for the paths it makes git read or run from:
 * core.hooksPath, init.templateDir and the commands of git_commands (relative
 * to the work tree) and
 * include/includeIf paths (relative to the file; every condition taken as
 * met, so that nothing git might include is missed).  A small reader of git's syntax, enough for
 * section headers and `key = value` lines; what it cannot read it leaves,
 * and the file itself is read-only inside either way.
 */
static int guard_config(struct plan *pl, const char *path, const char *worktree, int depth)
{
	if (depth > GUARD_MAX_DEPTH)
		return 0;
	FILE *f = fopen_regular(path);
	if (!f)
		return 0;
	char *dir = ows__strdup(path, pl->err);
	if (!dir) {
		fclose(f);
		return OWS_ENOMEM;
	}
	*strrchr(dir, '/') = '\0';
	char section[32] = "", line[4096];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char *s = trim(line);
		if (*s == '[') {
			size_t n = strcspn(s + 1, " \t\".]");
			snprintf(section, sizeof(section), "%.*s", (int)n, s + 1);
			continue;
		}
		char *eq = strchr(s, '=');
		if (!eq || *s == '#' || *s == ';')
			continue;
		*eq = '\0';
		char *key = trim(s), *value = trim(eq + 1);
		if (!*value)
			continue;
		/* Folders git runs hooks from, or copies them from into every new repository. */
		if ((strcasecmp(section, "core") == 0 && strcasecmp(key, "hookspath") == 0) ||
		    (strcasecmp(section, "init") == 0 && strcasecmp(key, "templatedir") == 0))
			rc = guard_hook_path(pl, false, value, worktree, depth);
		else if (git_runs(section, key)) /* `!cmd`: an alias's or a helper's shell command */
			rc = guard_hook_path(pl, true, value + (value[0] == '!'), worktree, depth);
		else if ((strcasecmp(section, "include") == 0 ||
			  strcasecmp(section, "includeif") == 0) && strcasecmp(key, "path") == 0)
			rc = guard_named(pl, dir, value, worktree, true, depth);
	}
	fclose(f);
	free(dir);
	return rc;
}

enum gitdir_kind { GITDIR_REPO, GITDIR_LINKED };

/*
 * A git folder: pinned, and what git executes from bound read-only.
 * `worktree` is the work tree whose core.hooksPath is resolved against
 * (the folder itself for its own repository), or NULL.
 */
static int guard_gitdir(struct plan *pl, const char *gitdir, const char *worktree,
			enum gitdir_kind kind, int depth)
{
	if (depth > GUARD_MAX_DEPTH || listed(pl->pin, gitdir))
		return 0;
	int rc = ows__strv_push(pl->pin, gitdir, pl->err);
	char path[PATH_MAX + 32];
	struct stat st;

	static const char *const configs[] = {"config", "config.worktree"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(configs) && rc == 0; i++) {
		if (kind == GITDIR_LINKED && i == 0)
			continue; /* a linked worktree's config is its common folder's */
		snprintf(path, sizeof(path), "%s/%s", gitdir, configs[i]);
		rc = guard_path(pl, path);
		if (rc > 0)
			rc = guard_config(pl, path, worktree, depth);
	}
	/* An existing commondir is the person's (a linked worktree); a new one the agent's. */
	snprintf(path, sizeof(path), "%s/commondir", gitdir);
	if (rc == 0 && lstat(path, &st) != 0) {
		rc = watch(pl, path, NULL);
	} else if (rc == 0 && (rc = guard_path(pl, path)) >= 0) {
		char line[PATH_MAX];
		char *common = read_line(path, line, sizeof(line)) ? join(gitdir, line, pl->err) : NULL;
		char *real = common ? inside(pl, common) : NULL;
		rc = real ? guard_gitdir(pl, real, worktree, GITDIR_REPO, depth + 1) : 0;
		free(real);
		free(common);
	}
	if (rc < 0 || kind == GITDIR_LINKED)
		return rc < 0 ? rc : 0;

	snprintf(path, sizeof(path), "%s/hooks", gitdir);
	if (lstat(path, &st) != 0 && errno == ENOENT)
		(void)mkdir(path, 0755); /* what `git init` makes; empty: runs nothing */
	rc = guard_path(pl, path);

	/* Submodules' and linked worktrees' own git folders. */
	static const char *const nests[] = {"modules", "worktrees"};
	for (size_t i = 0; i < OWS__ARRAY_LEN(nests) && rc >= 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", gitdir, nests[i]);
		bool present = lstat(path, &st) == 0;
		if (!present || S_ISLNK(st.st_mode)) {
			rc = watch(pl, path, present ? &st : NULL);
			continue;
		}
		if (!S_ISDIR(st.st_mode) || !plain(path))
			continue;
		if ((rc = add_unique(pl->pin, path, pl->err)) < 0)
			break;
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *d = fd >= 0 ? ows__opendir_at(fd) : NULL;
		if (fd >= 0)
			close(fd);
		for (struct dirent *e; d && rc >= 0 && (e = readdir(d));) {
			if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
				continue;
			char sub[PATH_MAX + 300];
			snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
			if (lstat(sub, &st) != 0 || !S_ISDIR(st.st_mode))
				continue;
			rc = guard_gitdir(pl, sub, NULL, i == 0 ? GITDIR_REPO : GITDIR_LINKED, depth + 1);
		}
		if (d)
			closedir(d);
	}
	return rc < 0 ? rc : 0;
}

/*
 * The config of a repository whose git folder lies outside the folder, as
 * git run in `worktree` reads it: the repository above the folder (`--rw
 * ~/proj/sub`), or the one a linked worktree's `.git` file names (`--rw
 * ~/proj-agent`).  It is the person's, but a relative core.hooksPath
 * (resolved against the work tree: `sub/hooks`, or the linked worktree's
 * `.githooks`) or an include may name a path in the folder.  Found as git
 * finds it: `.git` a folder, or a `gitdir:` file whose git folder has a
 * `commondir` (a linked worktree: the common folder's config) or not (a
 * submodule: its own).
 */
static int guard_outside_repo(struct plan *pl, const char *worktree)
{
	char path[PATH_MAX + 32], line[PATH_MAX];
	snprintf(path, sizeof(path), "%s/.git", worktree);
	char *gitdir = NULL, *common = NULL;
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		if (read_line(path, line, sizeof(line)) && strncmp(line, "gitdir:", 7) == 0)
			gitdir = join(worktree, trim(line + 7), pl->err);
	} else {
		gitdir = ows__strdup(path, pl->err);
	}
	if (!gitdir)
		return 0;
	snprintf(path, sizeof(path), "%s/commondir", gitdir);
	common = read_line(path, line, sizeof(line)) ? join(gitdir, line, pl->err)
						      : ows__strdup(gitdir, pl->err);
	int rc = common ? 0 : OWS_ENOMEM;
	const char *const files[][2] = {{common, "config"}, {gitdir, "config.worktree"}};
	for (size_t i = 0; i < OWS__ARRAY_LEN(files) && rc >= 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", files[i][0], files[i][1]);
		rc = guard_config(pl, path, worktree, 0);
	}
	free(common);
	free(gitdir);
	return rc < 0 ? rc : 0;
}

/* `dir/.git`: a folder, a `gitdir:` file (bound read-only, and what it names), or a link. */
static int guard_dotgit(struct plan *pl, const char *dir, int depth)
{
	char path[PATH_MAX + 8];
	snprintf(path, sizeof(path), "%s/.git", dir);
	struct stat st;
	if (lstat(path, &st) != 0)
		return watch(pl, path, NULL);
	if (S_ISDIR(st.st_mode) && plain(path))
		return guard_gitdir(pl, path, dir, GITDIR_REPO, depth);
	/* A link is only watched: its target is the git folder, pinned below, not read-only. */
	int rc = S_ISLNK(st.st_mode) ? watch(pl, path, &st) : guard_path(pl, path);
	if (rc < 0)
		return rc;
	char line[PATH_MAX];
	char *target = NULL;
	if (S_ISREG(st.st_mode) && read_line(path, line, sizeof(line)) &&
	    strncmp(line, "gitdir:", 7) == 0)
		target = join(dir, trim(line + 7), pl->err);
	else if (S_ISLNK(st.st_mode))
		target = ows__strdup(path, pl->err);
	char *real = target ? inside(pl, target) : NULL;
	rc = 0;
	if (real && stat(real, &st) == 0 && S_ISDIR(st.st_mode))
		rc = guard_gitdir(pl, real, dir, GITDIR_REPO, depth);
	else if (target && !real)
		rc = guard_outside_repo(pl, dir); /* a linked worktree of a repository elsewhere */
	free(real);
	free(target);
	return rc;
}

/* The submodules .gitmodules names: each one's `.git` is guarded like the folder's own. */
static int guard_submodules(struct plan *pl, const char *worktree, int depth)
{
	if (depth > GUARD_MAX_DEPTH)
		return 0;
	char path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/.gitmodules", worktree);
	FILE *f = fopen_regular(path);
	if (!f)
		return 0;
	char line[4096];
	int rc = 0;
	while (rc >= 0 && fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq = strchr(s, '=');
		if (!eq)
			continue;
		*eq = '\0';
		char *key = trim(s), *value = trim(eq + 1);
		if (strcasecmp(key, "path") != 0 || !*value || value[0] == '/' || strstr(value, ".."))
			continue;
		char sub[PATH_MAX + 300];
		snprintf(sub, sizeof(sub), "%s/%s", worktree, value);
		char *real = inside(pl, sub);
		if (real && strcmp(real, sub) == 0) {
			rc = guard_dotgit(pl, real, depth + 1);
			if (rc >= 0)
				rc = guard_submodules(pl, real, depth + 1);
		}
		free(real);
	}
	fclose(f);
	return rc;
}

/*
 * The nearest folder above `folder` that holds `name` (a folder of that name
 * when `dir`), as git looks for its work tree (`.git`, a folder or a file) and
 * hg for its repository (`.hg`); NULL when none (caller frees).
 */
static char *holder_above(const char *folder, const char *name, bool dir)
{
	char buf[PATH_MAX];
	snprintf(buf, sizeof(buf), "%s", folder);
	for (char *s = strrchr(buf, '/'); s && s != buf; s = strrchr(buf, '/')) {
		*s = '\0';
		char at[PATH_MAX + 8];
		struct stat st;
		snprintf(at, sizeof(at), "%s/%s", buf, name);
		if (dir ? stat(at, &st) == 0 && S_ISDIR(st.st_mode) : access(at, F_OK) == 0)
			return strdup(buf);
	}
	return NULL;
}

/*
 * The files `dir/.envrc` loads by name, which direnv runs on `cd` with no
 * new `direnv allow` (only the .envrc itself is hashed): `dotenv[_if_exists]
 * FILE` and `source_env[_if_exists] FILE` (or a folder: its .envrc), and
 * `source`/`.` of a file, relative to `dir`.  One command a line, its first
 * argument taken as written (quotes trimmed); what the line builds at run
 * time ($VARS) is left.  PATH_add and `layout` folders are not guarded: the
 * agent builds into them.
 */
static int guard_envrc(struct plan *pl, const char *dir)
{
	static const char *const loaders[] = {"dotenv", "dotenv_if_exists", "source_env",
					      "source_env_if_exists", "source", "."};
	char path[PATH_MAX + 16], line[4096];
	snprintf(path, sizeof(path), "%s/.envrc", dir);
	FILE *f = fopen_regular(path);
	int rc = 0;
	while (f && rc >= 0 && fgets(line, sizeof(line), f)) {
		char *s = trim(line), *arg = s + strcspn(s, " \t");
		if (!*arg)
			continue;
		*arg++ = '\0';
		arg = trim(arg);
		arg[strcspn(arg, " \t;&|#")] = '\0';
		size_t n = strlen(arg);
		if (n >= 2 && (arg[0] == '"' || arg[0] == '\'') && arg[n - 1] == arg[0]) {
			arg[n - 1] = '\0';
			arg++;
		}
		bool loads = false;
		for (size_t i = 0; i < OWS__ARRAY_LEN(loaders) && !loads; i++)
			loads = strcmp(s, loaders[i]) == 0;
		if (!loads || !*arg || arg[0] == '-' || strchr(arg, '$'))
			continue;
		/* `source_env DIR` loads DIR/.envrc. */
		char target[PATH_MAX + 16];
		int len = snprintf(target, sizeof(target), "%s", arg);
		char *full = strncmp(s, "source_env", 10) == 0 ? join(dir, arg, pl->err) : NULL;
		struct stat st;
		if (full && stat(full, &st) == 0 && S_ISDIR(st.st_mode) && len > 0 &&
		    (size_t)len < sizeof(target))
			snprintf(target + len, sizeof(target) - (size_t)len, "/.envrc");
		free(full);
		rc = guard_named(pl, dir, target, NULL, false, 0);
	}
	if (f)
		fclose(f);
	return rc < 0 ? rc : 0;
}

/* The tools' names at `dir` (a folder, or a work tree in it): the table, or the machine's list. */
static int guard_names(struct plan *pl, const char *dir, const ows_config *cfg)
{
	/* The machine's list, `default` standing for the built-in one; none set: the built-in. */
	const ows__strv *names = cfg ? &cfg->protect : NULL;
	bool builtin = !cfg || !cfg->protect_set;
	char path[PATH_MAX + 300];
	int rc = 0;
	for (size_t i = 0; names && i < names->len; i++)
		if (strcmp(names->v[i], "default") == 0)
			builtin = true;
	for (size_t i = 0; builtin && i < OWS__ARRAY_LEN(protect_default) && rc >= 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, protect_default[i].name);
		rc = guard_path(pl, path);
	}
	for (size_t i = 0; cfg && cfg->protect_set && i < names->len && rc >= 0; i++) {
		if (strcmp(names->v[i], "default") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names->v[i]);
		rc = guard_path(pl, path);
	}
	if (rc >= 0)
		rc = guard_envrc(pl, dir);
	return rc < 0 ? rc : 0;
}

/*
 * What `dothg`'s hgrc names in the folder: the files its %include lines
 * name, and the program of each shell hook (`pre-status = tools/h.sh`: the
 * first word, when it names a path, resolved from the repository's root,
 * where Mercurial runs it).  For a `.hg` in the folder and for one above it.
 */
static int guard_hgrc(struct plan *pl, const char *dothg)
{
	char path[PATH_MAX + 32], section[32] = "";
	snprintf(path, sizeof(path), "%s/hgrc", dothg);
	FILE *f = fopen_regular(path);
	char *root = ows__strdup(dothg, pl->err);
	if (root)
		*strrchr(root, '/') = '\0';
	int rc = root ? 0 : OWS_ENOMEM;
	char line[4096];
	while (f && rc >= 0 && fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq = strchr(s, '=');
		if (*s == '[') {
			size_t n = strcspn(s + 1, "]");
			snprintf(section, sizeof(section), "%.*s", (int)n, s + 1);
		} else if (strncmp(s, "%include", 8) == 0 && (s[8] == ' ' || s[8] == '\t')) {
			rc = guard_named(pl, dothg, trim(s + 8), NULL, false, 0);
		} else if (eq && strcmp(section, "hooks") == 0 && *s != '#' && *s != ';') {
			char *value = trim(eq + 1);
			if (strncmp(value, "python:", 7) != 0)
				rc = guard_hook_path(pl, true, value, root, 0);
		}
	}
	if (f)
		fclose(f);
	free(root);
	return rc < 0 ? rc : 0;
}

/*
 * A Mercurial repository: `.hg` pinned, and what Mercurial reads to decide
 * what to run bound read-only (or watched): hgrc (hooks, extensions), the
 * share's hgrc-not-shared and sharedpath (whose repository's hgrc a shared
 * one reads), and the files hgrc's %include lines name.
 */
static int guard_hg(struct plan *pl, const char *dothg)
{
	struct stat st;
	if (lstat(dothg, &st) != 0 || !S_ISDIR(st.st_mode) || !plain(dothg))
		return 0;
	int rc = add_unique(pl->pin, dothg, pl->err);
	static const char *const names[] = {"hgrc", "hgrc-not-shared", "sharedpath"};
	char path[PATH_MAX + 32];
	for (size_t i = 0; i < OWS__ARRAY_LEN(names) && rc >= 0; i++) {
		snprintf(path, sizeof(path), "%s/%s", dothg, names[i]);
		rc = guard_path(pl, path);
	}
	return rc < 0 ? rc : guard_hgrc(pl, dothg);
}


/* Moves what `r` holds into the known list (so the caller's free skips it). */
static int know(ows__guard_watch *g, ows__repo *r, ows_error *err)
{
	if (g->known.len == g->known.cap) {
		size_t cap = g->known.cap ? g->known.cap * 2 : 16;
		ows__repo *v = realloc(g->known.v, cap * sizeof(*v));
		if (!v)
			return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
		g->known.v = v;
		g->known.cap = cap;
	}
	g->known.v[g->known.len++] = *r;
	r->path = NULL;
	return 0;
}

/*
 * Every repository git or Mercurial would find in the folder (guard_walk.c),
 * each guarded as the folder's own: its git folder pinned, what git runs
 * from read-only, and the tools' names at its work tree.  What was found
 * is kept, so that the sweep knows what is new.
 */
static int guard_repos(struct plan *pl, const ows_config *cfg)
{
	ows__repos found = {0};
	int rc = ows__repos_find(pl->folder, false, &found, pl->err);
	pl->g->unread += found.unread;
	for (size_t i = 0; i < found.len && rc >= 0; i++) {
		const ows__repo *r = &found.v[i];
		char *dir = r->kind == OWS_REPO_DOTGIT ? ows__strdup(r->path, pl->err) : NULL;
		if (r->kind == OWS_REPO_DOTGIT && !dir) {
			rc = OWS_ENOMEM;
			break;
		}
		if (dir) {
			*strrchr(dir, '/') = '\0';
			rc = add_unique(&pl->worktrees, dir, pl->err);
			if (rc >= 0)
				rc = guard_dotgit(pl, dir, 0);
			if (rc >= 0)
				rc = guard_submodules(pl, dir, 0);
			if (rc >= 0 && strcmp(dir, pl->folder) != 0)
				rc = guard_names(pl, dir, cfg);
			free(dir);
		}
	}
	/* Git folders no `.git` led to: bare repositories, and what git keeps inside its own. */
	for (size_t i = 0; i < found.len && rc >= 0; i++) {
		const ows__repo *r = &found.v[i];
		char common[PATH_MAX + 16];
		snprintf(common, sizeof(common), "%s/commondir", r->path);
		if (r->kind == OWS_REPO_GITDIR && !listed(pl->pin, r->path))
			rc = guard_gitdir(pl, r->path, r->path,
					  access(common, F_OK) == 0 ? GITDIR_LINKED : GITDIR_REPO, 0);
		else if (r->kind == OWS_REPO_HG)
			rc = guard_hg(pl, r->path);
	}
	for (size_t i = 0; i < found.len && rc >= 0; i++)
		rc = know(pl->g, &found.v[i], pl->err);
	ows__repos_free(&found);
	return rc < 0 ? rc : 0;
}

/*
 * The person's git settings outside the folder, as git reads them for any
 * repository: the system's, the global and the XDG one.  What they name in
 * the folder (an included file, a relative core.hooksPath or fsmonitor
 * resolved in each work tree) is guarded like the repository's own.  Read,
 * never run: no git is started, so nothing in the folder runs while
 * planning.  Both places a system config may be (Debian's git and one
 * built with the default prefix), whatever the environment says.
 */
static int guard_outside_configs(struct plan *pl)
{
	const char *home = getenv("HOME"), *xdg = getenv("XDG_CONFIG_HOME");
	char *made[3] = {
		home ? ows__asprintf(pl->err, "%s/.gitconfig", home) : NULL,
		xdg && xdg[0] == '/' ? ows__asprintf(pl->err, "%s/git/config", xdg) : NULL,
		home ? ows__asprintf(pl->err, "%s/.config/git/config", home) : NULL,
	};
	const char *paths[] = {getenv("GIT_CONFIG_SYSTEM"), "/etc/gitconfig",
			       "/usr/local/etc/gitconfig", getenv("GIT_CONFIG_GLOBAL"),
			       made[0], made[1], made[2]};
	int rc = 0;
	for (size_t i = 0; i < OWS__ARRAY_LEN(paths) && rc >= 0; i++)
		if (paths[i] && paths[i][0] == '/')
			rc = guard_config(pl, paths[i], NULL, 0);
	for (size_t i = 0; i < OWS__ARRAY_LEN(made); i++)
		free(made[i]);
	return rc < 0 ? rc : 0;
}

static int record_mode(struct plan *pl, const char *path)
{
	ows__guard_watch *g = pl->g;
	struct stat st;
	if (lstat(path, &st) != 0 || S_ISLNK(st.st_mode))
		return 0;
	for (size_t i = 0; i < g->nmodes; i++)
		if (strcmp(g->modes[i].path, path) == 0)
			return 0;
	struct mode *v = realloc(g->modes, (g->nmodes + 1) * sizeof(*v));
	if (!v)
		return ows__fail(pl->err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	g->modes = v;
	if (!(v[g->nmodes].path = ows__strdup(path, pl->err)))
		return OWS_ENOMEM;
	v[g->nmodes].dev = st.st_dev;
	v[g->nmodes].ino = st.st_ino;
	v[g->nmodes].mode = st.st_mode & 07777;
	g->nmodes++;
	return 0;
}

/*
 * The modes the sweep keeps: of the folder, of what the guard binds, and of
 * every folder between them.  A bind holds inside the sandbox only; outside,
 * a world-writable folder on the way would let another local user swap
 * `.git` or its config under the person.
 */
static int record_modes(struct plan *pl)
{
	int rc = record_mode(pl, pl->folder);
	size_t base = strlen(pl->folder);
	for (size_t i = 0; i < pl->pin->len + pl->ro->len && rc == 0; i++) {
		const char *p = i < pl->pin->len ? pl->pin->v[i] : pl->ro->v[i - pl->pin->len];
		char buf[PATH_MAX];
		if (!under(p, pl->folder) || strlen(p) >= sizeof(buf))
			continue;
		snprintf(buf, sizeof(buf), "%s", p);
		for (char *s = strchr(buf + base + 1, '/'); s && rc == 0; s = strchr(s + 1, '/')) {
			*s = '\0';
			rc = record_mode(pl, buf);
			*s = '/';
		}
		if (rc == 0)
			rc = record_mode(pl, p);
	}
	return rc;
}

int ows__guard_plan(const char *folder, const ows_config *cfg, ows__strv *ro, ows__strv *pin,
		    ows__guard_watch **watchp, ows_error *err)
{
	if (!*watchp && !(*watchp = ows__calloc(1, sizeof(**watchp), err)))
		return OWS_ENOMEM;
	struct plan pl = {.folder = folder, .ro = ro, .pin = pin, .g = *watchp, .err = err};
	char path[PATH_MAX + 8];
	snprintf(path, sizeof(path), "%s/.git", folder);
	struct stat st;
	int rc = ows__strv_push(&pl.g->folders, folder, err);
	char *above = lstat(path, &st) == 0 ? NULL : holder_above(folder, ".git", false);
	if (above) {
		/* git run in the folder uses the repository above: a `.git` made here would shadow it. */
		rc = add_unique(&pl.worktrees, above, err);
		if (rc >= 0)
			rc = guard_dotgit(&pl, folder, 0);
		if (rc >= 0)
			rc = guard_outside_repo(&pl, above);
		free(above);
	}
	snprintf(path, sizeof(path), "%s/.hg", folder);
	char *hg = rc >= 0 && lstat(path, &st) != 0 ? holder_above(folder, ".hg", true) : NULL;
	if (hg) { /* its hgrc is outside, but may name a hook or an include in the folder */
		snprintf(path, sizeof(path), "%s/.hg", hg);
		rc = guard_hgrc(&pl, path);
	}
	free(hg);
	if (rc >= 0)
		rc = guard_submodules(&pl, folder, 0);
	if (rc >= 0)
		rc = guard_repos(&pl, cfg);
	if (rc >= 0)
		rc = guard_outside_configs(&pl);
	if (rc >= 0)
		rc = guard_names(&pl, folder, cfg);
	/* A machine that protects a git folder itself wants it read-only, not pinned. */
	for (size_t i = 0; i < pin->len; i++)
		if (listed(ro, pin->v[i])) {
			free(pin->v[i]);
			memmove(&pin->v[i], &pin->v[i + 1], (pin->len - i) * sizeof(pin->v[0]));
			pin->len--;
			i--;
		}
	if (rc >= 0)
		rc = record_modes(&pl);
	ows__strv_free(&pl.worktrees);
	return rc < 0 ? rc : 0;
}

int ows__guard_push(ows__guard_list *g, const char *path, bool is_file, bool pin, ows_error *err)
{
	ows__guard_entry *n = realloc(g->v, (g->len + 1) * sizeof(*n));
	if (!n)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	g->v = n;
	if (!(n[g->len].path = ows__strdup(path, err)))
		return OWS_ENOMEM;
	n[g->len].is_file = is_file;
	n[g->len].pin = pin;
	g->len++;
	return 0;
}

void ows__guard_free(ows__guard_list *g)
{
	for (size_t i = 0; i < g->len; i++)
		free(g->v[i].path);
	free(g->v);
	g->v = NULL;
	g->len = 0;
}

int ows__guard_add(ows__guard_list *g, const char *folder, const ows_config *cfg,
		   ows__guard_watch **watchp, ows_error *err)
{
	ows__strv ro = {0}, pin = {0};
	int rc = ows__guard_plan(folder, cfg, &ro, &pin, watchp, err);
	if (rc == 0 && g->len + pin.len + ro.len > OWS__GUARD_MAX)
		rc = ows__fail(err, OWS_EINVAL, E2BIG, folder,
			       "name the repositories you work in as session folders "
			       "(--rw ~/code/project) rather than the folder that holds them",
			       "the read-write folders hold too many repositories to guard: %zu "
			       "paths to bind over themselves, at most %d",
			       g->len + pin.len + ro.len, OWS__GUARD_MAX);
	for (size_t i = 0; i < pin.len + ro.len && rc == 0; i++) {
		bool is_pin = i < pin.len;
		const char *path = is_pin ? pin.v[i] : ro.v[i - pin.len];
		struct stat st;
		if (lstat(path, &st) == 0) /* else gone since the plan looked */
			rc = ows__guard_push(g, path, !S_ISDIR(st.st_mode), is_pin, err);
	}
	ows__strv_free(&ro);
	ows__strv_free(&pin);
	return rc;
}

/* ------------------------------------------------------------- the sweep */

/* Renames leaf to aside in dir, failing with EEXIST rather than replacing. */
static int rename_noreplace(int dir, const char *leaf, const char *aside)
{
#ifdef __APPLE__
	return renameatx_np(dir, leaf, dir, aside, RENAME_EXCL);
#else
	return renameat2(dir, leaf, dir, aside, RENAME_NOREPLACE);
#endif
}

/*
 * The folder that holds `path`, opened without following any link on the
 * way: the sweep runs as the person, and a link the agent planted must not
 * turn a rename in the folder into one elsewhere.
 */
static int open_parent(const char *path, const char **leaf)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path || !slash[1] || (size_t)(slash - path) >= PATH_MAX)
		return -1;
	*leaf = slash + 1;
	char dir[PATH_MAX];
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = '\0';
#ifdef __APPLE__
	/* O_NOFOLLOW_ANY: no link anywhere on the way, as RESOLVE_NO_SYMLINKS. */
	return open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW_ANY | O_CLOEXEC);
#else
	struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
			       .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
	return (int)syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
#endif
}

/* One line of the moved-aside list, which the person reads: the names in it are the
 * agent's, so it holds them escaped (ows_text_escape). */
static int push_shown(ows__strv *moved, ows_error *err, const char *raw)
{
	size_t cap = 4 * strlen(raw) + 1;
	char *shown = malloc(cap);
	if (!shown)
		return ows__fail(err, OWS_ENOMEM, ENOMEM, NULL, NULL, "out of memory");
	int rc = ows__strv_push(moved, ows_text_escape(shown, cap, raw), err);
	free(shown);
	return rc;
}

/*
 * Renames `leaf` in `dir` to LEAF.owsbx-moved-TAG (or -N beside earlier
 * ones) and appends the new path to `moved`; a failure is appended too,
 * with its reason: the person must know it is still there.
 */
static int move_leaf(int dir, const char *path, const char *leaf, const char *tag,
		     ows__strv *moved, ows_error *err)
{
	for (int n = 1; n < 100; n++) {
		char aside[NAME_MAX + 1];
		int len = n == 1 ? snprintf(aside, sizeof(aside), "%s.owsbx-moved-%.8s", leaf, tag)
				 : snprintf(aside, sizeof(aside), "%s.owsbx-moved-%.8s-%d", leaf, tag, n);
		if (len <= 0 || (size_t)len >= sizeof(aside))
			break;
		char *line = NULL;
		if (rename_noreplace(dir, leaf, aside) == 0)
			line = ows__asprintf(err, "%.*s%s", (int)(leaf - path), path, aside);
		else if (errno != EEXIST)
			line = ows__asprintf(err, "%s (not moved aside: %s)", path, strerror(errno));
		else
			continue;
		int rc = line ? push_shown(moved, err, line) : OWS_ENOMEM;
		free(line);
		return rc;
	}
	char *line = ows__asprintf(err, "%s (not moved aside: no free name)", path);
	int rc = line ? push_shown(moved, err, line) : OWS_ENOMEM;
	free(line);
	return rc;
}

static int move_aside(const char *path, const char *tag, ows__strv *moved, ows_error *err)
{
	const char *leaf;
	int dir = open_parent(path, &leaf);
	if (dir < 0)
		return 0; /* its folder is gone or became a link: nothing git would find */
	struct stat st;
	int rc = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0
		 ? move_leaf(dir, path, leaf, tag, moved, err) : 0;
	close(dir);
	return rc;
}

static bool is_known(const ows__guard_watch *g, const ows__repo *r)
{
	for (size_t i = 0; i < g->known.len; i++) {
		const ows__repo *k = &g->known.v[i];
		if (k->kind == r->kind && k->dev == r->dev && k->ino == r->ino &&
		    strcmp(k->path, r->path) == 0)
			return true;
	}
	return false;
}

/*
 * Every repository that was not there at the plan is made inert: a git
 * folder loses its HEAD first (git takes no folder without one; renaming
 * the folder alone would leave a repository that a `cd` into it finds),
 * then each new `.git` and `.hg` is moved aside.
 */
static int sweep_repos(ows__guard_watch *g, const char *tag, ows__strv *moved, ows_error *err)
{
	ows__repos found = {0};
	int rc = 0;
	for (size_t i = 0; i < g->folders.len && rc == 0; i++)
		rc = ows__repos_find(g->folders.v[i], true, &found, err);
	for (int pass = 0; pass < 2 && rc == 0; pass++)
		for (size_t i = 0; i < found.len && rc == 0; i++) {
			const ows__repo *r = &found.v[i];
			if (r->kind == OWS_REPO_FIFO || (r->kind == OWS_REPO_GITDIR) != (pass == 0) ||
			    is_known(g, r))
				continue;
			char head[PATH_MAX + 8];
			snprintf(head, sizeof(head), "%s/HEAD", r->path);
			rc = move_aside(pass == 0 ? head : r->path, tag, moved, err);
		}
	if (rc == 0 && found.unread > g->unread)
		rc = ows__strv_pushf(moved, err, "(%zu folders could not be read, so were not "
				     "searched for repositories)", found.unread - g->unread);
	ows__repos_free(&found);
	return rc;
}

int ows__guard_fifos_known(const ows__guard_watch *g, size_t max, ows__strv *out,
			   ows_error *err)
{
	size_t added = 0;
	for (size_t i = 0; g && i < g->known.len; i++) {
		const ows__repo *r = &g->known.v[i];
		bool dup = false;
		for (size_t j = 0; j < out->len && !dup; j++)
			dup = strcmp(out->v[j], r->path) == 0; /* a read-only folder's, nested */
		if (r->kind != OWS_REPO_FIFO || dup)
			continue;
		if (++added > max)
			return ows__fail(err, OWS_EINVAL, 0, r->path,
					 "remove the FIFOs from the read-write folder, or share a "
					 "narrower folder", "too many FIFOs in a read-write folder");
		int rc = ows__strv_push(out, r->path, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * A FIFO made in a read-write folder after the plan (by the person, or a
 * program of theirs: the agent cannot make one there) is not covered in the
 * view, and opening it would join whoever holds it outside; moving it aside
 * would not help (the agent can open it under any name).  So no command
 * starts while one is there.  A command already running cannot write into
 * it (its call's reaper opens for writing: channels.c), but may read from
 * it: the limit is in docs/promises.md.
 */
int ows__guard_fifos(const ows__guard_watch *g, ows_error *err)
{
	if (!g)
		return 0;
	ows__repos found = {0};
	int rc = 0;
	for (size_t i = 0; i < g->folders.len && rc == 0; i++)
		rc = ows__repos_find(g->folders.v[i], false, &found, err);
	for (size_t i = 0; i < g->fifo_only.len && rc == 0; i++)
		rc = ows__repos_find(g->fifo_only.v[i], false, &found, err);
	for (size_t i = 0; i < found.len && rc == 0; i++) {
		const ows__repo *r = &found.v[i];
		if (r->kind == OWS_REPO_FIFO && !is_known(g, r)) {
			/* The name may be anyone's: escaped (ows_text_escape). */
			char shown[4 * PATH_MAX + 1];
			ows_text_escape(shown, sizeof(shown), r->path);
			rc = ows__fail(err, OWS_ESPAWN, 0, shown,
				       "remove it, or close the session and open a new one (a FIFO "
				       "there at open is covered)",
				       "a FIFO appeared in a session folder after the session "
				       "opened: a command could reach whoever holds it outside");
		}
	}
	ows__repos_free(&found);
	return rc;
}

/*
 * A read-only folder below a folder the sandbox may write (its own /tmp):
 * Landlock's rights hold for all beneath a rule, so a FIFO made there after
 * the plan could be written from inside, read-only mount or not.  Its FIFOs
 * now are covered in the view; one that appears later stops the next
 * command, as in a read-write folder.
 */
int ows__guard_watch_fifos(ows__guard_watch **watchp, const char *folder, ows_error *err)
{
	if (!*watchp && !(*watchp = ows__calloc(1, sizeof(**watchp), err)))
		return OWS_ENOMEM;
	ows__guard_watch *g = *watchp;
	ows__repos found = {0};
	int rc = ows__strv_push(&g->fifo_only, folder, err);
	if (rc == 0)
		rc = ows__repos_find(folder, false, &found, err);
	for (size_t i = 0; i < found.len && rc == 0; i++)
		if (found.v[i].kind == OWS_REPO_FIFO)
			rc = know(g, &found.v[i], err);
	ows__repos_free(&found);
	return rc;
}

/* Puts back each recorded mode that changed, on the same file only, never through a link. */
static int restore_modes(ows__guard_watch *g, ows__strv *restored, ows_error *err)
{
	int rc = 0;
	for (size_t i = 0; i < g->nmodes && rc == 0; i++) {
		const struct mode *m = &g->modes[i];
		const char *leaf;
		int dir = open_parent(m->path, &leaf);
		struct stat st;
		if (dir < 0)
			continue;
		if (fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == m->dev &&
		    st.st_ino == m->ino && !S_ISLNK(st.st_mode) && (st.st_mode & 07777) != m->mode) {
			if (fchmodat(dir, leaf, m->mode, AT_SYMLINK_NOFOLLOW) == 0)
				rc = ows__strv_pushf(restored, err, "%s (mode %04o put back to %04o)",
						     m->path, (unsigned)(st.st_mode & 07777),
						     (unsigned)m->mode);
			else
				rc = ows__strv_pushf(restored, err, "%s (mode %04o not put back to %04o: %s)",
						     m->path, (unsigned)(st.st_mode & 07777),
						     (unsigned)m->mode, strerror(errno));
		}
		close(dir);
	}
	return rc;
}

int ows__guard_sweep(ows__guard_watch *g, const char *tag, ows__strv *moved, ows__strv *modes,
		     ows_error *err)
{
	if (!g)
		return 0;
	int rc = 0;
	for (size_t i = 0; i < g->len && rc == 0; i++) {
		const struct watch *w = &g->v[i];
		const char *leaf;
		int dir = open_parent(w->path, &leaf);
		if (dir < 0)
			continue; /* its folder is gone or became a link: nothing git would find */
		struct stat st;
		bool appeared = fstatat(dir, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
				!(w->link && S_ISLNK(st.st_mode) && st.st_dev == w->dev &&
				  st.st_ino == w->ino);
		if (appeared)
			rc = move_leaf(dir, w->path, leaf, tag, moved, err);
		close(dir);
	}
	if (rc == 0)
		rc = sweep_repos(g, tag, moved, err);
	if (rc == 0 && modes)
		rc = restore_modes(g, modes, err);
	return rc;
}

void ows__guard_watch_free(ows__guard_watch *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->len; i++)
		free(g->v[i].path);
	free(g->v);
	ows__strv_free(&g->folders);
	ows__repos_free(&g->known);
	ows__strv_free(&g->fifo_only);
	for (size_t i = 0; i < g->nmodes; i++)
		free(g->modes[i].path);
	free(g->modes);
	free(g);
}

/* owsbx's argument parsing, kept apart from main so that tests can call it. */
#ifndef OWSBX_ARGS_H
#define OWSBX_ARGS_H

#include <stdbool.h>
#include <stdio.h>

#include "owsandbox.h"

/* Exit statuses, as in the sandbox-exec shim this follows. */
enum {
	OWSBX_EXIT_USAGE = 2,    /* bad usage or bad input */
	OWSBX_EXIT_WALL = 70,    /* the wall could not be set up or failed its proof */
	OWSBX_EXIT_START = 71,   /* the command could not start */
};

typedef enum owsbx_cmd {
	OWSBX_CMD_NONE = 0,
	OWSBX_CMD_RUN,
	OWSBX_CMD_VERIFY,
	OWSBX_CMD_REPORT,
	OWSBX_CMD_CREDENTIALS,
	OWSBX_CMD_MACHINE,
	OWSBX_CMD_PROXY,
	OWSBX_CMD_CONNECT,
	OWSBX_CMD_APPARMOR,
	OWSBX_CMD_COMPLETION,
	OWSBX_CMD_RUNNER,
	OWSBX_CMD_HELP,
	OWSBX_CMD_VERSION,
} owsbx_cmd;

/*
 * One option of a command: the parser accepts exactly these, and the help
 * (and so the man page's test) lists exactly these.
 */
typedef struct owsbx_option {
	const char *name;   /* "--rw" */
	const char *alias;  /* "-y", or NULL */
	const char *value;  /* "DIR"; NULL for a switch */
	const char *help;   /* what it does */
} owsbx_option;

typedef struct owsbx_command {
	const char *name;             /* "run", "machine sandbox setup"; NULL ends the table */
	owsbx_cmd cmd;
	const char *usage;            /* what follows the name: "[OPTION]... [--] CMD [ARG]..." */
	const char *summary;          /* what it does, and its exit status where it has its own */
	const owsbx_option *options;  /* ends with {NULL} */
} owsbx_command;

/* Every command, in the order the help lists them. */
extern const owsbx_command owsbx_commands[];
/* Accepted in place of a command, and -h/--help after any command's name. */
extern const owsbx_option owsbx_global_options[];
/* This platform's providers, as --provider takes them: "landlock account ...". */
extern const char owsbx_provider_names[];

typedef struct owsbx_args {
	owsbx_cmd cmd;
	char help_topic[64];      /* help: the command asked about ("run", "machine"); "": all */
	ows_policy *policy;       /* owned; run and verify */
	const char *config_path;  /* --config, else $OWSBX_CONFIG, else NULL */
	const char *events_path;
	bool verbose;             /* run, verify: -v, print the plan on stderr first */
	bool dry_run;             /* run: -n, print the plan and run nothing */
	bool json;                /* report, credentials, machine status: JSON; verify: one line */
	const char *machine_verb; /* machine sandbox <verb> */
	bool yes;                 /* machine: --yes, do not ask */
	const char *for_user;     /* machine setup: --for-user */
	const char *machine_provider; /* machine sandbox status: --provider */
	const char *launcher_source; /* machine setup: --launcher-source */
	char **argv;              /* the command after "--", borrowed from main's argv */
	/* proxy: */
	const char **sites;       /* --allow-site, borrowed; nsites of them */
	size_t nsites;
	const char **site_files;  /* --allow-sites-file, borrowed */
	size_t nsite_files;
	const char **deny_sites;  /* --deny-site, borrowed, without the '!' owsbx_deny_pattern adds */
	size_t ndeny_sites;
	int port;                 /* --port, 0: 47800-47899 */
	const char *hosts_file;   /* --hosts-file (hidden, for tests) */
	int connect_timeout_ms;   /* --connect-timeout-ms (hidden) */
	int response_timeout_ms;  /* --response-timeout-ms (hidden) */
	int max_conns;            /* --max-conns (hidden) */
	/* connect: */
	const char *connect_host;
	int connect_port;
	const char *proxy_addr;   /* --proxy HOST:PORT, else $OWSBX_PROXY, else $HTTPS_PROXY */
	/* apparmor-profile: */
	const char *program;      /* the program the profile names */
	const char *profile_name; /* --name, else derived */
	const char *shell;        /* completion: bash or zsh */
	bool net_none;            /* run, verify: the last --net is none */
	const char *site_option;  /* run, verify: the last site option given ("--allow-site"), or NULL */
	/* runner: --probe and what it checks, borrowed from argv */
	struct {
		bool on;
		const char **rw, **ro, **absent; /* nrw, nro, nabsent of them */
		size_t nrw, nro, nabsent;
		const char *reach;   /* --reach ADDR:PORT */
		const char *refused; /* --refused HOST:PORT */
	} probe;
	const owsbx_command *command; /* the table's entry for cmd; NULL for help and version */
} owsbx_args;

/*
 * Parses argv into *a.  Returns 0, or OWSBX_EXIT_USAGE with the error in
 * *err (policy problems keep the library's own words).
 */
int owsbx_parse(int argc, char **argv, owsbx_args *a, ows_error *err);
void owsbx_args_free(owsbx_args *a);
/* --deny-site SITE as the library's deny entry, "!SITE" (a SITE given with its '!' is kept
 * as it is); NULL when out of memory, else the caller frees it. */
char *owsbx_deny_pattern(const char *site);
/* Splits a proxy address ("127.0.0.1:47800", "http://[::1]:47800/"); 0 or -1. */
int owsbx_split_proxy(const char *s, char *host, size_t cap, int *port);
/* Every command with its options, their meaning, the exit statuses and the environment. */
void owsbx_usage(FILE *out);
/*
 * One topic: a command's name ("run", "machine sandbox status") or a group
 * ("machine": its verbs); NULL for everything.  0, or -1 for an unknown topic.
 */
int owsbx_help(FILE *out, const char *topic);
/* A completion script for `shell` ("bash" or "zsh") from the tables above; 0, or -1. */
int owsbx_completion(FILE *out, const char *shell);

#endif

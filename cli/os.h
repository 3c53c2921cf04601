/*
 * The few things owsbx does differently per operating system, each one small
 * function: cli/os_posix.c for Linux and macOS, cli/win/os.c for Windows.
 * Everything else in cli/ is the same file on every OS.
 */
#ifndef OWSBX_OS_H
#define OWSBX_OS_H

#include <stdbool.h>

/* main.c's entry: the arguments in UTF-8 (on Windows, cli/win/os.c's wmain converts them). */
int owsbx_main(int argc, char **argv);

/* Calls handler on an interrupt or termination request (Ctrl-C, SIGTERM, SIGHUP). */
void owsbx_os_catch_signals(void (*handler)(int));
/* A closed pipe is an error a write returns, not a signal that ends owsbx. */
void owsbx_os_ignore_sigpipe(void);
/* The current folder, canonical, in UTF-8; caller frees; NULL when it cannot be read. */
char *owsbx_os_getcwd(void);
/* True when owsbx runs as root (POSIX) or elevated (Windows): setup and remove ask first. */
bool owsbx_os_is_admin(void);
/* Raises the soft limit of open descriptors to the hard one, where there is such a limit. */
void owsbx_os_raise_nofile(void);
/* The file `name` beside this owsbx when it exists (caller frees), else NULL. */
char *owsbx_os_beside_self(const char *name);
/* True when stderr is a terminal: what only a person reading along needs goes there then. */
bool owsbx_os_stderr_is_tty(void);
/* `owsbx runner` (cli/runner.c): an OpenShell sandbox's main command, or its proof. */
struct owsbx_args;
int owsbx_os_runner(const struct owsbx_args *a);
/* Sleeps ms milliseconds. */
void owsbx_os_sleep_ms(unsigned ms);

#endif

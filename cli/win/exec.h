/* `owsbx exec POLICY.json -- argv`: the AppContainer shim of spec 004 (cli/win/exec.c). */
#ifndef OWSBX_WIN_EXEC_H
#define OWSBX_WIN_EXEC_H

#define OWSBX_EXIT_SETUP 70 /* the container cannot be set up */
#define OWSBX_EXIT_START 71 /* the command cannot start */
#define OWSBX_EXIT_USAGE 2

/*
 * argv as after the command's name: POLICY.json -- COMMAND [ARG...].
 * Runs COMMAND in the policy's wall under the appcontainer provider and
 * returns its exit code, or one of the codes above.
 */
int owsbx_exec(int argc, char **argv);

#endif

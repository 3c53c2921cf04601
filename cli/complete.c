/*
 * `owsbx completion bash|zsh`: a completion script printed from the same
 * tables the parser and the help read (args.c), so that a command or an
 * option cannot be accepted and left out of the completion.  zsh loads the
 * bash script through bashcompinit.
 */
#include <stdio.h>
#include <string.h>

#include "args.h"

/* What a value is completed with, from the name the help gives it. */
static const char *value_words(const owsbx_option *o)
{
	if (strcmp(o->name, "--net") == 0)
		return "none allowlist open";
	if (strcmp(o->name, "--provider") == 0)
		return owsbx_provider_names;
	return NULL;
}

static const char *value_kind(const owsbx_option *o)
{
	if (strcmp(o->value, "DIR") == 0)
		return "-d";
	if (strcmp(o->value, "FILE") == 0)
		return "-f";
	return NULL;
}

/* The command's name as the words typed, each name's first word for the top level. */
static void print_top_words(FILE *out)
{
	const char *last = "";
	size_t last_n = 0;
	for (const owsbx_command *c = owsbx_commands; c->name; c++) {
		size_t n = strcspn(c->name, " ");
		if (last_n == n && strncmp(last, c->name, n) == 0)
			continue;
		fprintf(out, " %.*s", (int)n, c->name);
		last = c->name;
		last_n = n;
	}
}

static void print_values(FILE *out, const owsbx_command *c)
{
	for (const owsbx_option *o = c->options; o->name; o++) {
		if (!o->value)
			continue;
		const char *words = value_words(o), *kind = value_kind(o);
		fprintf(out, "\t\"%s %s\")", c->name, o->name);
		if (words)
			fprintf(out, " COMPREPLY=($(compgen -W \"%s\" -- \"$cur\"));;\n", words);
		else if (kind)
			fprintf(out, " COMPREPLY=($(compgen %s -- \"$cur\"));;\n", kind);
		else
			fputs(" COMPREPLY=();;\n", out);
	}
}

static void print_options(FILE *out, const owsbx_command *c)
{
	fprintf(out, "\t\"%s\") opts=\"", c->name);
	const char *sep = "";
	for (const owsbx_option *o = c->options; o->name; o++, sep = " ")
		fprintf(out, "%s%s", sep, o->name);
	for (const owsbx_option *o = owsbx_global_options; o->name; o++)
		if (strcmp(o->name, "--help") == 0)
			fprintf(out, "%s%s", sep, o->name);
	fputs("\";;\n", out);
}

static void print_bash(FILE *out)
{
	fputs("# owsbx's completion for bash (and zsh through bashcompinit), printed by\n"
	      "# `owsbx completion bash` from the tables its parser reads.\n"
	      "_owsbx() {\n"
	      "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	      "\tlocal cmd='' try='' i w opts=''\n"
	      "\t# The command: the longest name in the table that the first words spell.\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tw=${COMP_WORDS[i]}\n"
	      "\t\t[[ $w == -* ]] && break\n"
	      "\t\ttry=\"${try:+$try }$w\"\n"
	      "\t\tcase \" $_owsbx_commands \" in *\"|$try|\"*) cmd=$try ;; esac\n"
	      "\tdone\n"
	      "\tif [[ -z $cmd ]]; then\n"
	      "\t\tcase $try in\n"
	      "\t\t'') COMPREPLY=($(compgen -W \"",
	      out);
	print_top_words(out);
	fputs("\" -- \"$cur\")) ;;\n"
	      "\t\tmachine) COMPREPLY=($(compgen -W sandbox -- \"$cur\")) ;;\n"
	      "\t\t'machine sandbox') COMPREPLY=($(compgen -W \"",
	      out);
	for (const owsbx_command *c = owsbx_commands; c->name; c++)
		if (strncmp(c->name, "machine sandbox ", 16) == 0)
			fprintf(out, " %s", c->name + 16);
	fputs("\" -- \"$cur\")) ;;\n"
	      "\t\tesac\n"
	      "\t\treturn\n"
	      "\tfi\n"
	      "\t# run: what follows \"--\", or the first word past the options, is the command.\n"
	      "\tif [[ $cmd == run ]]; then\n"
	      "\t\tfor ((i = 2; i < COMP_CWORD; i++)); do\n"
	      "\t\t\tw=${COMP_WORDS[i]}\n"
	      "\t\t\tif [[ $w == -- ]]; then\n"
	      "\t\t\t\t((i + 1 == COMP_CWORD)) && COMPREPLY=($(compgen -c -- \"$cur\")) ||\n"
	      "\t\t\t\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "\t\t\t\treturn\n"
	      "\t\t\tfi\n"
	      "\t\tdone\n"
	      "\tfi\n"
	      "\tcase \"$cmd $prev\" in\n",
	      out);
	for (const owsbx_command *c = owsbx_commands; c->name; c++)
		print_values(out, c);
	fputs("\t*)\n"
	      "\t\tcase $cmd in\n"
	      "\t\thelp) COMPREPLY=($(compgen -W \"",
	      out);
	print_top_words(out);
	fputs("\" -- \"$cur\")) ;;\n"
	      "\t\tcompletion) COMPREPLY=($(compgen -W \"bash zsh\" -- \"$cur\")) ;;\n"
	      "\t\t*)\n"
	      "\t\t\tcase $cmd in\n",
	      out);
	for (const owsbx_command *c = owsbx_commands; c->name; c++)
		print_options(out, c);
	fputs("\t\t\tesac\n"
	      "\t\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
	      "\t\t\t;;\n"
	      "\t\tesac\n"
	      "\t\t;;\n"
	      "\tesac\n"
	      "}\n"
	      "_owsbx_commands='",
	      out);
	for (const owsbx_command *c = owsbx_commands; c->name; c++)
		fprintf(out, "|%s|", c->name);
	fputs("'\n"
	      "complete -o filenames -F _owsbx owsbx\n",
	      out);
}

int owsbx_completion(FILE *out, const char *shell)
{
	if (strcmp(shell, "bash") == 0) {
		print_bash(out);
		return 0;
	}
	if (strcmp(shell, "zsh") == 0) {
		fputs("#compdef owsbx\n"
		      "# owsbx's completion for zsh: the bash one, through bashcompinit.\n"
		      "autoload -U +X bashcompinit && bashcompinit\n",
		      out);
		print_bash(out);
		return 0;
	}
	return -1;
}

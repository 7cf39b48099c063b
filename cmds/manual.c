/* SPDX-License-Identifier: MIT */
/*
 * manual.c: the man pages and shell completions of `crumbs`, made from the
 * same option tables and help the commands parse and print with, so that
 * they never tell another story. `crumbs help --man [COMMAND]` writes a
 * page, `crumbs help --completion bash|zsh` a script; the build makes the
 * installed ones so (not in --help: they are for packagers).
 */
#include "cmds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What cmd_parse hands over, as the command's spec names it. */
static void (*spec_hook)(const struct cmd_spec *spec, const struct option_table *tables,
			 size_t count);

bool cmd_spec_hooked(const struct cmd_spec *spec, const struct option_table *tables,
		     size_t count)
{
	if (!spec_hook)
		return false;
	spec_hook(spec, tables, count);
	return true;
}

/* Runs command c as for its --help, for the hook to see its spec. */
static void visit(const struct cmd_command *c)
{
	static char help[] = "--help";
	char name[32];
	snprintf(name, sizeof(name), "%s", c->name);
	char *argv[] = { name, help, NULL };
	c->run(2, argv);
}

/* ------------------------------------------------------------------------ */
/* Man pages                                                                */
/* ------------------------------------------------------------------------ */

/* Text for roff: '\' as \e, '-' as \- (a minus, as options are typed),
 * and a line that would start with '.' or '\'' made text with \&. */
static void roff(FILE *out, const char *s, size_t len)
{
	bool line_start = true;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (line_start && (c == '.' || c == '\''))
			fputs("\\&", out);
		if (c == '\\')
			fputs("\\e", out);
		else if (c == '-')
			fputs("\\-", out);
		else
			fputc(c, out);
		line_start = c == '\n';
	}
}

static void roffs(FILE *out, const char *s)
{
	roff(out, s, strlen(s));
}

/* The help's paragraphs: prose is filled; a paragraph laid out in
 * columns (a line indented, or spaced within) is kept as it is. */
static void paragraphs(FILE *out, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *end = strstr(p, "\n\n");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		bool laid_out = false;
		for (size_t i = 0; i < len; i++)
			if ((i == 0 || p[i - 1] == '\n') ? p[i] == ' ' :
			    (p[i] == ' ' && i + 1 < len && p[i + 1] == ' '))
				laid_out = true;
		fputs(laid_out ? ".PP\n.nf\n" : ".PP\n", out);
		roff(out, p, len);
		fputs(laid_out ? "\n.fi\n" : "\n", out);
		p += len;
		while (*p == '\n')
			p++;
	}
}

static const char *version_text;
static const struct cmd_command *all_commands;
static size_t all_count;

static void upper(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s >= 'a' && *s <= 'z' ? *s - 'a' + 'A' : *s, out);
}

static void see_also(FILE *out, const char *except)
{
	fputs(".SH SEE ALSO\n", out);
	bool first = true;
	if (except) {
		fputs(".BR crumbs (1)", out);
		first = false;
	}
	for (size_t i = 0; i < all_count; i++) {
		if (except && strcmp(all_commands[i].name, except) == 0)
			continue;
		fprintf(out, "%s.BR crumbs\\-%s (1)", first ? "" : ",\n", all_commands[i].name);
		first = false;
	}
	fputs("\n", out);
}

static void man_page(const struct cmd_spec *spec, const struct option_table *tables,
		     size_t count)
{
	FILE *out = stdout;
	const struct cmd_command *c = NULL;
	for (size_t i = 0; i < all_count; i++)
		if (strcmp(all_commands[i].name, spec->name) == 0)
			c = &all_commands[i];
	fputs(".TH CRUMBS\\-", out);
	upper(out, spec->name);
	fprintf(out, " 1 \"\" \"crumbs %s\" \"crumbs manual\"\n", version_text);
	fprintf(out, ".SH NAME\ncrumbs\\-%s \\- ", spec->name);
	roffs(out, c ? c->help : spec->name);
	fputs("\n.SH SYNOPSIS\n.B ", out);
	const char *usage = spec->usage;
	size_t head = strlen("crumbs ") + strlen(spec->name);
	if (strncmp(usage, "crumbs ", 7) == 0 && strlen(usage) >= head) {
		fprintf(out, "crumbs %s\n", spec->name);
		roffs(out, usage + head + (usage[head] == ' '));
	} else {
		roffs(out, usage);
	}
	fputs("\n.SH DESCRIPTION\n", out);
	paragraphs(out, spec->description);
	if (spec->description_more)
		paragraphs(out, spec->description_more);
	fputs(".SH OPTIONS\n", out);
	for (size_t t = 0; t < count; t++)
		for (size_t i = 0; i < tables[t].count; i++) {
			const struct option_spec *o = &tables[t].specs[i];
			fputs(".TP\n", out);
			if (o->short_name)
				fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
			fputs("\\fB\\-\\-", out);
			roffs(out, o->name);
			fputs("\\fR", out);
			if (o->value) {
				fputs(" \\fI", out);
				roffs(out, o->value);
				fputs("\\fR", out);
			}
			fputs("\n", out);
			roffs(out, o->help);
			fputs("\n", out);
		}
	if (spec->environment) {
		fputs(".SH ENVIRONMENT\n.nf\n", out);
		/* Its lines are indented two spaces in the help. */
		for (const char *l = spec->environment; *l;) {
			const char *nl = strchr(l, '\n');
			size_t len = nl ? (size_t)(nl - l) : strlen(l);
			const char *text = l;
			if (len >= 2 && text[0] == ' ' && text[1] == ' ') {
				text += 2;
				len -= 2;
			}
			roff(out, text, len);
			fputs("\n", out);
			l = nl ? nl + 1 : l + strlen(l);
		}
		fputs(".fi\n", out);
	}
	fputs(".SH EXIT STATUS\n0 on success, 1 on failure, 2 on a usage error "
	      "(the description says where a command differs).\n", out);
	see_also(out, spec->name);
}

/* crumbs(1): the commands, --help and --version. */
static void man_crumbs(void)
{
	FILE *out = stdout;
	fprintf(out, ".TH CRUMBS 1 \"\" \"crumbs %s\" \"crumbs manual\"\n", version_text);
	fputs(".SH NAME\ncrumbs \\- capture GPU frames of Vulkan programs and print their "
	      "timing tables\n.SH SYNOPSIS\n.B crumbs\n.I COMMAND\n[\\fIARGS\\fR]\n.br\n"
	      ".B crumbs \\-\\-version\n.SH DESCRIPTION\n", out);
	fputs("crumbs captures GPU frames of Vulkan programs and prints their timing "
	      "tables.\nEach command has a page of its own, and \\fBcrumbs\\fR \\fICOMMAND\\fR "
	      "\\fB\\-\\-help\\fR says the same.\n.SH COMMANDS\n", out);
	for (size_t i = 0; i < all_count; i++) {
		fprintf(out, ".TP\n.BR crumbs\\-%s (1)\n", all_commands[i].name);
		roffs(out, all_commands[i].help);
		fputs("\n", out);
	}
	fputs(".SH OPTIONS\n.TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow the commands\n"
	      ".TP\n\\fB\\-\\-version\\fR\nprint the version of crumbs and of the capture format "
	      "it writes\n", out);
	see_also(out, NULL);
}

/* ------------------------------------------------------------------------ */
/* Completions                                                              */
/* ------------------------------------------------------------------------ */

/* The commands' options as the hook saw them, for the scripts. */
static struct sbuf script;
static const char *shell;

/* Text for zsh's _arguments inside '...': its own quote closed and
 * reopened, and the characters that end a part ([]:) escaped. */
static void zsh_text(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		if (*s == '\'')
			sbuf_adds(b, "'\\''");
		else if (*s == '[' || *s == ']' || *s == ':' || *s == '\\')
			sbuf_addf(b, "\\%c", *s);
		else
			sbuf_add(b, s, 1);
	}
}

static void completion_spec(const struct cmd_spec *spec, const struct option_table *tables,
			    size_t count)
{
	struct sbuf *b = &script;
	if (strcmp(shell, "bash") == 0) {
		sbuf_addf(b, "\t%s)\n\t\topts='", spec->name);
		for (size_t t = 0; t < count; t++)
			for (size_t i = 0; i < tables[t].count; i++) {
				const struct option_spec *o = &tables[t].specs[i];
				sbuf_addf(b, "--%s ", o->name);
				if (o->short_name)
					sbuf_addf(b, "-%c ", o->short_name);
			}
		sbuf_adds(b, "'\n\t\tcase $prev in\n");
		for (size_t t = 0; t < count; t++)
			for (size_t i = 0; i < tables[t].count; i++) {
				const struct option_spec *o = &tables[t].specs[i];
				if (!o->value)
					continue;
				sbuf_addf(b, "\t\t--%s", o->name);
				if (o->short_name)
					sbuf_addf(b, "|-%c", o->short_name);
				if (o->kind == OPT_CHOICE && o->names) {
					sbuf_adds(b, ") COMPREPLY=($(compgen -W '");
					for (size_t k = 0; o->names[k]; k++)
						sbuf_addf(b, "%s%s", k ? " " : "", o->names[k]);
					sbuf_adds(b, "' -- \"$cur\")); return ;;\n");
				} else if (o->kind == OPT_FILE) {
					sbuf_adds(b, ") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n");
				} else {
					sbuf_adds(b, ") return ;;\n");
				}
			}
		sbuf_adds(b, "\t\tesac ;;\n");
		return;
	}
	sbuf_addf(b, "\t%s)\n\t\t_arguments -s \\\n", spec->name);
	for (size_t t = 0; t < count; t++)
		for (size_t i = 0; i < tables[t].count; i++) {
			const struct option_spec *o = &tables[t].specs[i];
			bool many = strstr(o->help, "repeatable") != NULL;
			sbuf_adds(b, "\t\t\t");
			if (o->short_name)
				sbuf_addf(b, "'%s'{-%c,--%s}'", many ? "*" : "", o->short_name, o->name);
			else
				sbuf_addf(b, "'%s--%s", many ? "*" : "", o->name);
			sbuf_adds(b, "[");
			zsh_text(b, o->help);
			sbuf_adds(b, "]");
			if (o->value) {
				sbuf_adds(b, ":");
				zsh_text(b, o->value);
				sbuf_adds(b, ":");
				if (o->kind == OPT_CHOICE && o->names) {
					sbuf_adds(b, "(");
					for (size_t k = 0; o->names[k]; k++)
						sbuf_addf(b, "%s%s", k ? " " : "", o->names[k]);
					sbuf_adds(b, ")");
				} else if (o->kind == OPT_FILE) {
					sbuf_adds(b, "_files");
				}
			}
			sbuf_adds(b, "' \\\n");
		}
	if (spec->stop_at_positional)
		sbuf_adds(b, "\t\t\t'(-)1:program:_command_names -e' '*::arguments:_normal' ;;\n");
	else
		sbuf_adds(b, "\t\t\t'*:capture:_files' ;;\n");
}

static void bash_script(void)
{
	printf("# bash completion for crumbs: its commands and their options, made by\n"
	       "# 'crumbs help --completion bash' from the tables it parses them with.\n"
	       "_crumbs()\n{\n"
	       "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= opts= i\n"
	       "\t[ \"$COMP_CWORD\" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}\n"
	       "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	       "\t\tcase ${COMP_WORDS[i]} in\n"
	       "\t\t-*) ;;\n"
	       "\t\t*) cmd=${COMP_WORDS[i]}; break ;;\n"
	       "\t\tesac\n"
	       "\tdone\n"
	       "\tif [ -z \"$cmd\" ]; then\n"
	       "\t\tCOMPREPLY=($(compgen -W '");
	for (size_t i = 0; i < all_count; i++)
		printf("%s ", all_commands[i].name);
	printf("help --help -h --version' -- \"$cur\"))\n\t\treturn\n\tfi\n"
	       "\t# After capture's '--', the program's own words.\n"
	       "\tfor ((i = i + 1; i < COMP_CWORD; i++)); do\n"
	       "\t\tif [ \"$cmd\" = capture ] && [ \"${COMP_WORDS[i]}\" = -- ]; then\n"
	       "\t\t\tCOMPREPLY=($(compgen -c -f -- \"$cur\"))\n\t\t\treturn\n\t\tfi\n\tdone\n"
	       "\tcase $cmd in\n"
	       "\thelp) COMPREPLY=($(compgen -W '");
	for (size_t i = 0; i < all_count; i++)
		printf("%s ", all_commands[i].name);
	printf("' -- \"$cur\")); return ;;\n%s\tesac\n"
	       "\tcase $cur in\n"
	       "\t-*) COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\")) ;;\n"
	       "\t*) COMPREPLY=($(compgen -f -- \"$cur\")) ;;\n"
	       "\tesac\n}\n"
	       "complete -o filenames -o bashdefault -F _crumbs crumbs\n",
	       script.data ? script.data : "");
}

static void zsh_script(void)
{
	printf("#compdef crumbs\n"
	       "# zsh completion for crumbs: its commands and their options, made by\n"
	       "# 'crumbs help --completion zsh' from the tables it parses them with.\n"
	       "_crumbs() {\n"
	       "\tlocal -a commands\n"
	       "\tcommands=(\n");
	for (size_t i = 0; i < all_count; i++) {
		struct sbuf d = { 0 };
		zsh_text(&d, all_commands[i].help);
		printf("\t\t'%s:%s'\n", all_commands[i].name, d.data ? d.data : "");
		sbuf_release(&d);
	}
	printf("\t\t'help:describe a command'\n\t)\n"
	       "\tif (( CURRENT == 2 )); then\n"
	       "\t\t_describe -t commands 'crumbs command' commands\n"
	       "\t\t_arguments '(- *)'{-h,--help}'[show the commands]' "
	       "'(- *)--version[print the version]'\n"
	       "\t\treturn\n\tfi\n"
	       "\tlocal cmd=$words[2]\n"
	       "\tshift words\n"
	       "\t(( CURRENT-- ))\n"
	       "\tcase $cmd in\n"
	       "\thelp)\n\t\t_describe -t commands 'crumbs command' commands ;;\n"
	       "%s\tesac\n}\n"
	       "_crumbs \"$@\"\n", script.data ? script.data : "");
}

int cmd_manual(int argc, char **argv, const struct cmd_command *commands, size_t count,
	       const char *version)
{
	all_commands = commands;
	all_count = count;
	version_text = version;
	/* argv[0] is --man or --completion. */
	if (strcmp(argv[0], "--man") == 0) {
		if (argc == 1) {
			man_crumbs();
			return cmd_finish(EXIT_OK);
		}
		for (size_t i = 0; argc == 2 && i < count; i++)
			if (strcmp(argv[1], commands[i].name) == 0) {
				spec_hook = man_page;
				visit(&commands[i]);
				spec_hook = NULL;
				return cmd_finish(EXIT_OK);
			}
		cmd_error("'crumbs help --man' takes a crumbs command, or none");
		return EXIT_USAGE;
	}
	if (argc != 2 || (strcmp(argv[1], "bash") != 0 && strcmp(argv[1], "zsh") != 0)) {
		cmd_error("'crumbs help --completion' takes bash or zsh");
		return EXIT_USAGE;
	}
	shell = argv[1];
	spec_hook = completion_spec;
	for (size_t i = 0; i < count; i++)
		visit(&commands[i]);
	spec_hook = NULL;
	if (script.failed) {
		sbuf_release(&script);
		cmd_error("out of memory");
		return EXIT_FAILURE_;
	}
	if (strcmp(shell, "bash") == 0)
		bash_script();
	else
		zsh_script();
	sbuf_release(&script);
	return cmd_finish(EXIT_OK);
}

/* SPDX-License-Identifier: MIT */
/*
 * cmds_main.c: cmds/main.c, the table of subcommands and the helpers they
 * share, for the fuzz targets that call them. Those have a main() of
 * their own (libFuzzer's, or replay.c's), so crumbs' is cmds_main() here.
 */
int cmds_main(int argc, char **argv);
#define main cmds_main
#include "../../cmds/main.c"

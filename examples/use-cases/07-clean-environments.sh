#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 07-clean-environments - what a setuid program, env -i, a program root
# starts with a reset environment (as sudo does) and a service started with
# a clean environment get: the environment and the user scope are skipped
# by setuid programs (docs/SPEC.md section 5), and the scopes give the
# others their values.
#
#   examples/use-cases/07-clean-environments.sh [--impl fuse|kernel] [--build DIR] [--packages DIR]
#
# The link of 03-headers, and one without a default.  Run as root; see
# lib.sh.
. "$(dirname "$0")/lib.sh"
uc_start "$@"
cd "$W"

uc_title "The link of recipe 03, and one without a default"
uc_link_sqlite
uc_run "ln -s '/usr/local/opt/sqlite/\${SQLITE_VERSION}' $VS/include-nodefault"
uc_as_nobody
OLDDIR=$(uc_root sqlite 1)/usr/include NEWDIR=$(uc_root sqlite 2)/usr/include
uc_say "$OLDDIR is $SQ_OLD's, $NEWDIR $SQ_NEW's."

uc_title "A setuid program"
uc_run "cp /usr/bin/realpath realpath-setuid && chmod 4755 realpath-setuid && ls -l realpath-setuid"
uc_run "as-nobody varsym set $VS SQLITE_VERSION=$SQ_NEW"
uc_run "as-nobody env SQLITE_VERSION=$SQ_NEW realpath /usr/local/include"
uc_want "$NEWDIR" "nobody's own process: its environment"
uc_run "as-nobody env SQLITE_VERSION=$SQ_NEW ./realpath-setuid /usr/local/include"
uc_want "$OLDDIR" "the setuid program nobody starts: neither its environment nor nobody's scope, the default"
uc_run "as-nobody env SQLITE_VERSION=$SQ_NEW ./realpath-setuid $VS/include-nodefault"
uc_want_has "Permission denied" "no default: the link does not resolve for it (EACCES)"
uc_run "varsym set -s $VS SQLITE_VERSION=$SQ_NEW"
uc_run "as-nobody ./realpath-setuid /usr/local/include $VS/include-nodefault"
uc_want "$NEWDIR
$NEWDIR" "the system scope, set by root, reaches it"
uc_run "varsym unset -s $VS SQLITE_VERSION && as-nobody varsym unset $VS SQLITE_VERSION"

uc_title "env -i, and what root starts with a reset environment"
uc_run "env -i realpath /usr/local/include"
uc_want "$OLDDIR" "env -i: the default"
uc_run "varsym set $VS SQLITE_VERSION=$SQ_NEW"
uc_want_has "root" "root's varsym set without -s says which scope it set"
uc_run "env -i realpath /usr/local/include; as-nobody env -i realpath /usr/local/include"
uc_want "$NEWDIR
$OLDDIR" "env -i as root: root's own scope; as nobody: nobody's, here none, so the default"
if command -v sudo >/dev/null; then
	uc_run "sudo realpath /usr/local/include"
	uc_want "$NEWDIR" "what sudo starts: root's own scope"
else
	uc_say "sudo is not installed here. What it starts runs with real uid 0 and a reset environment, as env -i run by root above: it follows root's own scope, then the system scope (docs/SPEC.md section 4)."
fi
uc_run "varsym unset -u $VS SQLITE_VERSION"

uc_title "A template into each user's home"
mkdir -p homes/nobody/.local/include homes/65534
chown -R 65534:65534 homes/nobody
uc_run "ln -s '\${HOME}/.local/include' $VS/home-include"
uc_run "as-nobody env HOME=$W/homes/nobody realpath $VS/home-include"
uc_want "$W/homes/nobody/.local/include" "a user's process: its HOME"
uc_run "as-nobody env -i realpath $VS/home-include; as-nobody env -i realpath -e $VS/home-include"
uc_want_has "$VS/home-include
realpath: $VS/home-include: No such file or directory" \
	"env -i: no HOME, the link does not resolve (ENOENT): realpath prints the link itself, realpath -e says so"
uc_run "as-nobody env HOME=$W/homes/nobody ./realpath-setuid $VS/home-include"
uc_want_has "Permission denied" "a setuid program: no HOME of the user's, EACCES"
uc_say "No built-in names the caller's home; a user's own scope can hold HOME for the processes that have none:"
uc_run "as-nobody varsym set $VS HOME=$W/homes/nobody && as-nobody env -i realpath $VS/home-include"
uc_want "$W/homes/nobody/.local/include" "env -i: HOME from nobody's scope"
uc_run "as-nobody varsym unset $VS HOME"
uc_say "\${@ruid} is there for every process but a setuid one, as a number:"
uc_run "ln -s '$W/homes/\${@ruid}' $VS/uid-dir && as-nobody env -i realpath $VS/uid-dir"
uc_want "$W/homes/65534" "env -i: the real uid"
uc_run "as-nobody ./realpath-setuid $VS/uid-dir"
uc_want_has "Permission denied" "a setuid program: @ruid unset, EACCES"

uc_title "A service started with a clean environment"
uc_say "Started apart from this shell (setsid -f: a new session, its parent gone), with no environment, as root and as a service user:"
uc_run "varsym set -s $VS SQLITE_VERSION=$SQ_NEW"
uc_run "setsid -f env -i realpath /usr/local/include >service-root.out; setsid -f as-nobody env -i realpath /usr/local/include >service-nobody.out; until [ -s service-root.out ] && [ -s service-nobody.out ]; do sleep 0.05; done; cat service-root.out service-nobody.out"
uc_want "$NEWDIR
$NEWDIR" "both: the system scope"
uc_run "varsym unset -s $VS SQLITE_VERSION"

uc_done

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 05-per-directory - versions chosen per project: with direnv, cd into a
# project sets its variables, and everything started there gets its
# versions; without a hook, a user's own values (varsym set -u), which all
# of that user's processes follow.
#
#   examples/use-cases/05-per-directory.sh [--impl fuse|kernel] [--build DIR] [--packages DIR]
#
# The links of 01-interpreter, 02-library and 03-headers; Debian's direnv
# (bookworm), unpacked by scripts/use-case-packages, not installed.  Run as
# root; see lib.sh.
. "$(dirname "$0")/lib.sh"
uc_start "$@"
cd "$W"
command -v cc >/dev/null || uc_cannot "no cc here"

uc_title "The links of recipes 01, 02 and 03"
uc_link_python
uc_link_attrs
uc_link_sqlite
uc_run "ln -s $(uc_root direnv 1)/usr/bin/direnv /usr/local/bin/direnv"

# what a process started here gets: attrs, sqlite3.h, and python3 where
# the mount follows the environment given to execve
WITH_PY=
uc_needs_execve_rule "python3 through its link, chosen by the project" && WITH_PY=1
cat >what <<EOF
#!/bin/sh
printf '%s: attrs %s, sqlite3.h %s' "\${PWD##*/}" \\
	"\$(/usr/bin/python3 -c 'import attr; print(attr.__version__)')" \\
	"\$(printf '#include <sqlite3.h>\\nSQLITE_VERSION\\n' | cc -E -P - | tail -n1 | tr -d '"')"
[ -z "$WITH_PY" ] || printf ', python3 %s' "\$(python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
echo
EOF
chmod 755 what
uc_run "cat what"

uc_title "direnv: each project's .envrc"
export HOME=$W/home XDG_CONFIG_HOME=$W/home/.config XDG_DATA_HOME=$W/home/.local/share XDG_CACHE_HOME=$W/home/.cache
mkdir -p "$HOME" old-project new-project
echo "export PYTHON_VERSION=$PY_OLD ATTRS_VERSION=$AT_OLD SQLITE_VERSION=$SQ_OLD" >old-project/.envrc
echo "export PYTHON_VERSION=$PY_NEW ATTRS_VERSION=$AT_NEW SQLITE_VERSION=$SQ_NEW" >new-project/.envrc
uc_run "cat old-project/.envrc new-project/.envrc"
uc_run "direnv allow old-project && direnv allow new-project"

uc_say "An interactive bash with direnv's hook, as in a ~/.bashrc; the user types:"
cat >session <<EOF
eval "\$(direnv hook bash)"
cd $W/old-project
../what
cd $W/new-project
../what
cd $W
./what
EOF
uc_run "cat session"
uc_run "bash --norc --noprofile -i <session 2>/dev/null"
want="old-project: attrs $AT_OLD, sqlite3.h $SQ_OLD${WITH_PY:+, python3 $PY_OLD}
new-project: attrs $AT_NEW, sqlite3.h $SQ_NEW${WITH_PY:+, python3 $PY_NEW}
work: attrs $AT_OLD, sqlite3.h $SQ_OLD${WITH_PY:+, python3 $PY_NEW}"
uc_want "$want" "cd picks the project's versions for everything started there, and leaving it drops them"
uc_say "Without the hook, for one command: direnv exec."
uc_run "direnv exec new-project ./what 2>/dev/null"
uc_want "work: attrs $AT_NEW, sqlite3.h $SQ_NEW${WITH_PY:+, python3 $PY_NEW}" "new-project's versions"

unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_CACHE_HOME

uc_title "Without a hook: a user's own values"
uc_say "The user nobody sets its own values; its processes follow them, root's do not."
uc_as_nobody
uc_run "as-nobody varsym set $VS ATTRS_VERSION=$AT_NEW SQLITE_VERSION=$SQ_NEW && as-nobody varsym list $VS"
uc_want "ATTRS_VERSION=$AT_NEW
SQLITE_VERSION=$SQ_NEW" "nobody's user scope"
uc_run "as-nobody ./what; ./what"
uc_want "work: attrs $AT_NEW, sqlite3.h $SQ_NEW${WITH_PY:+, python3 $PY_NEW}
work: attrs $AT_OLD, sqlite3.h $SQ_OLD${WITH_PY:+, python3 $PY_NEW}" "nobody's processes get its values; root's the defaults"
uc_run "as-nobody env ATTRS_VERSION=$AT_OLD ./what"
uc_want "work: attrs $AT_OLD, sqlite3.h $SQ_NEW${WITH_PY:+, python3 $PY_NEW}" "a process's own environment comes first"
if uc_needs_execve_rule "nobody's PYTHON_VERSION from its user scope choosing python3"; then
	uc_run "as-nobody varsym set $VS PYTHON_VERSION=$PY_OLD && as-nobody python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2])'"
	uc_want "$PY_OLD" "programs started through a link follow the user scope too"
	uc_run "as-nobody varsym unset $VS PYTHON_VERSION"
fi

uc_say "Kept in the user's own file (--save), which varsym load -u reads back: a line in ~/.profile brings the values back at each login, after a remount too."
mkdir "$W/nobody"
chown 65534:65534 "$W/nobody"
uc_run "as-nobody env HOME=$W/nobody varsym set --save $VS ATTRS_VERSION=$AT_NEW && cat $W/nobody/.config/varsym.conf"
uc_want_has "ATTRS_VERSION=$AT_NEW" "written to nobody's ~/.config/varsym.conf"
uc_run "as-nobody varsym unset $VS ATTRS_VERSION SQLITE_VERSION && as-nobody env HOME=$W/nobody varsym load -u $VS && as-nobody varsym list $VS"
uc_want "ATTRS_VERSION=$AT_NEW" "loaded back: exactly the file's values"
uc_run "as-nobody varsym unset $VS ATTRS_VERSION"

uc_done

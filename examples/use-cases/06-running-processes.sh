#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 06-running-processes - a change of the system scope, or of a user's own
# scope, reaches processes already running at their next lookup, without a
# restart: a long-lived shell reading the header itself, the programs it
# starts, and a make in the middle of its build.
#
#   examples/use-cases/06-running-processes.sh [--impl fuse|kernel] [--build DIR] [--packages DIR]
#
# The links of 01-interpreter and 03-headers.  Run as root; see lib.sh.
. "$(dirname "$0")/lib.sh"
uc_start "$@"
cd "$W"
command -v cc >/dev/null && command -v make >/dev/null || uc_cannot "no cc or make here"

uc_title "The links of recipes 01 and 03"
uc_link_python
uc_link_sqlite
uc_as_nobody

# A long-lived bash reading commands from a FIFO: ask N COMMAND runs
# COMMAND in shell N itself and prints what it wrote (into $A, which
# nobody's shell may write too).
A=$W/answers
mkdir -m 1777 "$A"
start_shell() {
	local n=$1
	shift
	mkfifo "$W/cmd$n"
	# read and write: an open that does not wait for the other end
	eval "exec $((6 + n))<>\"$W/cmd$n\""
	"$@" bash --norc --noprofile 0<&$((6 + n)) &
	UC_PIDS="$UC_PIDS $!"
	echo 'v() { local d n v; while read -r d n v; do [ "$d $n" = "#define SQLITE_VERSION" ] && { echo "${v//\"/}"; return; }; done </usr/local/include/sqlite3.h; }' >&$((6 + n))
}
ask() {
	local n=$1
	printf '$ %s    # in shell %s\n' "$2" "$n"
	rm -f "$A/$n"
	echo "{ $2; } >$A/$n.tmp 2>&1; mv $A/$n.tmp $A/$n" >&$((6 + n))
	local i
	for i in $(seq 400); do [ -e "$A/$n" ] && break; sleep 0.025; done
	[ -e "$A/$n" ] || uc_mismatch "shell $n did not answer '$2'"
	UC_OUT=$(cat "$A/$n") UC_RC=0
	[ -z "$UC_OUT" ] || printf '%s\n' "$UC_OUT" | sed 's/^/    /'
}

uc_title "A long-lived shell, and the system scope"
uc_say "Shell 1, a bash started now with no SQLITE_VERSION, reads sqlite3.h itself (v: a function, a builtin loop over the file, no new process):"
start_shell 1
ask 1 'echo $$; type v'
PID1=$(sed -n 1p <<<"$UC_OUT")
ask 1 'v'
uc_want "$SQ_OLD" "the default, $SQ_OLD"
uc_run "varsym set -s $VS SQLITE_VERSION=$SQ_NEW PYTHON_VERSION=$PY_OLD"
ask 1 'echo $$; v'
uc_want "$PID1
$SQ_NEW" "the same shell, not restarted, at its next lookup: $SQ_NEW"
ask 1 'python3 -c "import sys; print(\"%d.%d\" % sys.version_info[:2])"'
uc_want "$PY_OLD" "and a program it starts through a link: $PY_OLD"
uc_run "varsym unset -s $VS SQLITE_VERSION PYTHON_VERSION"
ask 1 'v'
uc_want "$SQ_OLD" "unset: the default again"

uc_title "A long-lived shell of a user, and its own scope"
start_shell 2 as-nobody
ask 2 'id -un; v'
uc_want "nobody
$SQ_OLD" "shell 2, nobody's: the default"
uc_run "as-nobody varsym set $VS SQLITE_VERSION=$SQ_NEW"
ask 2 'v'
uc_want "$SQ_NEW" "nobody's shell, at its next lookup: $SQ_NEW"
ask 1 'v'
uc_want "$SQ_OLD" "root's shell: still the default"
if uc_needs_execve_rule "a program nobody's shell starts through a link, chosen by nobody's scope"; then
	uc_run "as-nobody varsym set $VS PYTHON_VERSION=$PY_OLD"
	ask 2 'python3 -c "import sys; print(\"%d.%d\" % sys.version_info[:2])"'
	uc_want "$PY_OLD" "and a program it starts through a link: $PY_OLD"
	uc_run "as-nobody varsym unset $VS PYTHON_VERSION"
fi
uc_run "as-nobody varsym unset $VS SQLITE_VERSION"
ask 2 'v'
uc_want "$SQ_OLD" "unset: the default again"

uc_title "A build in the middle of its run"
cat >Makefile <<'EOF'
all: second
first:
	@printf '#include <sqlite3.h>\nSQLITE_VERSION\n' | $(CC) -E -P - | tail -n1
	@touch first-done
second: first
	@while [ ! -e go ]; do sleep 0.05; done
	@printf '#include <sqlite3.h>\nSQLITE_VERSION\n' | $(CC) -E -P - | tail -n1
EOF
uc_run "cat Makefile"
uc_say "make starts; once its first job has run, the system scope changes; then its second job runs:"
make -s >make.out 2>&1 &
MAKE=$!
UC_PIDS="$UC_PIDS $MAKE"
for i in $(seq 400); do [ -e first-done ] && break; sleep 0.025; done
uc_run "varsym set -s $VS SQLITE_VERSION=$SQ_NEW && touch go"
wait "$MAKE" || uc_mismatch "make failed: $(cat make.out)"
uc_run "cat make.out"
uc_want "\"$SQ_OLD\"
\"$SQ_NEW\"" "one make: its first job got $SQ_OLD, its second $SQ_NEW"
uc_run "varsym unset -s $VS SQLITE_VERSION"

uc_done

# SPDX-License-Identifier: GPL-2.0-only
# lib.sh - what the recipes of examples/use-cases/ share: their options, the
# private mount namespace they run in, the varsymfs mount, and the printing
# and checking of each step.  Sourced by each recipe, never run.
#
# A recipe takes, from its arguments or the environment:
#
#   --impl fuse|kernel     IMPL      the FUSE program (default) or the module
#   --build DIR            VARSYMFS  the FUSE program (DIR/varsymfs), and
#                          VARSYM    the varsym command (DIR/varsym)
#   --packages DIR         USE_CASES what scripts/use-case-packages fetched
#                                    (default build/use-cases)
#
# It runs as root in a mount namespace of its own (unshare -m
# --propagation private), where a tmpfs on /usr/local holds everything it
# makes: the varsymfs mount at /usr/local/varsym, the links, the versions'
# directories, its files.  Nothing outside the namespace changes, and the
# namespace and all it holds go when the recipe ends.  For the module
# (--impl kernel) varsymfs.ko must be loaded or installed already.
#
# Output: "$ COMMAND" then its output indented, "  -> what was checked",
# "  skipped: why"; a mismatch ends the recipe with "MISMATCH: ..." and
# exit status 1; a missing prerequisite, with exit status 2.

UC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
UC_NAME=$(basename "$0" .sh)
# where the recipe's links live: a template-mode mount
VS=/usr/local/varsym
# the recipe's own files, on the namespace's tmpfs
W=/usr/local/work

uc_die() { echo "$UC_NAME: $*" >&2; exit 2; }
# what this machine lacks for the recipe: exit status 77, "skipped"
uc_cannot() { echo "$UC_NAME: cannot run here: $*" >&2; exit 77; }

uc_usage() {
	sed -n '3,/^$/s/^# \{0,1\}//p' "$0" >&2
	echo "options: [--impl fuse|kernel] [--build DIR] [--packages DIR]" >&2
	exit 2
}

# uc_start "$@": read the options, check what the recipe needs, enter a
# private mount namespace (the recipe runs again there) and mount.
# --usr-overlay (before the options): an overlay on /usr first, so that
# the recipe may replace files of /usr for its namespace alone.
uc_start() {
	local overlay=
	[ "${1:-}" = --usr-overlay ] && { overlay=1; shift; }
	if [ -z "${UC_IN_NS:-}" ]; then
		while [ $# -gt 0 ]; do
			case $1 in
			--impl) IMPL=${2:?}; shift 2 ;;
			--impl=*) IMPL=${1#*=}; shift ;;
			--build) VARSYMFS=${2:?}/varsymfs; VARSYM=$2/varsym; shift 2 ;;
			--build=*) VARSYMFS=${1#*=}/varsymfs; VARSYM=${1#*=}/varsym; shift ;;
			--packages) USE_CASES=${2:?}; shift 2 ;;
			--packages=*) USE_CASES=${1#*=}; shift ;;
			-h|--help) uc_usage ;;
			*) echo "$UC_NAME: unknown argument $1" >&2; uc_usage ;;
			esac
		done
		IMPL=${IMPL:-fuse}
		VARSYMFS=$(realpath -m "${VARSYMFS:-$UC_TOP/build/varsymfs}")
		VARSYM=$(realpath -m "${VARSYM:-$(dirname "$VARSYMFS")/varsym}")
		USE_CASES=$(realpath -m "${USE_CASES:-$UC_TOP/build/use-cases}")
		case $IMPL in fuse|kernel) ;; *) uc_die "IMPL must be fuse or kernel, not $IMPL" ;; esac
		[ "$(id -u)" = 0 ] || uc_die "run it as root: it mounts, in a mount namespace of its own"
		[ "$IMPL" = kernel ] || [ -x "$VARSYMFS" ] || uc_die "no FUSE program $VARSYMFS (make)"
		[ -x "$VARSYM" ] || uc_die "no varsym command $VARSYM (make)"
		[ -f "$USE_CASES/table" ] ||
			uc_die "no packages in $USE_CASES: run scripts/use-case-packages (make use-case-packages)"
		export IMPL VARSYMFS VARSYM USE_CASES UC_IN_NS=1
		exec unshare -m --propagation private -- bash "$0"
	fi
	# from here on, in the namespace
	export PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin
	export LC_ALL=C.UTF-8
	unset PYTHONPATH PYTHONHOME PERL5LIB PYENV_VERSION PYENV_ROOT
	# no __pycache__ written into the unpacked packages
	export PYTHONDONTWRITEBYTECODE=1
	UC_DAEMON=
	UC_PIDS=
	trap uc_cleanup EXIT
	trap 'exit 130' INT TERM HUP
	if [ -n "$overlay" ]; then
		mount -t tmpfs -o mode=755 uc-usr /mnt ||
			uc_die "cannot mount a tmpfs on /mnt"
		mkdir /mnt/upper /mnt/work
		mount -t overlay -o lowerdir=/usr,upperdir=/mnt/upper,workdir=/mnt/work uc-usr /usr ||
			uc_cannot "no overlay on /usr (is the overlay file system available?)"
	fi
	mount -t tmpfs -o mode=755 uc-local /usr/local ||
		uc_die "cannot mount a tmpfs on /usr/local"
	mkdir -p "$VS" "$W" /usr/local/bin /usr/local/opt
	if [ "$IMPL" = fuse ]; then
		# no /etc/varsym.conf: the recipe starts from empty scopes
		VARSYM_CONF=$W/no-varsym.conf "$VARSYMFS" -f none "$VS" 2>"$W/daemon.err" &
		UC_DAEMON=$!
		local i
		for i in $(seq 200); do
			grep -qs " $VS " /proc/self/mountinfo && break
			kill -0 "$UC_DAEMON" 2>/dev/null || break
			sleep 0.05
		done
		grep -qs " $VS " /proc/self/mountinfo ||
			{ cat "$W/daemon.err" >&2; uc_die "the FUSE program did not mount"; }
	else
		mount -t varsymfs none "$VS" ||
			uc_die "mount -t varsymfs failed: is varsymfs.ko loaded (insmod) or installed?"
	fi
	ln -s "$VARSYM" /usr/local/bin/varsym
	echo "# $UC_NAME, on $(uc_impl_name)"
}

# uc_mount_search DIR OPTIONS: a second varsymfs mount, in search mode
# (docs/SPEC.md section 8), on DIR; unmounted at the end.
uc_mount_search() {
	mkdir -p "$1"
	if [ "$IMPL" = fuse ]; then
		VARSYM_CONF=$W/no-varsym.conf "$VARSYMFS" -f -o "$2" none "$1" 2>>"$W/daemon.err" &
		UC_DAEMONS="$UC_DAEMONS $!"
		local i
		for i in $(seq 200); do
			grep -qs " $1 " /proc/self/mountinfo && break
			sleep 0.05
		done
	else
		mount -t varsymfs -o "$2" none "$1"
	fi
	grep -qs " $1 " /proc/self/mountinfo || uc_die "no search mount on $1"
	UC_MOUNTS="$1 $UC_MOUNTS"
}

uc_impl_name() {
	if [ "$IMPL" = kernel ]; then
		echo "the kernel module (mount -t varsymfs none $VS)"
	else
		echo "the FUSE program (varsymfs none $VS)"
	fi
}

uc_cleanup() {
	local rc=$? p
	trap - EXIT
	for p in $UC_PIDS; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	cd /
	for p in ${UC_MOUNTS:-} "$VS"; do
		if grep -qs " $p " /proc/self/mountinfo; then
			umount "$p" 2>/dev/null || umount -l "$p"
		fi
	done
	for p in $UC_DAEMON ${UC_DAEMONS:-}; do
		wait "$p" 2>/dev/null || true
	done
	exit "$rc"
}

# ---- the packages ----------------------------------------------------------

# uc_label ROLE N: the version label of the Nth (1, 2) suite of ROLE in the
# table (python: 3.9; perl: 5.32.1; others: the upstream version).
uc_label() {
	local line pkg ver
	line=$(awk -v r="$1" '$1 == r' "$USE_CASES/table" | awk '!seen[$2]++' | sed -n "${2}p")
	[ -n "$line" ] || uc_die "no $1 number $2 in $USE_CASES/table"
	read -r _ _ pkg ver _ <<<"$line"
	case $1 in
	python) pkg=${pkg#python}; echo "${pkg%-minimal}" ;;
	*) ver=${ver#*:}; ver=${ver%-*}; echo "${ver%%[+~]*}" ;;
	esac
}

# uc_root ROLE N: the directory the Nth suite of ROLE is unpacked in.
uc_root() {
	local suite
	suite=$(awk -v r="$1" '$1 == r { print $2 }' "$USE_CASES/table" | awk '!seen[$0]++' | sed -n "${2}p")
	[ -n "$suite" ] || uc_die "no $1 number $2 in $USE_CASES/table"
	echo "$USE_CASES/root/$suite"
}

uc_suite() { basename "$(uc_root "$1" "$2")"; }

# ---- steps -----------------------------------------------------------------

uc_title() { printf '\n## %s\n' "$*"; }
uc_say() { printf '# %s\n' "$*" | fold -s -w 78 | sed -e 's/ *$//' -e '2,$s/^/# /'; }

# uc_run 'COMMAND': print it, run it with bash -c, as typed, print what
# it wrote (both streams) indented; UC_OUT and UC_RC hold them.
uc_run() {
	printf '$ %s\n' "$1"
	UC_OUT=$(bash -c "$1" 2>&1) && UC_RC=0 || UC_RC=$?
	[ -z "$UC_OUT" ] || printf '%s\n' "$UC_OUT" | sed 's/^/    /'
	[ "$UC_RC" = 0 ] || printf '    (exit status %s)\n' "$UC_RC"
	return 0
}

uc_mismatch() {
	printf 'MISMATCH: %s\n' "$*" >&2
	exit 1
}

# uc_want TEXT [WHAT]: the last command printed exactly TEXT, and succeeded.
uc_want() {
	[ "$UC_RC" = 0 ] || uc_mismatch "${2:-the command} failed (status $UC_RC); wanted: $1"
	[ "$UC_OUT" = "$1" ] || uc_mismatch "${2:-the command} printed '$UC_OUT'; wanted '$1'"
	printf '    -> %s\n' "${2:-as wanted}"
}

# uc_want_has TEXT [WHAT]: its output holds TEXT (whatever its status).
uc_want_has() {
	case $UC_OUT in
	*"$1"*) printf '    -> %s\n' "${2:-as wanted}" ;;
	*) uc_mismatch "${2:-the command} printed '$UC_OUT'; wanted it to hold '$1'" ;;
	esac
}

# uc_want_fail [WHAT]: it failed.
uc_want_fail() {
	[ "$UC_RC" != 0 ] || uc_mismatch "${1:-the command} succeeded; wanted a failure"
	printf '    -> %s\n' "${1:-failed, as wanted}"
}

uc_skip() { printf '  skipped: %s\n' "$*" | fold -s -w 78 | sed -e 's/ *$//' -e '2,$s/^/    /'; }

# uc_execve_rule: how the mount resolves the walks inside an execve of a
# program that gains no privilege (docs/SPEC.md section 4 and 5): "envp"
# (the execve rule: the module, or the FUSE program with its exec hooks),
# "own" (the exec hooks where envp cannot be read: the exec-time
# environment of the process calling execve), or "default" (the FUSE
# program without its exec hooks: every such walk as for a setuid program:
# the system scope, else the default).
uc_execve_rule() {
	local link mode
	[ "$IMPL" = kernel ] && { echo envp; return; }
	link=$W/.exec-mode-probe
	[ -L "$VS/.exec-mode-probe" ] || ln -s '/' "$VS/.exec-mode-probe"
	mode=$(/usr/bin/python3 -c 'import os, sys
print(os.getxattr(sys.argv[1], "system.varsym_exec", follow_symlinks=False).decode().split(":")[0])' \
		"$VS/.exec-mode-probe")
	rm -f "$VS/.exec-mode-probe"
	case $mode in
	"syscall only") echo default ;;
	"exec hooks")
		if [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null)" = 3 ]; then
			echo own
		else
			echo envp
		fi ;;
	*) echo envp ;;
	esac
}

# uc_needs_execve_rule: true where programs started through a variant link
# follow the environment given to execve; otherwise says why the step is
# skipped, and is false.
uc_needs_execve_rule() {
	UC_RULE=${UC_RULE:-$(uc_execve_rule)}
	[ "$UC_RULE" = envp ] && return 0
	if [ -n "${UC_SKIPPED:-}" ]; then
		uc_skip "$* (as above)"
	elif [ "$UC_RULE" = own ]; then
		uc_skip "$*: under Yama ptrace_scope 3 the FUSE program cannot" \
			"read the environment given to execve (docs/SPEC.md section 4)."
	else
		uc_skip "$*: the FUSE program without its exec hooks, as here," \
			"starts every program found through a variant link as it would" \
			"a setuid program's, from the system scope, else the default" \
			"(docs/SPEC.md section 5); the module and the exec hooks follow" \
			"the environment given to execve."
	fi
	UC_SKIPPED=1
	return 1
}

# uc_bg COMMAND...: run in the background, killed by pid at the end.
uc_bg() {
	"$@" &
	UC_PIDS="$UC_PIDS $!"
	UC_BG=$!
}

# ---- the links the recipes share -------------------------------------------

# uc_link_python: /usr/local/bin/python3, chosen by PYTHON_VERSION
# (01-interpreter.sh).  PY_OLD, PY_NEW: the two versions.
uc_link_python() {
	PY_OLD=$(uc_label python 1) PY_NEW=$(uc_label python 2)
	uc_run "mkdir -p /usr/local/opt/python && ln -s $(uc_root python 1)/usr /usr/local/opt/python/$PY_OLD && ln -s $(uc_root python 2)/usr /usr/local/opt/python/$PY_NEW"
	uc_run "ln -s '/usr/local/opt/python/\${PYTHON_VERSION:-$PY_NEW}/bin/python\${PYTHON_VERSION:-$PY_NEW}' $VS/python3 && ln -s $VS/python3 /usr/local/bin/python3"
}

# uc_link_attrs: the machine's python3 reads
# /usr/local/lib/pythonX.Y/dist-packages, chosen by ATTRS_VERSION
# (02-library.sh).  AT_OLD, AT_NEW: the two versions; SITE: that directory.
uc_link_attrs() {
	AT_OLD=$(uc_label attrs 1) AT_NEW=$(uc_label attrs 2)
	SITE=/usr/local/lib/python$(/usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages
	uc_run "mkdir -p /usr/local/opt/attrs && ln -s $(uc_root attrs 1)/usr/lib/python3/dist-packages /usr/local/opt/attrs/$AT_OLD && ln -s $(uc_root attrs 2)/usr/lib/python3/dist-packages /usr/local/opt/attrs/$AT_NEW"
	uc_run "ln -s '/usr/local/opt/attrs/\${ATTRS_VERSION:-$AT_OLD}' $VS/attrs && mkdir -p ${SITE%/*} && ln -s $VS/attrs $SITE"
}

# uc_link_sqlite: /usr/local/include, chosen by SQLITE_VERSION
# (03-headers.sh).  SQ_OLD, SQ_NEW: the two versions.
uc_link_sqlite() {
	SQ_OLD=$(uc_label sqlite 1) SQ_NEW=$(uc_label sqlite 2)
	uc_run "mkdir -p /usr/local/opt/sqlite && ln -s $(uc_root sqlite 1)/usr/include /usr/local/opt/sqlite/$SQ_OLD && ln -s $(uc_root sqlite 2)/usr/include /usr/local/opt/sqlite/$SQ_NEW"
	uc_run "ln -s '/usr/local/opt/sqlite/\${SQLITE_VERSION:-$SQ_OLD}' $VS/include && ln -s $VS/include /usr/local/include"
}

# uc_as_nobody: /usr/local/bin/as-nobody COMMAND runs COMMAND as the user
# nobody, its groups cleared, its environment kept.
uc_as_nobody() {
	printf '#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"\n' \
		>/usr/local/bin/as-nobody
	chmod 755 /usr/local/bin/as-nobody
	uc_run "cat /usr/local/bin/as-nobody"
}

uc_done() { printf '\n# %s: every check passed\n' "$UC_NAME"; }

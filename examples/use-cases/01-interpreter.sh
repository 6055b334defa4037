#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 01-interpreter - one python3 at a fixed path, /usr/local/bin/python3, whose
# version each process chooses with PYTHON_VERSION, in place of a version
# manager's shims: from a shell, a "#!/usr/bin/env python3" script, a script
# whose shebang is the fixed path, make; env -i and the system scope; a
# version that is not installed; pyenv's shims beside it.
#
#   examples/use-cases/01-interpreter.sh [--impl fuse|kernel] [--build DIR] [--packages DIR]
#
# Debian's python3.9 (bullseye) and python3.11 (bookworm), unpacked by
# scripts/use-case-packages.  Run as root; see lib.sh.
. "$(dirname "$0")/lib.sh"
uc_start "$@"

OLD=$(uc_label python 1) NEW=$(uc_label python 2)
VER='import sys; print("%d.%d" % sys.version_info[:2])'
echo "$VER" >"$W/version.py"
cd "$W"

uc_title "The two versions, where a site keeps them, and one link"
uc_run "mkdir /usr/local/opt/python"
uc_run "ln -s $(uc_root python 1)/usr /usr/local/opt/python/$OLD"
uc_run "ln -s $(uc_root python 2)/usr /usr/local/opt/python/$NEW"
uc_run "ln -s '/usr/local/opt/python/\${PYTHON_VERSION:-$NEW}/bin/python\${PYTHON_VERSION:-$NEW}' $VS/python3"
uc_run "ln -s $VS/python3 /usr/local/bin/python3"
uc_run "varsym show $VS/python3"
uc_want "/usr/local/opt/python/\${PYTHON_VERSION:-$NEW}/bin/python\${PYTHON_VERSION:-$NEW}" "the raw template"
uc_run "varsym show /usr/local/bin/python3"
uc_want "/usr/local/opt/python/\${PYTHON_VERSION:-$NEW}/bin/python\${PYTHON_VERSION:-$NEW}" "given the ordinary link, the variant link's template it leads to"

uc_title "What each process sees at the fixed path"
uc_say "A lookup that starts no program follows the environment of the process that makes it, on every implementation."
uc_run "readlink -f /usr/local/bin/python3"
uc_want "$(uc_root python 2)/usr/bin/python$NEW" "no PYTHON_VERSION: the default, $NEW"
uc_run "PYTHON_VERSION=$OLD readlink -f /usr/local/bin/python3"
uc_want "$(uc_root python 1)/usr/bin/python$OLD" "PYTHON_VERSION=$OLD: $OLD"
uc_run "PYTHON_VERSION=$OLD which python3"
uc_want "/usr/local/bin/python3" "which names the fixed path, whatever the version"

uc_title "Running it: the default, from anywhere"
uc_run "python3 version.py"
uc_want "$NEW" "no PYTHON_VERSION: $NEW"
uc_run "python3 -c 'import sys; print(sys.executable, sys.prefix)'"
uc_want "/usr/local/bin/python3 /usr/local/opt/python/$NEW" \
	"Python names the fixed path as its executable, and the version's directory as its prefix"
uc_run "python3 -c 'import site; print(*site.getsitepackages(), sep=\"\\n\")'"
uc_want "/usr/local/opt/python/$NEW/local/lib/python$NEW/dist-packages
/usr/local/opt/python/$NEW/lib/python3/dist-packages
/usr/local/opt/python/$NEW/lib/python$NEW/dist-packages" \
	"its site directories are under its prefix: not the machine's /usr/local/lib/python$NEW/dist-packages"

uc_title "Running it: chosen per process"
cat >"./env-shebang" <<EOF
#!/usr/bin/env python3
$VER
EOF
cat >"./fixed-shebang" <<EOF
#!/usr/local/bin/python3
$VER
EOF
printf 'all:\n\t@python3 version.py\n' >"$W/Makefile"
chmod 755 "./env-shebang" "./fixed-shebang"
uc_run "cat version.py env-shebang fixed-shebang Makefile"
if uc_needs_execve_rule "Choosing the version by the environment of the program started"; then
	uc_run "PYTHON_VERSION=$OLD python3 version.py"
	uc_want "$OLD" "from a shell, PYTHON_VERSION=$OLD: $OLD"
	uc_run "bash -c 'export PYTHON_VERSION=$OLD; python3 version.py; PYTHON_VERSION=$NEW python3 version.py'"
	uc_want "$OLD
$NEW" "an export in a running shell reaches every command it starts after it"
	uc_run "PYTHON_VERSION=$OLD ./env-shebang"
	uc_want "$OLD" "#!/usr/bin/env python3: $OLD"
	uc_run "PYTHON_VERSION=$OLD ./fixed-shebang"
	uc_want "$OLD" "#!/usr/local/bin/python3: $OLD, the shebang's fixed path chosen too"
	uc_run "PYTHON_VERSION=$OLD make -s"
	uc_want "$OLD" "make, and the shell it starts for each recipe line: $OLD"
	uc_run "PYTHON_VERSION=$OLD python3 -c 'import time; time.sleep(0.3); import version' >a.out & python3 -c 'import time; time.sleep(0.3); import version' >b.out; wait; cat a.out b.out"
	uc_want "$OLD
$NEW" "two processes at once, one path, two versions"
elif [ "$UC_RULE" = default ]; then
	uc_say "What happens instead: the program started is the default's, and its own lookups follow its environment, so Python $NEW looks for its library in $OLD's directory, finds none, and falls back to its compiled-in prefix:"
	uc_run "PYTHON_VERSION=$OLD python3 -c 'import sys; print(\"%d.%d\" % sys.version_info[:2], sys.prefix)' 2>/dev/null"
	[ "${UC_OUT%% *}" = "$NEW" ] && [ "${UC_OUT#* }" != "/usr/local/opt/python/$NEW" ] ||
		uc_mismatch "wanted Python $NEW with a prefix other than its own"
	printf '    -> Python %s, prefix %s: neither version as a whole\n' "$NEW" "${UC_OUT#* }"
fi

uc_title "env -i, and the system scope"
uc_run "env -i /usr/local/bin/python3 version.py"
uc_want "$NEW" "env -i: no PYTHON_VERSION, the default"
uc_run "varsym set -s $VS PYTHON_VERSION=$OLD"
uc_run "env -i /usr/local/bin/python3 version.py"
uc_want "$OLD" "env -i, with PYTHON_VERSION=$OLD in the system scope: $OLD"
uc_run "./fixed-shebang"
uc_want "$OLD" "every process that does not set PYTHON_VERSION: $OLD"
if uc_needs_execve_rule "A process's own PYTHON_VERSION over the system scope's"; then
	uc_run "PYTHON_VERSION=$NEW ./fixed-shebang"
	uc_want "$NEW" "the process's environment comes before the system scope"
fi
if command -v sudo >/dev/null; then
	uc_run "sudo /usr/local/bin/python3 version.py"
	uc_want "$OLD" "sudo: root's own scope, then the system scope: $OLD"
else
	uc_say "sudo is not installed here: 07-clean-environments.sh shows what a setuid program and a program started by root with a reset environment, as sudo starts it, get."
fi
uc_run "varsym unset -s $VS PYTHON_VERSION"

uc_title "A version that is not installed"
uc_run "PYTHON_VERSION=3.7 readlink -e /usr/local/bin/python3"
uc_want_fail "readlink -e: the path leads nowhere"
uc_run "ls -l /usr/local/bin/python3"
uc_want_has "/usr/local/bin/python3 -> $VS/python3" "ls shows the fixed link, which exists"
if uc_needs_execve_rule "Starting PYTHON_VERSION=3.7 python3"; then
	uc_say "bash, whose own environment leads to a file there, blames a missing interpreter:"
	uc_run "PYTHON_VERSION=3.7 python3 -V"
	uc_want_has "/usr/local/bin/python3: cannot execute: required file not found" \
		"the error names the fixed path, not the missing version"
fi
uc_run "varsym explain --env PYTHON_VERSION=3.7 /usr/local/bin/python3 | grep -E 'PYTHON_VERSION = |ENOENT|there '"
uc_want_has "3.7 - ENOENT" "varsym explain names the missing directory"
uc_want_has "there     $OLD, $NEW" "and the versions installed beside it"

uc_title "Beside it: a search mount, as envfs does it"
uc_say "In search mode every name is the first DIR/NAME of the caller's PATH, then of the fallback list (docs/SPEC.md section 8): the version is chosen by PATH."
uc_mount_search /usr/local/pathbin "search,fallback=/usr/local/opt/python/$NEW/bin"
uc_run "PATH=/usr/local/opt/python/$OLD/bin:/usr/bin:/bin readlink /usr/local/pathbin/python3"
uc_want "/usr/local/opt/python/$OLD/bin/python3" "PATH with $OLD's bin: $OLD's python3"
uc_run "env -i /usr/bin/readlink /usr/local/pathbin/python3"
uc_want "/usr/local/opt/python/$NEW/bin/python3" "env -i: no PATH, the fallback's"
if uc_needs_execve_rule "Starting python3 through the search mount by the caller's PATH"; then
	uc_run "PATH=/usr/local/opt/python/$OLD/bin:/usr/bin:/bin /usr/local/pathbin/python3 version.py"
	uc_want "$OLD" "started by PATH: $OLD"
fi

uc_title "Beside it: pyenv's shims (Debian's pyenv, unpacked)"
PYENV=$(uc_root pyenv 1)/usr/bin/pyenv
if [ -x "$PYENV" ]; then
	uc_run "export PYENV_ROOT=$W/pyenv; mkdir -p \$PYENV_ROOT/versions"
	export PYENV_ROOT=$W/pyenv
	uc_run "ln -s /usr/local/opt/python/$OLD \$PYENV_ROOT/versions/$OLD; ln -s /usr/local/opt/python/$NEW \$PYENV_ROOT/versions/$NEW"
	uc_run "$PYENV rehash && $PYENV global $NEW && ls \$PYENV_ROOT/shims"
	uc_want_has python3 "a shim for every program of every version"
	uc_run "PATH=\$PYENV_ROOT/shims:\$PATH; type python3; head -n1 \$(type -p python3)"
	uc_want_has "#!/usr/bin/env bash" "each shim is a bash script, run at every start"
	uc_run "PATH=\$PYENV_ROOT/shims:\$PATH PYENV_VERSION=$OLD python3 version.py"
	uc_want "$OLD" "PYENV_VERSION=$OLD through the shim: $OLD"
	mkdir "$W/project"
	uc_run "cd $W/project && $PYENV local $OLD && cat .python-version && PATH=\$PYENV_ROOT/shims:\$PATH python3 ../version.py"
	uc_want "$OLD
$OLD" "pyenv local: a .python-version file, read at each start below it"
	uc_run "cd $W/project && env -i PATH=/usr/bin:/bin python3 -c 'import sys; print(sys.executable)'"
	uc_want "/usr/bin/python3" "env -i with the system's PATH: no shims, the machine's python3, not the project's"
else
	uc_skip "pyenv was not fetched ($PYENV)"
fi

uc_done

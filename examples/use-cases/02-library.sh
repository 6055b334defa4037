#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 02-library - a library directory at the fixed path the machine's python3
# reads, /usr/local/lib/python3.X/dist-packages, holding one of two versions
# of a real pure-Python package, attrs, chosen per process with
# ATTRS_VERSION; two processes at once; PYTHONPATH beside it.
#
#   examples/use-cases/02-library.sh [--impl fuse|kernel] [--build DIR] [--packages DIR]
#
# Debian's python3-attr of bookworm and of trixie, unpacked by
# scripts/use-case-packages.  Run as root; see lib.sh.
. "$(dirname "$0")/lib.sh"
uc_start "$@"
cd "$W"

uc_title "The two versions, and the directory python3 reads"
uc_link_attrs
uc_say "The machine's python3 reads $SITE by itself, before Debian's own /usr/lib/python3/dist-packages:"
uc_run "/usr/bin/python3 -c 'import sys; print(*[p for p in sys.path if \"packages\" in p], sep=\"\\n\")'"
uc_want_has "$SITE" "$SITE is on its path, first of the site directories"
[ "$(sed -n 1p <<<"$UC_OUT")" = "$SITE" ] || uc_mismatch "$SITE is not the first site directory"

ATTR='import attr; print(attr.__version__, attr.__file__)'
uc_title "Chosen per process"
uc_run "/usr/bin/python3 -c '$ATTR'"
uc_want "$AT_OLD $SITE/attr/__init__.py" "no ATTRS_VERSION: the default, $AT_OLD; the module's file is named by the fixed path"
uc_run "ATTRS_VERSION=$AT_NEW /usr/bin/python3 -c '$ATTR'"
uc_want "$AT_NEW $SITE/attr/__init__.py" "ATTRS_VERSION=$AT_NEW: $AT_NEW, at the same path"
uc_run "ATTRS_VERSION=$AT_NEW /usr/bin/python3 -c 'import attr, os; print(os.path.realpath(attr.__file__))'"
uc_want "$(uc_root attrs 2)/usr/lib/python3/dist-packages/attr/__init__.py" "realpath names the version's file"

uc_title "Two processes at once"
uc_say "Each imports attrs, then waits until both have, then says which it has: both run at the same moment."
cat >both.py <<'EOF'
import attr, os, sys, time
open("ready-" + sys.argv[1], "w").close()
while not all(os.path.exists("ready-" + n) for n in ("a", "b")):
    time.sleep(0.01)
print(sys.argv[1], attr.__version__)
EOF
uc_run "cat both.py"
uc_run "ATTRS_VERSION=$AT_OLD /usr/bin/python3 both.py a & ATTRS_VERSION=$AT_NEW /usr/bin/python3 both.py b & wait"
case $UC_OUT in
"a $AT_OLD"$'\n'"b $AT_NEW"|"b $AT_NEW"$'\n'"a $AT_OLD") echo "    -> two processes, one path, each its own version" ;;
*) uc_mismatch "wanted 'a $AT_OLD' and 'b $AT_NEW', got '$UC_OUT'" ;;
esac

uc_title "A version that is not installed"
uc_say "For that process the whole directory is gone, with no error of its own: Python goes on to the next directory of its path."
uc_run "ATTRS_VERSION=21.1.0 /usr/bin/python3 -c '$ATTR'"
case $UC_OUT in
*"No module named 'attr'"*) echo "    -> no attrs at all: the error names the module, not the version" ;;
*" $SITE/"*) uc_mismatch "attrs was found in $SITE" ;;
*" /"*) echo "    -> another copy, the machine's own: a version nobody chose, silently" ;;
*) uc_mismatch "wanted attrs from elsewhere or none, got '$UC_OUT'" ;;
esac

uc_title "Beside it: PYTHONPATH"
uc_run "PYTHONPATH=/usr/local/opt/attrs/$AT_NEW /usr/bin/python3 -c '$ATTR'"
uc_want "$AT_NEW /usr/local/opt/attrs/$AT_NEW/attr/__init__.py" "PYTHONPATH chooses too, and the file is named by the version's path"
uc_run "PYTHONPATH=/usr/local/opt/attrs/$AT_NEW /usr/bin/python3 -I -c '$ATTR'"
uc_want "$AT_OLD $SITE/attr/__init__.py" "python3 -I (isolated mode) ignores PYTHONPATH; the link still answers by ATTRS_VERSION"

uc_done

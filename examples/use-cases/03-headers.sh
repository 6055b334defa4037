#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 03-headers - headers at a fixed include path, /usr/local/include, which
# the C compiler searches by itself: one of two versions of SQLite's
# sqlite3.h chosen per build with SQLITE_VERSION; a real build with make,
# whose program says which version it was built with; two builds at once;
# what make's dependencies make of a switch.
#
#   examples/use-cases/03-headers.sh [--impl fuse|kernel] [--build DIR] [--packages DIR]
#
# Debian's libsqlite3-dev of bookworm and of trixie, unpacked by
# scripts/use-case-packages; the program links the machine's libsqlite3.so.0.
# Run as root; see lib.sh.
. "$(dirname "$0")/lib.sh"
uc_start "$@"
cd "$W"
command -v cc >/dev/null && command -v make >/dev/null || uc_cannot "no cc or make here"
[ -e /usr/lib/"$(cc -print-multiarch)"/libsqlite3.so.0 ] || uc_cannot "no libsqlite3.so.0 here"

uc_title "The two versions, and the include directory"
uc_link_sqlite
uc_run "echo | cc -E -v - 2>&1 | sed -n '/<...> search starts here/,/End of search/p'"
uc_want_has "$(uc_root sqlite 1)/usr/include" "the compiler searches /usr/local/include by itself, and names it by the version it resolved to at its start"

uc_title "A real build"
cat >sqlver.c <<'EOF'
#include <stdio.h>
#include <sqlite3.h>

int main(void)
{
	printf("built with SQLite %s, running with %s\n", SQLITE_VERSION,
	       sqlite3_libversion());
	return 0;
}
EOF
cat >Makefile <<'EOF'
sqlver: sqlver.c /usr/local/include/sqlite3.h
	$(CC) -o $@ sqlver.c -l:libsqlite3.so.0
EOF
uc_run "cat sqlver.c Makefile"
uc_run "make -s && ./sqlver"
uc_want_has "built with SQLite $SQ_OLD," "no SQLITE_VERSION: built with $SQ_OLD, the default"
uc_run "SQLITE_VERSION=$SQ_NEW make -s -B && ./sqlver"
uc_want_has "built with SQLite $SQ_NEW," "SQLITE_VERSION=$SQ_NEW: built with $SQ_NEW; it runs with the machine's library"
uc_run "SQLITE_VERSION=$SQ_NEW cc -M sqlver.c | tr ' ' '\\n' | grep sqlite3.h"
uc_want "$(uc_root sqlite 2)/usr/include/sqlite3.h" "the dependencies (cc -M, -MD) name the version's file, not the fixed path"

uc_title "Two builds at once"
mkdir a b
cp sqlver.c Makefile a/
cp sqlver.c Makefile b/
uc_run "SQLITE_VERSION=$SQ_OLD make -s -C a & SQLITE_VERSION=$SQ_NEW make -s -C b & wait; a/sqlver; b/sqlver"
uc_want "built with SQLite $SQ_OLD, running with $(./sqlver | sed 's/.*running with //')
built with SQLite $SQ_NEW, running with $(./sqlver | sed 's/.*running with //')" "two builds, one include path, each its own version"

uc_title "What make makes of a switch"
uc_say "make compares times: the header's, read through the link as make sees it, and the program's. A switch to a version whose header is older than the program is not seen."
uc_run "SQLITE_VERSION=$SQ_NEW make -s -B && SQLITE_VERSION=$SQ_OLD make; ./sqlver"
uc_want_has "built with SQLite $SQ_NEW," "SQLITE_VERSION=$SQ_OLD make rebuilt nothing: the program is still $SQ_NEW's"
uc_say "A build directory per version (the value in its name), or make -B after a switch:"
uc_run "SQLITE_VERSION=$SQ_OLD make -s -B && ./sqlver"
uc_want_has "built with SQLite $SQ_OLD," "rebuilt with $SQ_OLD"

uc_title "Beside it: -I"
uc_run "cc -I/usr/local/opt/sqlite/$SQ_NEW -o sqlver-i sqlver.c -l:libsqlite3.so.0 && ./sqlver-i"
uc_want_has "built with SQLite $SQ_NEW," "-I chooses too, for whatever is given it; the link needs no flag"

uc_done

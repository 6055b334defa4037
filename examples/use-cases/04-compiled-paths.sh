#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# 04-compiled-paths - a program whose paths are compiled in: Debian's perl
# looks for its core modules in /usr/lib/MULTIARCH/perl-base whatever its
# version, so two versions cannot be installed side by side.  Here
# /usr/bin/perl and that directory are variant links, and PERL_VERSION
# chooses both, per process.
#
#   examples/use-cases/04-compiled-paths.sh [--impl fuse|kernel] [--build DIR] [--packages DIR]
#
# Debian's perl-base of bullseye (5.32.1) and of bookworm (5.36.0),
# unpacked by scripts/use-case-packages.  The recipe replaces /usr/bin/perl
# and the perl-base directory in an overlay on /usr that only its own mount
# namespace sees.  Run as root; see lib.sh.
. "$(dirname "$0")/lib.sh"
uc_start --usr-overlay "$@"
cd "$W"

OLD=$(uc_label perl 1) NEW=$(uc_label perl 2)
OLDPERL=$(uc_root perl 1)/usr/bin/perl
SUM='use List::Util qw(sum); printf "%vd %d\n", $^V, sum(1..10)'

uc_title "The paths compiled into perl"
uc_run "$OLDPERL -e 'print \"\$_\\n\" for @INC' | grep perl-base"
BASE=$UC_OUT
case $BASE in /usr/lib/*/perl-base) echo "    -> one directory, the same for every version" ;;
*) uc_mismatch "no /usr/lib/*/perl-base in perl $OLD's @INC" ;; esac
uc_say "perl $OLD run by its own path reads the machine's $BASE, and List::Util, compiled for another perl, refuses to load:"
uc_run "$OLDPERL -e '$SUM'"
uc_want_fail "two versions cannot share $BASE"

uc_title "Both versions, and their fixed paths made variant"
uc_run "mkdir -p /usr/local/opt/perl && ln -s $(uc_root perl 1)/usr /usr/local/opt/perl/$OLD && ln -s $(uc_root perl 2)/usr /usr/local/opt/perl/$NEW"
uc_run "ln -s '/usr/local/opt/perl/\${PERL_VERSION:-$NEW}/bin/perl' $VS/perl && ln -s '/usr/local/opt/perl/\${PERL_VERSION:-$NEW}/${BASE#/usr/}' $VS/perl-base"
uc_say "In this namespace's overlay on /usr (on a machine: what the package manager would do):"
uc_run "rm /usr/bin/perl && ln -s $VS/perl /usr/bin/perl && rm -r $BASE && ln -s $VS/perl-base $BASE"

uc_title "Running perl"
uc_run "perl -e '$SUM'"
uc_want "$NEW 55" "no PERL_VERSION: $NEW, with its own modules"
uc_run "perl -MList::Util -e 'print \$INC{\"List/Util.pm\"}, \"\\n\"'"
uc_want "$BASE/List/Util.pm" "perl names the compiled-in path"
if uc_needs_execve_rule "PERL_VERSION=$OLD perl choosing both the program and its modules"; then
	uc_run "PERL_VERSION=$OLD perl -e '$SUM'"
	uc_want "$OLD 55" "PERL_VERSION=$OLD: $OLD, with its own modules"
	uc_run "PERL_VERSION=$OLD perl -e '$SUM' & perl -e '$SUM' & wait"
	case $UC_OUT in
	"$OLD 55"$'\n'"$NEW 55"|"$NEW 55"$'\n'"$OLD 55") echo "    -> both at once" ;;
	*) uc_mismatch "wanted $OLD and $NEW at once, got '$UC_OUT'" ;;
	esac
elif [ "$UC_RULE" = default ]; then
	uc_say "What happens instead: the program is the default's, and its modules follow its PERL_VERSION:"
	uc_run "PERL_VERSION=$OLD perl -e '$SUM'"
	uc_want_fail "perl $NEW with $OLD's modules: refused"
fi
uc_say "Each version's program by its own path: the compiled-in directory follows the process's PERL_VERSION, the program it was not built for included."
uc_run "PERL_VERSION=$OLD $OLDPERL -e '$SUM'"
uc_want "$OLD 55" "perl $OLD with PERL_VERSION=$OLD: its own modules"
uc_run "PERL_VERSION=$NEW $OLDPERL -e '$SUM'"
uc_want_fail "perl $OLD with PERL_VERSION=$NEW: $NEW's modules, refused"

uc_title "The whole machine at once: the system scope"
uc_run "varsym set -s $VS PERL_VERSION=$OLD"
uc_run "perl -e '$SUM'; env -i /usr/bin/perl -e '$SUM'"
uc_want "$OLD 55
$OLD 55" "every process that does not choose, env -i included: $OLD"
uc_run "varsym unset -s $VS PERL_VERSION"

uc_done

# SPDX-License-Identifier: GPL-2.0-only
"""The FUSE daemon's answer cache (fuse/cache.c): a kept answer is given
only to the thread it was made for, while it runs the program it was made
in.  One proof per mode: the exec hooks' snapshot (its token, new after
each exec) or, without them, the thread's own /proc/TID and auxiliary
vector.  Nothing else is heard of (round 4 removed the process-event
connector, which could lose events).

  E1  a thread reads a link with its own UNIVERSE (the answer is kept),
      then execs a setuid-root program that reads the same link: the
      setuid program gets the default, never its caller's kept answer

A thread that exits and whose tid another process gets is
test_environment.py::test_reused_pid_gets_its_own_answer.
"""
import os
import shutil
import sys

import pytest

from conftest import Failed, needs_real_root, run

pytestmark = [pytest.mark.skipif(os.getuid() != 0,
                                 reason="needs root: nobody is the "
                                 "attacker"),
              needs_real_root]

USER_VALUE = "/user-choice"


def daemon_only(impl):
    if impl != "fuse":
        pytest.skip("the FUSE daemon's cache (run with --impl=fuse)")


def test_e1_kept_answer_never_crosses_an_exec(impl, build, public_dir,
                                              varsymfs):
    daemon_only(impl)
    m = varsymfs("UNIVERSE,default=/dflt")
    suid = os.path.join(public_dir, "vsprobe-suid")
    shutil.copy(os.path.join(build, "vsprobe"), suid)
    os.chown(suid, 0, 0)
    os.chmod(suid, 0o4755)
    # one thread: its readlinks, then execve of the setuid program, whose
    # readlink comes from the same tid
    code = ("import os, sys\n"
            "link, prog = sys.argv[1], sys.argv[2]\n"
            "print(os.readlink(link), flush=True)\n"
            "print(os.readlink(link), flush=True)\n"
            "os.execve(prog, [prog, 'readlink', link], os.environ)\n")
    p = run([sys.executable, "-c", code, m.link, suid],
            env={"UNIVERSE": USER_VALUE}, user="nobody")
    lines = p.out.split("\n")
    print(f"\nE1: {p.out.strip()!r}")
    if lines[:2] != [USER_VALUE, USER_VALUE]:
        raise Failed(f"not in place: nobody's own readlinks gave "
                     f"{lines[:2]}, want {USER_VALUE} twice\n{p.err}")
    assert lines[2:3] == ["ok /dflt"], (
        f"E1: a setuid-root program started by nobody (UNIVERSE="
        f"{USER_VALUE}) read {lines[2:3]}, want ['ok /dflt']: the daemon "
        f"served it its caller's kept answer")

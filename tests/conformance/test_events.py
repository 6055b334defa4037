# SPDX-License-Identifier: GPL-2.0-only
"""The FUSE daemon's answer cache and the process events it relies on
(fuse/cache.c).

  E1  a lost EXEC event: a process as nobody reads a link with its own
      UNIVERSE (the answer is cached for its thread), then execs a
      setuid-root program that reads the same link.  The daemon of the
      benchmarks' build, told to ignore every EXEC event (as if the
      connector had dropped it: it does so silently when its GFP_NOWAIT
      allocation fails), must still give the setuid program the default.
  E2  the daemon's event socket queues no event but EXEC and EXIT: while
      nobody renames itself 20000 times (PR_SET_NAME, one COMM event
      each), the socket's receive queue (/proc/net/netlink, Rmem) does not
      grow.  Before, every event of every user was queued, and the thread
      reading requests drained them all before answering anyone.
"""
import os
import shutil
import sys
import tempfile

import pytest

from conftest import Failed, Mount, needs_real_root, run

pytestmark = [pytest.mark.skipif(os.getuid() != 0,
                                 reason="needs root: the daemon's events "
                                 "need CAP_NET_ADMIN, and nobody is the "
                                 "attacker"),
              needs_real_root]

NETLINK_CONNECTOR = 11
USER_VALUE = "/user-choice"


def daemon_only(impl):
    if impl != "fuse":
        pytest.skip("the FUSE daemon's cache (run with --impl=fuse)")


class DropExecMount(Mount):
    """The benchmarks' build of the daemon, losing every EXEC event."""

    def argv(self):
        argv = super().argv()
        return argv[:1] + ["--drop-exec-events"] + argv[1:]


@pytest.fixture
def drop_exec_mount(build, public_dir):
    bench = os.path.join(build, "bench")
    if not os.path.exists(os.path.join(bench, "varsymfs")):
        pytest.skip(f"no {bench}/varsymfs (make {bench}/varsymfs)")
    made = []

    def mount(options):
        where = tempfile.mkdtemp(prefix="mnt-", dir=public_dir)
        os.chmod(where, 0o755)
        m = Mount.__new__(DropExecMount)
        Mount.__init__(m, "fuse", bench, options, where)
        made.append(m)
        ok, err = m.start()
        if not ok:
            raise Failed(f"mount failed: {' '.join(m.argv())}\n{err}")
        return m

    yield mount
    for m in made:
        m.stop()


def test_e1_lost_exec_event_setuid_program_gets_the_default(
        impl, build, public_dir, drop_exec_mount):
    daemon_only(impl)
    m = drop_exec_mount("UNIVERSE,default=/dflt")
    suid = os.path.join(public_dir, "vsprobe-suid")
    shutil.copy(os.path.join(build, "vsprobe"), suid)
    os.chown(suid, 0, 0)
    os.chmod(suid, 0o4755)
    # one thread: its readlink, then execve of the setuid program, whose
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
        f"E1: after a lost EXEC event, a setuid-root program started by "
        f"nobody (UNIVERSE={USER_VALUE}) read {lines[2:3]}, want "
        f"['ok /dflt']: the daemon served it its caller's cached answer")


def netlink_rmem(pid):
    """Rmem of each NETLINK_CONNECTOR socket that process pid holds."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    with open("/proc/net/netlink") as f:
        next(f)
        for line in f:
            # sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode
            fields = line.split()
            if int(fields[1]) == NETLINK_CONNECTOR and fields[9] in inodes:
                found.append(int(fields[4]))
    return found


def test_e2_event_socket_queues_only_exec_and_exit(impl, build, varsymfs,
                                                   probe):
    daemon_only(impl)
    m = varsymfs("UNIVERSE,default=/dflt")
    renames = 20000
    # a request drains the queue; none comes while nobody renames itself
    assert probe.readlink(m.link) == "ok /dflt"
    before = netlink_rmem(m.daemon.pid)
    if len(before) != 1:
        raise Failed(f"not in place: the daemon should hold one process-"
                     f"event socket, /proc/net/netlink shows {before}")
    code = ("import ctypes, sys\n"
            "libc = ctypes.CDLL(None)\n"
            "for i in range(int(sys.argv[1])):\n"
            "    libc.prctl(15, b'rename%d' % (i % 10), 0, 0, 0)\n"
            "print('done')\n")
    p = run([sys.executable, "-c", code, renames], user="nobody")
    if p.out.strip() != "done":
        raise Failed(f"not in place: the renaming loop failed: {p.err}")
    after = netlink_rmem(m.daemon.pid)
    print(f"\nE2: the daemon's event socket: Rmem {before[0]} bytes before "
          f"{renames} PR_SET_NAMEs by nobody, {after[0]} after")
    # each queued event takes an skb of several hundred bytes; the
    # machine's own execs and exits meanwhile take far less than 1 MiB
    assert after[0] < 1 << 20, (
        f"E2: {renames} PR_SET_NAMEs by nobody left {after[0]} bytes queued "
        f"on the root daemon's event socket (from {before[0]}): it receives "
        f"events other than EXEC and EXIT, and drains them while serving")

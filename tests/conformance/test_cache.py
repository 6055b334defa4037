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
import glob
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import Failed, exec_mode, needs_real_root, run, yama_scope

pytestmark = [pytest.mark.spec4, pytest.mark.kernel_dependent, pytest.mark.exec_hooks,
              pytest.mark.attack,
              pytest.mark.skipif(os.getuid() != 0,
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


def tracing_every_thread(pid, tracer):
    """Whether every thread of pid is traced by tracer (strace -f -p
    attaches to each thread there is)."""
    for status in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            with open(status) as f:
                if f"TracerPid:\t{tracer}\n" not in f.read():
                    return False
        except FileNotFoundError:
            pass
    return True


def test_a_readlink_costs_the_daemon_no_bpf_call(impl, build, varsymfs):
    """Issue 32: with the exec hooks, the daemon takes a READLINK's
    snapshot from the slot the BPF program published for the caller's
    thread (a shared mapping, fuse/exec_hooks_read.c), the only place a
    snapshot is kept since round 5 (a slot of another thread's is no
    snapshot: the request is told apart by /proc, still with no bpf()).
    So 200 readlinks of one process cost the daemon no bpf() system call.
    Before 8353bae the daemon made one BPF_MAP_LOOKUP_ELEM per request;
    with the published read taken out of vsfuse_exec_hooks_snapshot(), this
    test counted 200 for the 200 readlinks."""
    daemon_only(impl)
    m = varsymfs("UNIVERSE,default=/dflt")
    if exec_mode(m) != "exec hooks":
        pytest.skip("needs the exec hooks (a BPF LSM program: the guests)")
    if not shutil.which("strace"):
        pytest.skip("no strace here")
    if yama_scope() == 3:
        pytest.skip("Yama's ptrace_scope 3: no tracing at all")
    trace = tempfile.NamedTemporaryFile(prefix="varsym-strace-")
    tracer = subprocess.Popen(["strace", "-f", "-qq", "-e", "trace=bpf",
                               "-o", trace.name, "-p", str(m.daemon.pid)],
                              stdin=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while not tracing_every_thread(m.daemon.pid, tracer.pid):
            if tracer.poll() is not None or time.monotonic() > deadline:
                raise Failed("strace did not attach to the daemon: "
                             f"{tracer.stderr.read().decode()}")
            time.sleep(0.05)
        p = run([os.path.join(build, "vsprobe"), "loop", "200", m.link,
                 USER_VALUE], env={"UNIVERSE": USER_VALUE})
    finally:
        tracer.terminate()
        tracer.wait()
    with open(trace.name) as f:
        calls = [line for line in f if "bpf(" in line]
    print(f"\n{p.out.strip()}; {len(calls)} bpf() calls in the daemon")
    assert p.out.strip() == "ok 0 wrong of 200", (p.out, p.err)
    assert calls == [], (f"{len(calls)} bpf() calls for 200 readlinks, "
                         f"the first: {calls[0].strip()}")

# SPDX-License-Identifier: GPL-2.0-only
"""docs/SPEC.md section 5: setuid programs never follow their caller's choice.

Real setuid-root binaries, run by the unprivileged user nobody.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from attack import Bg, gcc_program, loader_universes, user_allow_other
from conftest import Failed, exec_mode, execve_decides, mounted_at, \
    needs_real_root, run, setuid_copy, wait_for

pytestmark = [pytest.mark.spec5, pytest.mark.kernel_dependent, pytest.mark.exec_hooks,
              pytest.mark.skipif(os.getuid() != 0,
                                 reason="needs root to make setuid binaries"),
              needs_real_root]
def test_setuid_gets_default(varsymfs, probe, public_dir):
    m = varsymfs("UNIVERSE,default=/ucb")
    suid = setuid_copy(probe.path, public_dir, "vsprobe-suid")
    env = {"UNIVERSE": "/att"}
    # the same program without the setuid bit follows the environment
    assert probe.readlink(m.link, env=env, user="nobody") == "ok /att"
    assert probe.readlink(m.link, env=env, user="nobody",
                          probe=suid) == "ok /ucb"


def test_setuid_without_default_is_eacces(varsymfs, probe, public_dir):
    m = varsymfs("UNIVERSE")
    suid = setuid_copy(probe.path, public_dir, "vsprobe-suid")
    assert probe.readlink(m.link, env={"UNIVERSE": "/att"}, user="nobody",
                          probe=suid) == "err EACCES"
    assert probe.readlink(m.link, env={}, user="nobody",
                          probe=suid) == "err EACCES"


def test_setuid_prefix_default(varsymfs, probe, public_dir):
    m = varsymfs("UNIVERSE,prefix=/universes/,default=ucb")
    suid = setuid_copy(probe.path, public_dir, "vsprobe-suid")
    assert probe.readlink(m.link, env={"UNIVERSE": "att"}, user="nobody",
                          probe=suid) == "ok /universes/ucb"


def test_setgid_counts_too(varsymfs, probe, public_dir):
    m = varsymfs("UNIVERSE,default=/ucb")
    sgid = os.path.join(public_dir, "vsprobe-sgid")
    shutil.copy(probe.path, sgid)
    os.chown(sgid, 0, 0)
    os.chmod(sgid, 0o2755)
    assert probe.readlink(m.link, env={"UNIVERSE": "/att"}, user="nobody",
                          probe=sgid) == "ok /ucb"


def setcap(path):
    """Gives path a file capability (which makes its exec secure-exec)."""
    setcap = shutil.which("setcap", path="/usr/sbin:/sbin:/usr/bin")
    if not setcap:
        pytest.skip("no setcap (Debian's libcap2-bin)")
    run([setcap, "cap_dac_read_search+ep", path], check=True,
        env={"PATH": "/usr/sbin:/usr/bin"})


def test_file_capabilities_count_too(varsymfs, probe, public_dir):
    m = varsymfs("UNIVERSE,default=/ucb")
    capped = os.path.join(public_dir, "vsprobe-cap")
    shutil.copy(probe.path, capped)
    setcap(capped)
    assert probe.readlink(m.link, env={"UNIVERSE": "/att"}, user="nobody",
                          probe=capped) == "ok /ucb"


def test_setuid_program_loader_is_never_the_callers(varsymfs, build, public_dir):
    """The dynamic loader of a setuid program, found through the link, is the
    default's even though the exec'ing process (unprivileged, not secure)
    chose another: otherwise any user could run code as root."""
    roots = loader_universes(public_dir, build)
    m = varsymfs(f"LOADER,default={roots['good']}")
    exe = gcc_program(public_dir, m.link + "/ld.so", "suid-prog")
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    # directly, with the caller's exec-time environment
    p = run([exe], env={"LOADER": roots["evil"]}, user="nobody")
    assert p.out == "real euid=0\n", (p.out, p.err)
    # through env(1): the execve rule must not apply either
    p = run(["/usr/bin/env", f"LOADER={roots['evil']}", exe], env={},
            user="nobody")
    assert p.out == "real euid=0\n", (p.out, p.err)


def test_file_capability_program_loader(varsymfs, build, public_dir):
    """A program gaining a file capability (no set-id bit): its loader is
    the default's too; the kernel module reads the capability only when
    such a walk asks."""
    roots = loader_universes(public_dir, build)
    m = varsymfs(f"LOADER,default={roots['good']}")
    exe = gcc_program(public_dir, m.link + "/ld.so", "cap-prog")
    setcap(exe)
    p = run(["/usr/bin/env", f"LOADER={roots['evil']}", exe], env={},
            user="nobody")
    assert p.out == "real euid=65534\n", (p.out, p.err)


@pytest.mark.attack
def test_setuid_program_loader_race(varsymfs, build, public_dir):
    """The same, 300 times over, from a shell whose own exec-time environment
    chooses the fake loader: the daemon may read a request before its caller
    has gone to sleep (/proc/PID/syscall then says "running"), and must not
    take that for "not in execve", which would let the old program's
    environment choose."""
    roots = loader_universes(public_dir, build)
    m = varsymfs(f"LOADER,default={roots['good']}")
    exe = gcc_program(public_dir, m.link + "/ld.so", "suid-prog")
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    p = run(["/bin/sh", "-c", f"i=0; while [ $i -lt 300 ]; do {exe}; "
             "i=$((i + 1)); done"], env={"LOADER": roots["evil"]},
            user="nobody")
    lines = p.out.splitlines()
    assert len(lines) == 300 and set(lines) == {"real euid=0"}, \
        (sum(line != "real euid=0" for line in lines), p.err)


def test_unprivileged_program_loader(varsymfs, build, public_dir, impl):
    """The loader of an ordinary program: the module, and the FUSE program
    with its exec hooks, know the exec gains no privilege and follow
    execve's envp; the FUSE program without them cannot tell, and gives the
    default (docs/SECURITY.md, "Which walk is whose")."""
    roots = loader_universes(public_dir, build)
    m = varsymfs(f"LOADER,default={roots['good']}")
    exe = gcc_program(public_dir, m.link + "/ld.so", "plain-prog")
    p = run(["/usr/bin/env", f"LOADER={roots['evil']}", exe], env={},
            user="nobody")
    if execve_decides(m) == "envp":
        assert p.out == "FAKE-LOADER euid=65534\n" and p.returncode == 42
    else:
        assert p.out.startswith("real euid="), (p.out, p.err)


@pytest.mark.parametrize("uring", [False, True],
                         ids=["plain", "io_uring-in-flight"])
@pytest.mark.attack
@pytest.mark.parametrize("privilege", ["setuid", "setcap"])
def test_program_made_privileged_during_its_loader_walk(
        varsymfs, build, public_dir, stall, privilege, uring):
    """docs/SPEC.md section 5, docs/SECURITY.md "decided by the kernel": an
    ordinary program's loader follows its caller's envp; while that walk
    waits on the caller's own FUSE mount, root makes the program setuid (as
    fuse3's postinst does to fusermount3) or gives it a file capability (as
    iproute2's does).  The kernel computes the credentials only later, in
    begin_new_exec(): the exec must then never run a single instruction of
    the user's loader.  The module kills it before it returns to user space;
    the FUSE program's exec hooks make the exec fail (EPERM) at the
    credential hook; without them it never gives a loader walk the caller's
    answer.

    With an io_uring request in flight across the exec (security round 4),
    io_uring_task_cancel() runs the task's pending task work inside
    begin_new_exec(): a verdict taken in task work was skipped, and the
    user's loader ran as root (FAKE-LOADER euid=0, status 42)."""
    roots = loader_universes(public_dir, build)
    m = varsymfs(f"LOADER,default={roots['good']}")
    # the user's loader sits behind a link of their own FUSE mount whose
    # LOOKUP is answered 3 s late: the window for root's chmod or setcap
    late = stall(slow=[f"late:{roots['evil']}:3000"])
    exe = gcc_program(public_dir, m.link + "/ld.so", "upgraded-prog")
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o755)
    if uring:
        argv = [os.path.join(build, "vsattack"), "exec", "execve,uring",
                f"LOADER={late.dir}/late", "--", exe]
    else:
        argv = ["/usr/bin/env", f"LOADER={late.dir}/late", exe]
    bg = Bg(argv, env={}, user="nobody")
    try:
        if uring and not bg.wait_line(lambda s: s == "uring in flight", 30):
            raise Failed("no io_uring request in flight:\n" + bg.describe())
        # the module and the exec hooks follow the caller into their
        # mount; without them the loader walk gets the default, and the
        # exec may end first
        deadline = time.monotonic() + 30
        while not (reached := late.bg.find(lambda s: s == "slow late")) \
                and bg.p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        if privilege == "setuid":
            os.chmod(exe, 0o4755)
        else:
            setcap(exe)
        status = bg.wait(60)
    finally:
        bg.end()
    assert "FAKE-LOADER" not in bg.text(), bg.describe()
    mode = exec_mode(m)
    if mode != "syscall only":
        assert reached, "the loader walk never reached the user's " \
            "FUSE mount:\n" + bg.describe() + "\n" + late.bg.describe()
    if mode == "kernel":
        assert status == -signal.SIGKILL, bg.describe()
    elif mode == "exec hooks":
        assert status != 0 and ("Operation not permitted" in bg.describe()
                                or "err EPERM" in bg.text()), bg.describe()
    else:
        assert not reached and status == 0 and \
            "real euid=" in bg.text(), bg.describe()


def test_no_false_warning_at_mount(impl, build, public_dir):
    """The daemon warns at mount when it cannot read its callers'
    /proc/PID/syscall (every process then gets the default).  It probes a
    process of its own, not pid 1, which a container or a build host may
    keep from root while every caller stays readable."""
    if impl != "fuse":
        pytest.skip("the FUSE daemon's warning")
    child = subprocess.Popen(["/bin/sleep", "30"])
    try:
        with open(f"/proc/{child.pid}/syscall") as f:
            f.read()
    except OSError as e:
        pytest.skip(f"this machine keeps /proc/PID/syscall from root ({e})")
    finally:
        child.kill()
        child.wait()
    where = tempfile.mkdtemp(prefix="mnt-", dir=public_dir)
    daemon = subprocess.Popen([os.path.join(build, "varsymfs"), "-f", "-o",
                               "UNIVERSE", "none", where],
                              stdin=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, env={})
    try:
        wait_for(lambda: mounted_at(where) or daemon.poll() is not None,
                 "the mount")
    finally:
        if mounted_at(where):
            run(["umount", where], env={"PATH": "/usr/bin:/bin"}, check=True)
        try:
            daemon.wait(timeout=30)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
    err = daemon.stderr.read().decode(errors="replace")
    assert daemon.returncode == 0, err
    assert "cannot read other processes'" not in err, err


@pytest.mark.attack
def test_daemon_without_the_capability_fails_closed(impl, build, public_dir):
    """A daemon that serves every user but may not load its exec hooks
    (here: run by nobody, with allow_other, as /etc/fuse.conf's
    user_allow_other permits) says so at mount, and resolves every walk it
    cannot place as secure: a setuid-root program whose loader crosses its
    mount gets the real loader, whatever nobody's environment says."""
    if impl != "fuse":
        pytest.skip("the FUSE daemon")
    roots = loader_universes(public_dir, build)
    where = tempfile.mkdtemp(prefix="mnt-", dir=public_dir)
    os.chown(where, 65534, 65534)
    restore = user_allow_other(public_dir)
    # a guest has no udev to make /dev/fuse 0666
    fuse_mode = os.stat("/dev/fuse").st_mode & 0o777
    os.chmod("/dev/fuse", 0o666)
    daemon = None
    try:
        daemon = subprocess.Popen(
            ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
             "--clear-groups", "--", os.path.join(build, "varsymfs"), "-f",
             "-o", f"LOADER,default={roots['good']},allow_other", "none",
             where], stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={"PATH": "/usr/bin:/bin"})
        wait_for(lambda: mounted_at(where) or daemon.poll() is not None,
                 "nobody's mount")
        assert mounted_at(where), daemon.stderr.read().decode()
        link = os.path.join(where, "resolve")
        mode = os.getxattr(link, "system.varsym_exec",
                           follow_symlinks=False).decode()
        assert mode.startswith("syscall only:"), mode
        exe = gcc_program(public_dir, link + "/ld.so", "suid-prog")
        os.chown(exe, 0, 0)
        os.chmod(exe, 0o4755)
        for own, envp in (({"LOADER": roots["evil"]}, []),
                          ({}, [f"LOADER={roots['evil']}"])):
            p = run(["/usr/bin/env"] + envp + [exe], env=own, user="nobody")
            assert p.out == "real euid=0\n", (own, envp, p.out, p.err)
    finally:
        if mounted_at(where):
            run(["umount", where], env={"PATH": "/usr/bin:/bin"}, check=True)
        if daemon is not None:
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        os.chmod("/dev/fuse", fuse_mode)
        restore()
    err = daemon.stderr.read().decode(errors="replace")
    assert daemon.returncode == 0, err
    said = " ".join(err.split())
    assert err.count("varsymfs: warning:") == 1, err
    assert "varsymfs: warning: programs run through this mount get the " \
        "default's target, as a setuid program would, whatever the " \
        "caller's environment says; other lookups follow the caller." \
        in said or \
        "every lookup through this mount, not only a program's, is " \
        "answered as for a setuid program" in said, err
    assert "Why: the daemon cannot put its BPF program on the kernel's " \
        "exec hooks (" in said, err

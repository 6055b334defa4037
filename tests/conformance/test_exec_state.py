# SPDX-License-Identifier: GPL-2.0-only
"""Security round 4: the state each implementation keeps about an exec in
flight, attacked by the unprivileged user nobody (docs/SECURITY.md).

  tid    FUSE with its exec hooks: a non-leader thread's exec gives up its
         tid early (de_thread) and commits late (a FLUSH of a close-on-exec
         file, held by nobody's own FUSE server); the tid is handed out
         again, to nobody's exec of a setuid-root program whose loader
         crosses a variant link.  No state about that exec may be found,
         changed or deleted through the number: the real loader runs.
         Today's records were keyed by tid, and the held commit deleted the
         setuid exec's: FAKE-LOADER euid=0.

Security round 5, shared stores one user could fill for everyone (the
daemons' exec hooks, fuse/exec_hooks.bpf.c):

  leak   threads that are not their process's leader follow a link of a
         root mount, then exec: each exec gives its tid up (de_thread) with
         no hook ever running under it again, and the snapshot kept under
         that tid stayed, until the map was full; then every exec's walk
         through a variant link, anyone's, got the secure answer.
  held   threads hold a failed exec each: the records of its files (a
         script chain checks six), or the mark that one of its walks
         followed the caller, stayed in maps shared by the machine, until
         they were full; then every exec's interpreter, anyone's, got the
         secure answer.

These ran against the daemon's tests build (build/bench), whose BPF
program then had maps of 1024 snapshots and 512 execs instead of 65536
each, so that an attack filled one of them in seconds under TCG, and only
that one; the attacker's means are the same at any size.  No such map is
left: each test now shows what its burst leaves behind.

Each test sets its attack up, checks it is in place, then judges the
answer; everything is ended in a finaliser, by pid.
"""
import contextlib
import ctypes
import json
import os
import shutil
import time

import pytest

from attack import NOBODY, Bg, gcc_program, kill_pid, loader_universes, \
    opens_program_first
from conftest import HOOK_PROGRAMS, PINS, Failed, exec_mode, \
    loaded_hook_programs, needs_real_root, run

pytestmark = [pytest.mark.spec5, pytest.mark.kernel_dependent, pytest.mark.exec_hooks,
              pytest.mark.attack,
              pytest.mark.skipif(os.getuid() != 0,
                                 reason="needs root: the attacker is nobody"),
              needs_real_root]
PID_MAX = "/proc/sys/kernel/pid_max"
# a wrap of the pid space must be quick under TCG; 4096 is the reviewer's
SMALL_PID_MAX = 4096
SLOW_MS = 1500          # the slow links' hold (kernels before 6.8)
SWAP_MS = 300           # when a blocker moves its envp string, during it
BLOCKERS = 6            # of 600 ms each, two at a time: 1.8 s of queue


def loaders(public_dir, build):
    """good/ld.so is the real loader, evil/ld.so the fake that says its
    euid and exits 42."""
    return loader_universes(public_dir, build)


def waits_on_fuse(pid):
    """Whether pid sleeps in a FUSE request (its kernel stack says so)."""
    try:
        with open(f"/proc/{pid}/stack") as f:
            return "request_wait_answer" in f.read()
    except OSError:
        return False


@contextlib.contextmanager
def pid_max_of(value):
    """kernel.pid_max set to value, then back to what it was."""
    with open(PID_MAX) as f:
        before = f.read().strip()
    with open(PID_MAX, "w") as f:
        f.write(str(value))
    try:
        yield
    finally:
        with open(PID_MAX, "w") as f:
            f.write(before)


@pytest.fixture
def small_pid_max():
    with pid_max_of(SMALL_PID_MAX):
        yield


def test_a_freed_tid_carries_no_exec_state(impl, varsymfs, build, public_dir,
                                           stall, small_pid_max):
    if impl != "fuse":
        pytest.skip("the FUSE program's exec hooks (the module's state is "
                    "owned by the task: test_kernel.py)")
    roots = loaders(public_dir, build)
    m = varsymfs(f"LOADER,default={roots['good']}")
    if exec_mode(m) != "exec hooks":
        pytest.skip("needs the exec hooks (a BPF LSM program: the guests); "
                    "without them every walk inside an execve is secure")
    exe = gcc_program(public_dir, m.link + "/ld.so", "suid-prog")
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    # nobody's server: holds the FLUSH, and answers each READ of its file
    # 600 ms late (under the daemon's 1 s budget: no reader gets stuck);
    # before 6.8 a slow link holds each blocker's walk while its envp
    # string moves into the file (test_bounded.py, D1)
    first = opens_program_first()
    st = stall(slow=[] if first else
               [f"slow{i}:{m.link}/ld.so:{SLOW_MS}" for i in range(BLOCKERS)],
               more=["--hold-flush", "--slow-read", "600"])
    # pids wrap to 300 (RESERVED_PIDS): the tid to be freed must be above
    run([os.path.join(build, "vsattack"), "pids-past", "400"], check=True)
    attacker = Bg([os.path.join(build, "vsattack"), "tid-handoff", st.file,
                   "/bin/true"], user="nobody")
    victim = None
    blockers = []
    try:
        got = attacker.wait_line(lambda s: s.startswith("thread "), 30)
        if not got or not st.bg.wait_line(lambda s: s == "held FLUSH", 30):
            raise Failed("the exec's commit is not held:\n" +
                         attacker.describe() + "\n" + st.bg.describe())
        freed = int(got[1].split()[1])
        if not 300 <= freed < SMALL_PID_MAX:
            raise Failed(f"the freed tid {freed} is not one a wrap of "
                         f"pid_max={SMALL_PID_MAX} hands out again")
        # the tid is free again: a child of nobody's gets it
        victim = Bg([os.path.join(build, "vsattack"), "as-pid", str(freed),
                     "execve", f"LOADER={roots['evil']}", "--", exe],
                    user="nobody")
        if not victim.wait_line(lambda s: s.startswith("got "), 300):
            raise Failed(f"no process got the freed tid {freed}:\n"
                         + victim.describe())
        # nobody's two workers busy for seconds (execs whose envp string
        # the daemon reads from a slow page each, two at a time): the
        # setuid exec's loader walk waits in the daemon's queue behind them
        for i in range(BLOCKERS):
            page = 64 * i
            path = m.link + "/ld.so" if first else \
                os.path.join(st.dir, f"slow{i}")
            blockers.append(Bg([os.path.join(build, "vsattack"),
                                "envp-stall", path, st.file,
                                0 if first else SWAP_MS, page],
                               user="nobody"))
        deadline = time.monotonic() + 10 + SLOW_MS / 1000
        while st.bg.text().count("slow READ") < 2:
            if time.monotonic() > deadline:
                raise Failed("nobody's workers are not busy:\n" +
                             st.bg.describe())
            time.sleep(0.01)
        victim.p.stdin.write(b"go\n")
        victim.p.stdin.flush()
        # its loader walk is queued once it waits for the daemon
        deadline = time.monotonic() + 10
        while not waits_on_fuse(freed) and victim.p.poll() is None:
            if time.monotonic() > deadline:
                raise Failed("the setuid exec's loader walk never waited "
                             "for the daemon:\n" + victim.describe())
            time.sleep(0.01)
        reads = st.bg.text().count("slow READ")
        st.tell("release")      # now the held commit
        status = victim.wait(60)
    finally:
        st.tell("release")
        for b in blockers:
            b.end()
        if victim:
            victim.end()
        attacker.end()
        kill_pid(attacker.pid)
    out = victim.text()
    print(f"\ntid {freed}: {out}\n{reads} of {BLOCKERS} slow reads begun "
          "when the commit was released")
    assert reads < BLOCKERS, "the loader walk was not behind the blockers"

    assert "FAKE-LOADER" not in out, \
        "a setuid program's loader was chosen by its caller:\n" + \
        victim.describe()
    assert "real euid=0" in out and status == 0, victim.describe()


# ---- state that cannot be had --------------------------------------------

def module_build(kind=""):
    """build/kmod/RELEASE[/KIND]/varsymfs.ko of the running kernel."""
    version = os.environ.get("VARSYMFS_KERNEL") or os.uname().release
    root = os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))))
    return os.path.join(root, "build", "kmod", version, kind, "varsymfs.ko")


SBIN = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
FAIL_WATCHES = "/sys/module/varsymfs/parameters/fail_watches"


def faulty_daemon(build, public_dir, flag, options, name="nostate"):
    """The daemon's tests build (make check's build/bench), mounted on
    public_dir/NAME with flag, a fault of its exec hooks (or None)."""
    from conftest import Mount
    bench = os.path.join(build, "bench")
    if not os.path.exists(os.path.join(bench, "varsymfs")):
        # the sanitizers' builds have none
        pytest.skip(f"no {bench}/varsymfs (the tests' build of make check)")
    where = os.path.join(public_dir, name)
    os.mkdir(where)
    os.chmod(where, 0o755)

    class Faulty(Mount):
        def argv(self):
            argv = super().argv()
            return argv[:1] + ([flag] if flag else []) + argv[1:]

    m = Faulty("fuse", bench, options, where)
    ok, err = m.start()
    if not ok:
        raise Failed(f"mount failed: {' '.join(m.argv())}\n{err}")
    return m


@pytest.fixture
def no_exec_state(impl, build, public_dir, varsymfs):
    """A seed LOADER mount whose exec bookkeeping can never have an exec's
    state: the module's tests build (make kmod), every watch failing to
    allocate; the daemon's tests build (--fail-exec-state), its BPF
    program never having a thread's task storage.  Yields the mount."""
    roots = loaders(public_dir, build)
    if impl == "kernel":
        faulty = module_build("faults")
        if not os.path.exists(faulty):
            pytest.skip(f"no {faulty} (make kmod)")
        if run(["rmmod", "varsymfs"], env=SBIN).returncode:
            pytest.skip("varsymfs is in use: cannot load the tests' build")
        try:
            run(["insmod", faulty, "fail_watches=1000000"], env=SBIN,
                check=True)
            m = varsymfs(f"LOADER,default={roots['good']}")
            yield m, roots
            m.stop()
        finally:
            run(["rmmod", "varsymfs"], env=SBIN)
            run(["insmod", module_build()], env=SBIN, check=True)
        return
    m = faulty_daemon(build, public_dir, "--fail-exec-state",
                      f"LOADER,default={roots['good']}")
    try:
        if exec_mode(m) != "exec hooks":
            pytest.skip("needs the exec hooks (a BPF LSM program: the "
                        "guests)")
        yield m, roots
    finally:
        m.stop()


def test_lost_exec_state_never_fails_an_exec(no_exec_state, build,
                                             public_dir):
    """Security round 4: the module killed an exec whose watch it could not
    allocate, and the daemon's BPF program failed any exec of the machine
    (EAGAIN) whose state it could not record.  Doubt about an exec makes
    varsymfs's answers secure for that exec; it never fails or kills an
    exec.  Here no exec's state can be had at all: every exec runs, a
    setuid program's loader is the real one, and so is an ordinary
    program's (its loader walk is doubt), whatever the caller's envp."""
    m, roots = no_exec_state
    exe = gcc_program(public_dir, m.link + "/ld.so", "nostate-prog")
    suid = os.path.join(public_dir, "nostate-suid")
    shutil.copy(exe, suid)
    os.chown(suid, 0, 0)
    os.chmod(suid, 0o4755)
    for prog, want in ((exe, "real euid=65534\n"), (suid, "real euid=0\n")):
        for _ in range(3):
            p = run(["/usr/bin/env", f"LOADER={roots['evil']}", prog],
                    env={}, user="nobody")
            assert p.returncode == 0 and p.out == want, (p.cmd, p.out,
                                                         p.err)
    # execs that never cross a variant link: untouched
    for argv in (["/bin/true"], [suid]):
        assert run(argv, user="nobody").returncode == 0


def test_doubt_is_the_tasks_own(impl, no_exec_state, build, public_dir):
    """Two doubt states only, both a task's own: its doubt flag, or no
    state at all inside an execve; both secure on a mount serving others.
    Until round 5 the daemons' exec hooks had a third, the machine's:
    where an exec's doubt could not be recorded either (no task storage,
    and no room among the snapshots: the tests' --fail-exec-records), the
    BPF program marked every exec of the machine doubt until the set went,
    and the daemons trusted no snapshot.  Before c0b6740 every follow of
    every user then got the secure answer on every mount of the set; after
    it every walk was told apart by /proc and the links said "syscall
    only".  Here no exec's state can be had at all (the daemon's
    --fail-exec-state, the module's failing watches): walks inside an
    execve are secure (the real loader runs), an ordinary follow is still
    nobody's own, cached or not, and the links still say "exec hooks":
    varsym explain counts the execs whose state was lost, and gives no
    warning about the mount."""
    m, roots = no_exec_state
    evil = os.path.realpath(os.path.join(roots["evil"], "ld.so"))
    for _ in range(3):
        p = run(["/usr/bin/realpath", m.link + "/ld.so"],
                env={"LOADER": roots["evil"]}, user="nobody")
        assert p.returncode == 0 and p.out == evil + "\n", (p.out, p.err)
    exe = gcc_program(public_dir, m.link + "/ld.so", "doubt-prog")
    p = run(["/usr/bin/env", f"LOADER={roots['evil']}", exe], env={},
            user="nobody")
    assert p.returncode == 0 and p.out == "real euid=65534\n", (p.cmd,
                                                                p.out,
                                                                p.err)
    if impl != "fuse":
        return
    said = os.getxattr(m.link, "system.varsym_exec",
                       follow_symlinks=False).decode()
    assert said.startswith("exec hooks:"), said
    p = run([os.path.join(build, "varsym"), "explain", m.link + "/ld.so"],
            env=SBIN)
    assert p.returncode == 0 and "programs run through this mount" \
        not in p.out and "could not keep" in p.out, p.out + p.err


def faulty_loader_mount(impl, build, public_dir, flag, name):
    """The daemon's tests build with fault flag, a LOADER mount on
    public_dir/name whose default is the good loader: (mount, roots)."""
    if impl != "fuse":
        pytest.skip("the FUSE daemons' exec hooks")
    roots = loaders(public_dir, build)
    return faulty_daemon(build, public_dir, flag,
                         f"LOADER,default={roots['good']}", name=name), roots


def nobodys_loader_is_secure_only_in_execve(m, roots, public_dir, name,
                                            runs):
    """On m (LOADER, the good loader by default): nobody's LOADER=evil is
    followed outside an execve (realpath), and inside one, for the
    PT_INTERP of a program run runs times, the secure answer: the real
    loader runs it."""
    evil = os.path.realpath(os.path.join(roots["evil"], "ld.so"))
    p = run(["/usr/bin/realpath", m.link + "/ld.so"],
            env={"LOADER": roots["evil"]}, user="nobody")
    assert p.returncode == 0 and p.out == evil + "\n", (p.out, p.err)
    exe = gcc_program(public_dir, m.link + "/ld.so", name)
    for _ in range(runs):
        p = run(["/usr/bin/env", f"LOADER={roots['evil']}", exe],
                env={}, user="nobody")
        assert p.returncode == 0 and p.out == "real euid=65534\n", \
            (p.cmd, p.out, p.err)


def test_an_exec_whose_files_cannot_be_recorded_is_secure_and_said(
        impl, build, public_dir):
    """An exec whose files' records cannot be kept (task storage of its
    own, which can fail for want of memory) counts as privileged: its
    interpreters get the secure answer, it runs, and nothing else changes.
    The links say how many execs that happened to, and varsym explain says
    it under the mount's first link.  Here no exec's records can be kept
    (the tests' --fail-exec-files)."""
    m, roots = faulty_loader_mount(impl, build, public_dir, "--fail-exec-files",
                                   "nofiles")
    try:
        if exec_mode(m) != "exec hooks":
            pytest.skip("needs the exec hooks (a BPF LSM program: the "
                        "guests)")
        nobodys_loader_is_secure_only_in_execve(m, roots, public_dir,
                                                "nofiles-prog", 2)
        said = os.getxattr(m.link, "system.varsym_exec",
                           follow_symlinks=False).decode()
        print(f"\n{said}")
        assert said.startswith("exec hooks:") and \
            "execs whose state the exec hooks could not keep)" in said, said
        p = run([os.path.join(build, "varsym"), "explain",
                 m.link + "/ld.so"], env=SBIN)
        print(p.out)
        assert p.returncode == 0 and \
            "execs whose state the exec hooks could not keep (no memory " \
            "for it): their walks inside the execve got the secure " \
            "answer" in p.out, p.out + p.err
    finally:
        m.stop()


def test_a_mount_the_exec_hooks_cannot_serve_says_so_and_is_secure(
        impl, build, public_dir):
    """The exec hooks are there but this mount could not be entered in
    their map (the tests' --fail-serve): they take no snapshot of its
    follows, so its walks inside an execve are told apart by /proc alone,
    secure.  The links say "syscall only" with why, not "exec hooks", and
    the daemon warned once at mount."""
    m, roots = faulty_loader_mount(impl, build, public_dir, "--fail-serve",
                                   "noserve")
    try:
        said = os.getxattr(m.link, "system.varsym_exec",
                           follow_symlinks=False).decode()
        print(f"\n{said}")
        if "BPF" in said or "bpf" in said:
            pytest.skip("needs the exec hooks (a BPF LSM program: the "
                        "guests)")
        assert said == "syscall only: every walk inside an execve secure " \
            "(could not register this mount with its exec hooks: No " \
            "space left on device)", said
        nobodys_loader_is_secure_only_in_execve(m, roots, public_dir,
                                                "noserve-prog", 1)
    finally:
        m.stop()
    assert m.said.count("varsymfs: warning:") == 1 and \
        "could not register this mount with its exec hooks" in m.said, m.said


# ---- one set of exec hooks for the machine --------------------------------

def test_one_set_of_exec_hooks_for_every_daemon(impl, no_held_exec_hooks,
                                                 varsymfs):
    """Issue 32: every root daemon of the machine shares one set of exec
    hooks (pinned under /sys/fs/bpf/varsymfs), which the last one to go
    removes.  Before, each daemon attached its own set: N mounts, N
    programs on every exec and every follow of the machine."""
    one_set_here(impl)
    mounts = [varsymfs("UNIVERSE") for _ in range(4)]
    if exec_mode(mounts[0]) != "exec hooks":
        pytest.skip("needs the exec hooks (a BPF LSM program: the guests)")
    assert loaded_hook_programs() == dict.fromkeys(HOOK_PROGRAMS, 1)
    assert len(os.listdir(PINS)) == 1, os.listdir(PINS)
    for m in mounts[:3]:
        m.stop()
    assert loaded_hook_programs() == dict.fromkeys(HOOK_PROGRAMS, 1)
    mounts[3].stop()
    # the programs go once their last descriptor closes
    wait_unloaded()
    assert not os.path.exists(PINS), os.listdir(PINS)


def one_set_here(impl):
    """Skips unless the FUSE daemons may share one set, and none is
    loaded now (the tests of the set's own life)."""
    if impl != "fuse":
        pytest.skip("the FUSE daemons' exec hooks")
    if not os.path.ismount("/sys/fs/bpf"):
        pytest.skip("no bpf file system at /sys/fs/bpf (systemd mounts one)")
    if any(loaded_hook_programs().values()):
        pytest.skip("exec hooks of varsymfs daemons are loaded already")


def wait_unloaded():
    deadline = time.monotonic() + 10
    while any(loaded_hook_programs().values()):
        if time.monotonic() > deadline:
            raise Failed("exec hooks still loaded after the last daemon: "
                         f"{loaded_hook_programs()}")
        time.sleep(0.1)


def test_a_killed_daemon_leaves_the_set_to_the_others(impl,
                                                      no_held_exec_hooks,
                                                      varsymfs):
    """Issue 44: each daemon using the set holds a shared flock on its
    directory, which the kernel drops when the daemon dies; a daemon
    leaving that can then lock it exclusively is the last, and removes the
    set.  Before, each daemon registered its pid and start time in a map,
    which the others pruned by reading /proc/PID/stat.  Here the daemon
    that attached the set is killed (SIGKILL): the other two keep it, and
    the last of them removes it."""
    one_set_here(impl)
    mounts = [varsymfs("UNIVERSE") for _ in range(3)]
    if exec_mode(mounts[0]) != "exec hooks":
        pytest.skip("needs the exec hooks (a BPF LSM program: the guests)")
    killed = mounts[0]
    killed.daemon.kill()
    killed.daemon.wait()
    run(["umount", "-l", killed.dir], env=SBIN, check=True)
    killed.daemon = None
    assert loaded_hook_programs() == dict.fromkeys(HOOK_PROGRAMS, 1)
    assert len(os.listdir(PINS)) == 1, os.listdir(PINS)
    mounts[1].stop()
    assert loaded_hook_programs() == dict.fromkeys(HOOK_PROGRAMS, 1)
    assert exec_mode(mounts[2]) == "exec hooks"
    mounts[2].stop()
    wait_unloaded()
    assert not os.path.exists(PINS), os.listdir(PINS)


def test_a_set_is_checked_once(impl, no_held_exec_hooks, varsymfs, build,
                               public_dir):
    """Issue 44: the daemon that attaches the set checks once that its
    programs run (an exec of its own: the LSM programs attach, and are
    never called, where bpf is not among the kernel's active LSMs); a
    daemon that joins the set execs nothing.  Before, every daemon ran the
    check again, one exec more at each start."""
    from conftest import Mount
    one_set_here(impl)
    if not shutil.which("strace"):
        pytest.skip("no strace here")
    first = varsymfs("UNIVERSE")
    if exec_mode(first) != "exec hooks":
        pytest.skip("needs the exec hooks (a BPF LSM program: the guests)")
    trace = os.path.join(public_dir, "joiner.strace")
    where = os.path.join(public_dir, "joiner")
    os.mkdir(where)
    os.chmod(where, 0o755)

    class Traced(Mount):
        def argv(self):
            return ["strace", "-f", "-qq", "-e", "trace=execve", "-o",
                    trace] + super().argv()

    m = Traced("fuse", build, "UNIVERSE", where)
    ok, err = m.start()
    try:
        if not ok:
            raise Failed(f"mount failed: {' '.join(m.argv())}\n{err}")
        assert exec_mode(m) == "exec hooks"
    finally:
        m.stop()
    with open(trace) as f:
        execs = [line.strip() for line in f if "execve(" in line]
    print(f"\nthe joining daemon's execs: {execs}")
    # the first is strace's of the daemon itself
    assert len(execs) == 1 and "/proc/self/exe" not in execs[0], execs


def test_exec_in_flight_when_the_exec_hooks_load(impl, no_held_exec_hooks,
                                                 varsymfs, build,
                                                 public_dir, stall):
    """The daemon's side of test_kernel.py's exec in flight at module
    load: a root daemon may start (or restart, at a package upgrade)
    while an exec of a setuid program is under way.  Here nobody's exec
    passes its first exec hook with no set loaded, and its loader's walk
    (PT_INTERP through nobody's own slow FUSE link) reaches a mount made
    meanwhile.  Before 6.8 that thread's task storage, first made at that
    walk, looked like a program's own walk: LOADER in nobody's envp chose
    the loader that ran as root.  Now storage made inside an execve marks
    the rest of that exec doubt: the real loader runs."""
    if impl != "fuse":
        pytest.skip("the module's is test_kernel.py's "
                    "test_exec_in_flight_at_module_load_keeps_the_real_loader")
    if any(loaded_hook_programs().values()):
        pytest.skip("exec hooks of varsymfs daemons are loaded already")
    roots = loaders(public_dir, build)
    vmnt = os.path.join(public_dir, "vm")
    os.mkdir(vmnt)
    os.chmod(vmnt, 0o755)
    # 10 s: room for the daemon to load its programs under TCG
    st = stall(slow=[f"go:{vmnt}/resolve/ld.so:10000"])
    exe = gcc_program(public_dir, os.path.join(st.dir, "go"), "inflight")
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    prog = Bg(["/usr/bin/env", f"LOADER={roots['evil']}", exe], env={},
              user="nobody")
    try:
        assert st.bg.wait_line(lambda s: s == "slow go", 15), \
            st.bg.describe()
        m = varsymfs(f"LOADER,default={roots['good']}", where=vmnt)
        if exec_mode(m) != "exec hooks":
            pytest.skip("needs the exec hooks (a BPF LSM program: the "
                        "guests)")
        assert prog.wait(60) is not None, prog.describe()
        assert prog.text() == "real euid=0", prog.describe()
    finally:
        if prog.p.poll() is None:
            prog.end()


# ---- shared stores one user could fill (security round 5) ------------------

# Debian's systemd raises pid_max to this (50-pid-max.conf); the guests'
# kernels start at 32768, fewer tids than a full map takes
BIG_PID_MAX = 4194304
LIBC = ctypes.CDLL(None, use_errno=True)
NR_BPF = {"x86_64": 321, "aarch64": 280}[os.uname().machine]
BPF_MAP_GET_NEXT_KEY, BPF_MAP_GET_FD_BY_ID = 4, 14


@pytest.fixture
def big_pid_max():
    with pid_max_of(BIG_PID_MAX):
        yield


def daemon_maps(pid):
    """The BPF maps daemon pid holds, by name: bpftool's view of each."""
    ids = set()
    for fd in os.listdir(f"/proc/{pid}/fdinfo"):
        try:
            with open(f"/proc/{pid}/fdinfo/{fd}") as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
        except OSError:
            continue
        if "map_id" in info:
            ids.add(int(info["map_id"]))
    maps = {}
    for i in sorted(ids):
        p = run(["bpftool", "-j", "map", "show", "id", str(i)], env=SBIN)
        if p.returncode == 0:
            m = json.loads(p.out)
            maps[m.get("name", str(i))] = m
    return maps


def entries(m):
    """How many keys map m (daemon_maps()) holds, walked key by key."""
    attr = (ctypes.c_uint8 * 128)()
    ctypes.c_uint32.from_buffer(attr, 0).value = m["id"]
    fd = LIBC.syscall(NR_BPF, BPF_MAP_GET_FD_BY_ID, attr, 128)
    if fd < 0:
        raise Failed(f"map {m['id']}: {os.strerror(ctypes.get_errno())}")
    key = (ctypes.c_uint8 * m["bytes_key"])()
    nxt = (ctypes.c_uint8 * m["bytes_key"])()
    n = 0
    try:
        while True:
            attr = (ctypes.c_uint8 * 128)()
            ctypes.c_uint32.from_buffer(attr, 0).value = fd
            ctypes.c_uint64.from_buffer(attr, 8).value = \
                ctypes.addressof(key) if n else 0
            ctypes.c_uint64.from_buffer(attr, 16).value = \
                ctypes.addressof(nxt)
            if LIBC.syscall(NR_BPF, BPF_MAP_GET_NEXT_KEY, attr, 128) < 0:
                return n
            ctypes.memmove(key, nxt, m["bytes_key"])
            n += 1
    finally:
        os.close(fd)


def shared_stores(m):
    """The maps of mount m's exec hooks that any user's threads can add to,
    with how many entries each holds: every hash map but the mounts, which
    only root daemons write."""
    return {name: f"{entries(mp)} of {mp.get('max_entries')}"
            for name, mp in daemon_maps(m.daemon.pid).items()
            if mp.get("type") == "hash" and name != "mounts"}


@pytest.fixture
def exec_victim(impl, build, public_dir, big_pid_max):
    """The tests' daemon on a seed LOADER mount whose default is the fake
    loader, and root's program whose PT_INTERP crosses it: run with
    LOADER=its own choice (the real loader), it must run with that loader,
    "real euid=0", whatever another user did before.  Yields (mount,
    victim), victim() running the program once."""
    if impl != "fuse":
        pytest.skip("the FUSE daemons' exec hooks (the module keeps an "
                    "exec's state in the task: test_kernel.py)")
    roots = loader_universes(public_dir, build, real="mine", fake="dflt")
    m = faulty_daemon(build, public_dir, None,
                      f"LOADER,default={roots['dflt']}", name="shared")
    try:
        if exec_mode(m) != "exec hooks":
            pytest.skip("needs the exec hooks (a BPF LSM program: the "
                        "guests)")
        exe = gcc_program(public_dir, m.link + "/ld.so", "victim")

        def victim():
            return run(["/usr/bin/env", f"LOADER={roots['mine']}", exe],
                       env={})
        p = victim()
        if p.returncode != 0 or p.out != "real euid=0\n":
            raise Failed("not in place: root's program does not run with "
                         f"its own loader: {p.returncode} {p.out!r} "
                         f"{p.err!r}")
        yield m, victim
    finally:
        m.stop()


def test_execs_that_give_their_tid_up_leave_nothing_behind(exec_victim,
                                                           build):
    """Security round 5, item 2: nobody's threads, none their process's
    leader, each read a link of a root mount and then exec.  The exec
    gives the thread's tid up (de_thread) without an exit, and the
    snapshot the BPF program kept under that tid stayed: 1024 of them
    filled the tests' build's map (65536 in the real one, a minute of
    one user's execs).  From then on no thread's snapshot could be
    stored, and root's program got the default's loader, as every exec
    through a variant link of the machine would.  Now the snapshots live
    only in a fixed array of slots, and the burst leaves nothing that
    fills."""
    m, victim = exec_victim
    before = shared_stores(m)
    full = int(before.get("snapshots", "0 of 1024").split(" of ")[1])
    burst = full + 512
    attacker = Bg([os.path.join(build, "vsattack"), "thread-execs",
                   str(burst), m.link], user="nobody")
    try:
        if not attacker.wait_line(lambda s: s.startswith("done "), 900):
            raise Failed("the burst of execs did not end:\n" +
                         attacker.describe())
    finally:
        attacker.end()
    after = shared_stores(m)
    print(f"\n{burst} execs of non-leader threads; shared stores before "
          f"{before}, after {after}")
    p = victim()
    print(f"root's program after the burst: {p.returncode} {p.out!r}")
    assert p.returncode == 0 and p.out == "real euid=0\n", \
        ("after nobody's execs, root's program ran with the default's "
         f"loader, not its own: {p.returncode} {p.out!r}; the shared "
         f"stores hold {after}")
    assert "snapshots" not in after, after


def hold_failed_execs(build, n, path, env=()):
    """nobody's n threads, each holding an exec of path that failed."""
    attacker = Bg(["/usr/bin/prlimit", f"--nproc={n + 1000}", "--"] +
                  NOBODY + [os.path.join(build, "vsattack"),
                            "hold-failed-execs", str(n), path] + list(env))
    got = attacker.wait_line(lambda s: s.startswith("held "), 600)
    if not got:
        attacker.end()
        raise Failed("nobody's threads do not hold failed execs:\n" +
                     attacker.describe())
    return attacker, got[1]


@pytest.mark.parametrize("what", ["records", "marks"])
def test_failed_execs_held_by_one_user_cost_only_that_user(exec_victim,
                                                           build, public_dir,
                                                           what):
    """Security round 5, item 3: nobody's threads each hold an exec that
    failed.  records: a chain of six scripts, each of whose files the BPF
    program recorded for the daemon to read its capabilities, in a map
    shared by the machine (about 11,000 threads filled the real one);
    marks: a script whose #! interpreter crosses the variant link and
    follows nobody's envp, which the daemon marked in another shared map
    (on a nosuid mount, so that it leaves no record).  Once a map was
    full, root's exec got the default's loader: its file could not be
    recorded (so it counted as privileged), or its walk could not be
    marked.  Now each exec's records and mark live with its own task, and
    cost only that task."""
    m, victim = exec_victim
    if what == "records":
        chain = public_dir
        for i in range(7):
            with open(os.path.join(chain, f"s{i}"), "w") as f:
                f.write(f"#!{chain}/s{i + 1}\n")
            os.chmod(os.path.join(chain, f"s{i}"), 0o755)
        n, path, env, want = 256, os.path.join(chain, "s0"), [], "ELOOP"
    else:
        nosuid = os.path.join(public_dir, "nosuid")
        os.mkdir(nosuid)
        run(["mount", "-t", "tmpfs", "-o", "nosuid,mode=755", "none",
             nosuid], env=SBIN, check=True)
        with open(os.path.join(nosuid, "s0"), "w") as f:
            f.write(f"#!{m.link}/interp\n")
        with open(os.path.join(nosuid, "interp"), "w") as f:
            f.write("#!/nonexistent/interp\n")
        os.chmod(os.path.join(nosuid, "s0"), 0o755)
        os.chmod(os.path.join(nosuid, "interp"), 0o755)
        # more than the tests' build's 512 marks, fewer than its 1024
        # snapshots, which these threads' walks hold too
        n, path, env, want = 768, os.path.join(nosuid, "s0"), \
            [f"LOADER={nosuid}"], "ENOENT"
    before = shared_stores(m)
    attacker = None
    try:
        attacker, said = hold_failed_execs(build, n, path, env)
        if not said.endswith(want):
            raise Failed(f"not in place: {said}, want {want}")
        after = shared_stores(m)
        p = victim()
    finally:
        if attacker:
            attacker.end()
        if what == "marks":
            run(["umount", "-l", nosuid], env=SBIN)
    print(f"\n{what}: {said}; shared stores before {before}, while held "
          f"{after}; root's program: {p.returncode} {p.out!r}")
    assert p.returncode == 0 and p.out == "real euid=0\n", \
        (f"while nobody held failed execs ({what}), root's program ran "
         f"with the default's loader, not its own: {p.returncode} "
         f"{p.out!r}; the shared stores hold {after}")

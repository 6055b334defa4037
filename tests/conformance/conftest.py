# SPDX-License-Identifier: GPL-2.0-only
"""The conformance suite's machinery: one suite, two implementations.

Run with --impl=fuse (the FUSE program, on this machine) or --impl=kernel
(varsymfs.ko, inside a guest started by scripts/vm-run).  Tests get a
`varsymfs` fixture that mounts, and every mount is unmounted in a finaliser
that also checks the FUSE daemon exited cleanly.  Processes run with
exactly the environment a test gives them (execve with that envp, never a
shell builtin), and vsprobe reports the errno of each system call.
"""
import json
import os
import shutil
import stat
import subprocess
import tempfile
import time

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 60


def pytest_addoption(parser):
    parser.addoption("--impl", choices=("fuse", "kernel"), default="fuse",
                     help="implementation under test")
    parser.addoption("--build", default=os.path.join(REPO, "build"),
                     help="directory holding varsymfs, vsprobe, fake-loader")
    parser.addoption("--long", action="store_true",
                     help="the long forms of the reliability tests")
    parser.addoption("--results", default=None,
                     help="write pass/fail/skip counts to this JSON file")


# The markers scripts/check selects by (scripts/check --list shows which
# stage runs which).  A mechanism marker says what a case depends on; a
# specN marker, which section of docs/SPEC.md it checks.
MARKERS = {
    "kernel_dependent": "depends on the running kernel: module load, exec "
                        "hooks, secure exec, the ABI matrix, attacks, rootless "
                        "mounts (run in the guest of every kernel)",
    "threads": "runs the daemon's threads concurrently (the ThreadSanitizer run)",
    "exec_hooks": "answers differently when the FUSE daemon has its exec hooks "
                  "(run in the FUSE guests)",
    "attack": "an attack on the product, set up for real",
    "packaging": "make install, DKMS, Debian packages, man pages, examples",
    "every_kernel": "the same case again for another kernel (make check runs "
                    "one kernel's, make check-full every kernel's)",
    "use_cases": "a recipe of docs/USE-CASES.md run whole, with real Debian "
                 "packages (build/use-cases: make use-case-packages)",
    "spec1": "docs/SPEC.md section 1, seed mode",
    "spec2": "docs/SPEC.md section 2, template mode",
    "spec3": "docs/SPEC.md section 3, mount options",
    "spec4": "docs/SPEC.md section 4, where a value comes from",
    "spec5": "docs/SPEC.md section 5, secure-exec processes and loaders",
    "spec6": "docs/SPEC.md section 6, results, attributes and interfaces",
    "spec7": "docs/SPEC.md section 7, never",
    "spec8": "docs/SPEC.md section 8, search mode",
}


def pytest_configure(config):
    for name, what in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {what}")


def pytest_terminal_summary(terminalreporter):
    """Leaves the counts for scripts/check, which adds up every stage."""
    path = terminalreporter.config.getoption("--results")
    if not path:
        return
    stats = terminalreporter.stats
    counts = {
        "passed": len(stats.get("passed", [])),
        "failed": len(stats.get("failed", [])) + len(stats.get("error", [])),
        "skipped": len(stats.get("skipped", [])),
    }
    with open(path, "w") as f:
        json.dump(counts, f)


# ---- where the suite runs ---------------------------------------------------

def in_user_namespace():
    """Whether this process runs in a user namespace of its own (as under
    `unshare -Urm`): root there is an unprivileged user outside, and only
    the ids of /proc/self/uid_map exist."""
    with open("/proc/self/uid_map") as f:
        return f.read().split() != ["0", "0", "4294967295"]


IN_USERNS = in_user_namespace()
# Why a test skips there: what it needs that only real root has.
NEEDS_REAL_ROOT = ("needs real root: in a user namespace a file owned by its "
                   "root belongs to the user who made it, so set-id bits "
                   "give nothing, and there is no second user")
needs_real_root = pytest.mark.skipif(IN_USERNS, reason=NEEDS_REAL_ROOT)


# ---- running processes ------------------------------------------------------

class Failed(AssertionError):
    pass


def run(argv, env=None, check=False, input=None, timeout=TIMEOUT, user=None):
    """Runs argv (a list) with exactly env (None: an empty environment).

    user="nobody" runs it as uid/gid 65534 through setpriv(1).
    """
    argv = [str(a) for a in argv]
    if user is not None and IN_USERNS:
        pytest.skip(NEEDS_REAL_ROOT)
    if user is not None:
        argv = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                "--clear-groups", "--"] + argv
    env = {} if env is None else env
    p = subprocess.run(argv, env=env, input=input, capture_output=True,
                       timeout=timeout)
    out = p.stdout.decode(errors="replace")
    err = p.stderr.decode(errors="replace")
    p.out, p.err = out, err
    p.cmd = " ".join(argv)
    if check and p.returncode != 0:
        raise Failed(f"command failed ({p.returncode}): {p.cmd}\n"
                     f"env: {_show_env(env)}\nstdout: {out}\nstderr: {err}")
    return p


def _show_env(env):
    return {k: (v if len(v) < 80 else v[:40] + f"...({len(v)} bytes)")
            for k, v in env.items()}


class Probe:
    """vsprobe: one system call, answer "ok VALUE" or "err ERRNO"."""

    def __init__(self, path):
        self.path = path

    def __call__(self, *args, env=None, user=None, probe=None):
        return probe_line(run([probe or self.path] + list(args), env=env,
                              user=user))

    def readlink(self, path, env=None, **kw):
        return self("readlink", path, env=env, **kw)


# ---- mounting ---------------------------------------------------------------

def mounted_at(path):
    """The mountinfo line for path, or None."""
    path = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == path:
                return line
    return None


def wait_for(pred, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise Failed(f"timed out waiting for {what}")
        time.sleep(0.01)


def daemon_stacks(pid):
    """Where each thread of a stuck daemon is, for the failure message."""
    out = []
    for tid in sorted(os.listdir(f"/proc/{pid}/task")):
        try:
            with open(f"/proc/{pid}/task/{tid}/stack") as f:
                out.append(f"-- thread {tid}:\n{f.read()}")
        except OSError as e:
            out.append(f"-- thread {tid}: {e}")
    return "\n".join(out)


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MOUNT_HELPER = os.path.join(REPO, "tools", "mount.varsymfs")


class Mount:
    """env: more environment for the FUSE program or the module's mount
    helper (VARSYM_CONF); helper: mount the module through mount.varsymfs,
    as mount(8) would, which loads /etc/varsym.conf."""

    def __init__(self, impl, build, options, where, env=None, helper=False):
        self.impl = impl
        self.build = build
        self.options = options
        self.dir = where
        self.link = os.path.join(where, "resolve")
        self.daemon = None
        self.env = dict(env or {})
        self.helper = helper
        # what the program or the helper said on standard error: the
        # module's helper's at start, the FUSE program's once stopped
        self.said = ""

    def argv(self):
        if self.impl == "fuse":
            opts = ["-o", self.options] if self.options else []
            return [os.path.join(self.build, "varsymfs"), "-f"] + opts + ["none", self.dir]
        opts = ["-o", self.options] if self.options else []
        if self.helper:
            return [MOUNT_HELPER, "none", self.dir] + opts
        return ["mount", "-t", "varsymfs"] + opts + ["none", self.dir]

    def start(self):
        """Mounts; returns (ok, stderr)."""
        if self.impl == "fuse":
            self.daemon = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL,
                                           stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE,
                                           env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                                                **self.env})
            deadline = time.monotonic() + 10
            while not mounted_at(self.dir):
                if self.daemon.poll() is not None:
                    err = self.daemon.stderr.read().decode(errors="replace")
                    self.daemon = None
                    return False, err
                if time.monotonic() > deadline:
                    self.stop()
                    raise Failed(f"no mount after 10 s: {' '.join(self.argv())}")
                time.sleep(0.005)
            return True, ""
        p = run(self.argv(), env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin",
                                  "VARSYM": os.path.join(self.build, "varsym"),
                                  **self.env})
        self.said = p.err
        return p.returncode == 0, p.err

    def stop(self):
        """Unmounts; for FUSE also checks the daemon exited with status 0."""
        if mounted_at(self.dir):
            cmd = ["umount", self.dir]
            p = run(cmd, env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
            if p.returncode != 0:
                run(["umount", "-l", self.dir],
                    env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"})
                raise Failed(f"umount failed: {p.err}")
        if self.daemon is not None:
            try:
                status = self.daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                stacks = daemon_stacks(self.daemon.pid)
                self.daemon.kill()
                self.daemon.wait()
                raise Failed("the daemon did not exit after umount; its "
                             f"threads were in:\n{stacks}")
            err = self.daemon.stderr.read().decode(errors="replace")
            self.said += err
            self.daemon = None
            if status != 0:
                raise Failed(f"the daemon exited with status {status}: {err}")


YAMA = "/proc/sys/kernel/yama/ptrace_scope"


def yama_scope():
    """Yama's ptrace_scope now, or None without Yama."""
    try:
        with open(YAMA) as f:
            return int(f.read())
    except FileNotFoundError:
        return None


def exec_mode(mount):
    """How a mount tells the walks inside an execve apart (docs/SECURITY.md,
    "Which walk is whose"): "kernel" for the module; for the FUSE program
    what its links' system.varsym_exec starts with: "exec hooks" (its BPF
    program), "syscall only" (none), or "owner only"."""
    if mount.impl == "kernel":
        return "kernel"
    link = mount.link
    if not os.path.lexists(link):
        link = next(os.path.join(mount.dir, n) for n in os.listdir(mount.dir)
                    if os.path.islink(os.path.join(mount.dir, n)))
    text = os.getxattr(link, "system.varsym_exec", follow_symlinks=False)
    return text.decode().split(":")[0]


def execve_decides(mount):
    """Whose environment a walk inside the execve of a program that gains
    no privilege follows on mount (docs/SPEC.md section 4): "envp" (the
    execve rule), "own" (the exec-time environment: the FUSE program's exec
    hooks under Yama's ptrace_scope 3, which hides envp), or "default" (the
    FUSE program without its exec hooks: every such walk is secure)."""
    mode = exec_mode(mount)
    if mode == "syscall only":
        return "default"
    if mode == "exec hooks" and yama_scope() == 3:
        return "own"
    return "envp"


# ---- the exec hooks, held for the session -----------------------------------

HOOK_PROGRAMS = ("exec_begins", "exec_checks_file", "exec_gets_creds",
                 "exec_commits", "exec_thread_forks", "exec_thread_exits",
                 "exec_follows_link", "exec_reads_link")
PINS = "/sys/fs/bpf/varsymfs"
SBIN_PATH = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


def loaded_hook_programs():
    """How many BPF programs of each of HOOK_PROGRAMS are loaded (the
    kernel cuts names to 15 bytes; bpftool shows BTF's whole name)."""
    p = run(["bpftool", "-j", "prog", "list"], env=SBIN_PATH)
    if p.returncode:
        pytest.skip(f"no bpftool here: {p.err.strip()}")
    names = [prog.get("name", "") for prog in json.loads(p.out or "[]")]
    return {n: sum(name in (n, n[:15]) for name in names)
            for n in HOOK_PROGRAMS}


class HeldExecHooks:
    """A root daemon of the suite's own that holds the machine's one set of
    exec hooks (fuse/exec_hooks_set.c) while the tests run.  The first daemon
    loads and attaches the set and the last removes it; in a TCG guest that
    is 2 to 3 s per daemon, against 0.3 s for one that joins a set already
    there (6.1 guest, start and umount of one daemon).  Every other test's
    daemons join; the tests of the set's own life stop it first
    (no_held_exec_hooks).  Where the daemon gets no hooks (this build
    host, lsm= without bpf, not root) it is not kept."""

    def __init__(self, build):
        self.build = build
        self.dir = None
        self.daemon = None
        self.err = None

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="varsym-held-")
        os.chmod(self.dir, 0o755)
        # stderr to a file: a pipe nobody reads could fill in a session
        self.err = tempfile.TemporaryFile()
        self.daemon = subprocess.Popen(
            [os.path.join(self.build, "varsymfs"), "-f", "-o", "UNIVERSE",
             "none", self.dir], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=self.err, env=SBIN_PATH)
        deadline = time.monotonic() + 30
        while not mounted_at(self.dir):
            if self.daemon.poll() is not None or time.monotonic() > deadline:
                # the tests' own mounts say what is wrong, if anything
                self.stop(check=False)
                return
            time.sleep(0.01)
        try:
            mode = exec_mode(Mount("fuse", self.build, "UNIVERSE", self.dir))
        except OSError:
            mode = None
        if mode != "exec hooks":
            self.stop()

    @property
    def held(self):
        return self.daemon is not None

    def stop(self, check=True):
        """Unmounts and, with check, checks the daemon's exit status, as
        Mount.stop does."""
        if self.daemon is None:
            return
        daemon, self.daemon = self.daemon, None
        if mounted_at(self.dir):
            run(["umount", self.dir], env=SBIN_PATH)
        if daemon.poll() is None and not mounted_at(self.dir):
            try:
                daemon.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        if daemon.poll() is None:
            run(["umount", "-l", self.dir], env=SBIN_PATH)
            daemon.kill()
            daemon.wait()
        os.rmdir(self.dir)
        self.err.seek(0)
        said = self.err.read().decode(errors="replace")
        self.err.close()
        if check and daemon.returncode != 0:
            raise Failed("the daemon holding the exec hooks exited with "
                         f"status {daemon.returncode}: {said}")


@pytest.fixture(scope="session", autouse=True)
def held_exec_hooks(request):
    """HeldExecHooks for the whole session, for the FUSE program as root
    in the initial user namespace."""
    hooks = HeldExecHooks(os.path.abspath(request.config.getoption("--build")))
    if (request.config.getoption("--impl") == "fuse" and os.geteuid() == 0
            and not IN_USERNS and os.path.ismount("/sys/fs/bpf")):
        hooks.start()
    yield hooks
    hooks.stop()


@pytest.fixture
def no_held_exec_hooks(held_exec_hooks):
    """No daemon of the suite holds the exec hooks during the test; the
    set is gone (its programs unloaded) when the test begins, if no other
    daemon of the machine holds it."""
    if not held_exec_hooks.held:
        yield
        return
    held_exec_hooks.stop()
    deadline = time.monotonic() + 10
    while any(loaded_hook_programs().values()) and \
            time.monotonic() < deadline:
        time.sleep(0.1)
    try:
        yield
    finally:
        held_exec_hooks.start()


@pytest.fixture(scope="session")
def impl(request):
    return request.config.getoption("--impl")


@pytest.fixture(scope="session")
def build(request):
    return os.path.abspath(request.config.getoption("--build"))


@pytest.fixture(scope="session")
def probe(build):
    return Probe(os.path.join(build, "vsprobe"))


@pytest.fixture
def public_dir():
    """A temporary directory every user may enter (tmp_path is 0700)."""
    d = tempfile.mkdtemp(prefix="varsym-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def varsymfs(impl, build, public_dir):
    """mount(options) mounts varsymfs on a fresh directory, unmounted later."""
    mounts = []

    def mount(options="", expect_failure=False, env=None, helper=False,
              where=None):
        if where is None:
            where = tempfile.mkdtemp(prefix="mnt-", dir=public_dir)
            os.chmod(where, 0o755)
        m = Mount(impl, build, options, where, env=env, helper=helper)
        mounts.append(m)
        ok, err = m.start()
        if expect_failure:
            if ok:
                raise Failed(f"mount succeeded, expected failure: {' '.join(m.argv())}")
            return err
        if not ok:
            raise Failed(f"mount failed: {' '.join(m.argv())}\n{err}")
        return m

    yield mount
    errors = []
    for m in mounts:
        try:
            m.stop()
        except Failed as e:
            errors.append(str(e))
    if errors:
        raise Failed("; ".join(errors))


@pytest.fixture
def universes(public_dir):
    """Two universes, att and ucb, each with bin/prog saying its name."""
    roots = {}
    for name in ("att", "ucb"):
        root = os.path.join(public_dir, name)
        os.makedirs(os.path.join(root, "bin"))
        os.chmod(root, 0o755)
        os.chmod(os.path.join(root, "bin"), 0o755)
        prog = os.path.join(root, "bin", "prog")
        with open(prog, "w") as f:
            f.write(f"#!/bin/sh\necho {name}-prog \"$@\"\n")
        os.chmod(prog, 0o755)
        with open(os.path.join(root, "bin", f"only-{name}"), "w") as f:
            f.write(name + "\n")
        roots[name] = root
    return roots


def sanitizer_of(path):
    """The sanitizer the program at path carries: "AddressSanitizer" (which
    takes memory it does not give back, and wants to be loaded first),
    "ThreadSanitizer" (whose shadow memory grows with the program's), or
    None; neither runs under valgrind."""
    with open(path, "rb") as f:
        text = f.read()
    if b"__asan_init" in text:
        return "AddressSanitizer"
    if b"__tsan_init" in text:
        return "ThreadSanitizer"
    return None


def make_public(path):
    st = os.stat(path)
    os.chmod(path, st.st_mode | stat.S_IROTH | stat.S_IXOTH)


@pytest.fixture
def stall(build, public_dir):
    """stall(slow=..., hang=...) mounts a stallfs as nobody."""
    from attack import Stall
    made = []
    st = os.stat("/dev/fuse")
    mode = st.st_mode & 0o777
    # a guest's devtmpfs makes /dev/fuse 0600 (no udev to open it up)
    if mode & 0o006 != 0o006:
        os.chmod("/dev/fuse", 0o666)

    def make(slow=(), hang=(), more=()):
        """more: stallfs's other options (--exe, --slow-read...)."""
        d = tempfile.mkdtemp(prefix="stall-", dir=public_dir)
        os.chmod(d, 0o755)
        s = Stall(build, d, slow, hang, more)
        made.append(s)
        return s

    yield make
    for s in made:
        s.abort()
    if mode & 0o006 != 0o006:
        os.chmod("/dev/fuse", mode)


# ---- helpers shared by test files -------------------------------------------

def probe_line(p):
    """vsprobe's last line, "ok ..." or "err ERRNO", from a finished run."""
    line = p.out.strip().splitlines()[-1] if p.out.strip() else ""
    if not (line.startswith("ok") or line.startswith("err")):
        raise Failed(f"vsprobe said nothing useful: {p.cmd}\n"
                     f"status {p.returncode}, stdout {p.out!r}, "
                     f"stderr {p.err!r}")
    return line


def setuid_copy(src, directory, name):
    """A setuid-root copy of src, directory/name."""
    dst = os.path.join(directory, name)
    shutil.copy(src, dst)
    os.chown(dst, 0, 0)
    os.chmod(dst, 0o4755)
    return dst


def kernel_log_since(marker):
    """Kernel log lines written after marker (itself written to /dev/kmsg)."""
    p = run(["dmesg"], env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
            check=True)
    lines = p.out.splitlines()
    at = max(i for i, line in enumerate(lines) if marker in line)
    return "\n".join(lines[at + 1:])


def assert_refused(varsymfs, impl, probe, public_dir, options, message):
    """A mount with options fails, saying message: the FUSE program on
    standard error; the module in the kernel log (root's alone: not in a
    user namespace) and through the new mount API's log, which fsconfig(2)
    hands the caller (values of up to 255 bytes)."""
    if impl == "kernel" and not IN_USERNS:
        marker = f"varsymfs-test-{os.getpid()}-{time.monotonic_ns()}"
        with open("/dev/kmsg", "w") as f:
            f.write(marker + "\n")
    err = varsymfs(options, expect_failure=True)
    if impl == "fuse":
        assert "varsymfs: " + message in err, err
        return
    # mount(8) of Debian 12 uses mount(2): the message goes to the kernel log
    if not IN_USERNS:
        assert "varsymfs: " + message in kernel_log_since(marker)
    if max(len(o) for o in options.split(",")) < 256:
        where = tempfile.mkdtemp(dir=public_dir)
        try:
            p = run([probe.path, "fsmount", "varsymfs", where] +
                    options.split(","))
            assert p.out.strip().endswith("err EINVAL"), p.out
            assert f"e varsymfs: {message}" in p.out, p.out
        finally:
            assert not mounted_at(where)
            os.rmdir(where)


# ---- a NixOS-shaped system, for search mode (test_search.py) ----------------

class NixSystem:
    """A NixOS-shaped test system in a temporary directory, as issue 21
    item 7 asks: no FHS tree, a profile directory on PATH (as
    ~/.nix-profile/bin: python3, bash, make, env, and vsexe, a copy of
    vsattack whose `vsexe exe` tells which file the kernel ran), and a
    fallback directory holding only sh and env (copies of the real ones,
    so that they are files of their own), as NixOS's /bin.  mount() makes
    a search mount standing in for /usr/bin (a test cannot mount over the
    real one): scripts name the mount's path in their shebangs."""

    PROFILE = ("python3", "bash", "make", "env")
    FALLBACK = ("sh", "env")

    def __init__(self, root, build, mount):
        self.root = root
        os.mkdir(root)
        os.chmod(root, 0o755)
        self._mount = mount
        self._default = None
        self.mounts = []
        self.profile = self.dir("profile/bin")
        self.fallback = self.dir("sw/bin")
        self.programs = set()
        for name in self.PROFILE:
            real = shutil.which(name, path="/usr/bin:/bin")
            if real:
                os.symlink(os.path.realpath(real),
                           os.path.join(self.profile, name))
                self.programs.add(name)
        shutil.copy(os.path.join(build, "vsattack"),
                    os.path.join(self.profile, "vsexe"))
        for name in self.FALLBACK:
            dst = os.path.join(self.fallback, name)
            shutil.copy(os.path.realpath(shutil.which(name, path="/usr/bin:/bin")),
                        dst)
            os.chmod(dst, 0o755)

    def dir(self, rel, mode=0o755):
        """root/rel, made with every new component mode 0755 (nobody
        walks them), the last one mode."""
        path = self.root
        for part in rel.split("/"):
            path = os.path.join(path, part)
            if not os.path.isdir(path):
                os.mkdir(path)
                os.chmod(path, 0o755)
        os.chmod(path, mode)
        return path

    def tool(self, directory, name="tool", text=None, mode=0o755):
        """directory/name, a script saying where it is."""
        path = os.path.join(directory, name)
        with open(path, "w") as f:
            f.write(text if text is not None else
                    f"#!/bin/sh\necho {name} in {directory}\n")
        os.chmod(path, mode)
        return path

    def mount(self, options=None, **kw):
        """A search mount (default: search,fallback=FALLBACK)."""
        m = self._mount(options if options is not None else
                        f"search,fallback={self.fallback}", **kw)
        if not kw.get("expect_failure"):
            self.mounts.append(m)
            # its device, "MAJOR:MINOR": a FUSE mount's connection number
            m.device = mounted_at(m.dir).split()[2]
        return m

    @property
    def usr_bin(self):
        """The default search mount, made at first use."""
        if self._default is None:
            self._default = self.mount()
        return self._default

    def env(self, path=None, **more):
        """An environment whose PATH is the profile's (or path)."""
        return {"PATH": self.profile if path is None else path, **more}


@pytest.fixture
def nix(build, public_dir, varsymfs):
    return NixSystem(os.path.join(public_dir, "nix"), build, varsymfs)

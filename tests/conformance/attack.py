# SPDX-License-Identifier: GPL-2.0-only
"""Machinery shared by the attack tests (test_abi_matrix.py, test_bounded.py).

An attack test sets an attack up, checks that it is really in place, then
asserts the behaviour the product must have while it is.  Everything it
starts runs in the background under a hard timeout and is ended in a
finaliser, by pid: processes blocked on a never-answering FUSE server are
freed by killing that server first (which aborts its connection), memory
that the product would read for minutes is unmapped by vsattack's janitor.
"""
import ctypes
import errno
import functools
import os
import platform
import re
import shutil
import subprocess
import threading
import time

import pytest

from conftest import Failed, run, YAMA  # noqa: F401 (YAMA: for the tests)

NOBODY = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
          "--clear-groups", "--"]
SBIN = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}

# What differs by architecture (the suite runs on x86-64 and arm64): the
# system's own dynamic loader, and the 32-bit callers of tests/helpers/
# vs32.c (i386 and x32 on x86-64, AArch32 on arm64).  int80 is the ia32
# execve from a 64-bit process, which only x86 has.
MACHINE = platform.machine()
SYSTEM_LOADER = {"x86_64": "/lib64/ld-linux-x86-64.so.2",
                 "aarch64": "/lib/ld-linux-aarch64.so.1"}[MACHINE]
ABIS_32 = {"x86_64": ["i386", "x32"], "aarch64": ["arm"]}[MACHINE]
COMPAT_CALLERS = (["int80"] if MACHINE == "x86_64" else []) + ABIS_32
# execve(2)'s number in the native ABI, as /proc/PID/syscall shows it
NR_EXECVE = {"x86_64": "59", "aarch64": "221"}[MACHINE]
# readlink(2): glibc's readlink() is readlinkat on arm64 (which has no other)
NR_READLINK = {"x86_64": "89", "aarch64": "78"}[MACHINE]
# How long a test lets an attack run before it ends it (the assertion is
# about 1 s; this only decides how much of today's damage the message
# measures).  VARSYMFS_ATTACK_WAIT=120 shows the whole of it.
WAIT = float(os.environ.get("VARSYMFS_ATTACK_WAIT", "5"))

_libc = ctypes.CDLL(None, use_errno=True)


def detach(path):
    """umount2(path, MNT_DETACH), without exec'ing anything: when every
    execve fails (the exec hook's table full), umount(8) could not run."""
    if _libc.umount2(os.fsencode(path), 2) != 0:
        e = ctypes.get_errno()
        if e not in (errno.EINVAL, errno.ENOENT):
            raise OSError(e, os.strerror(e), path)


def alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def kill_pid(pid):
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


def syscall_of(pid):
    """The first word of /proc/PID/syscall: a number, "running", or None."""
    try:
        with open(f"/proc/{pid}/syscall") as f:
            return f.read().split()[0]
    except (OSError, IndexError):
        return None


def opens_program_first():
    """Whether execve walks the program's path before it copies envp
    (Linux 6.8 and later: "execve: open the executable file before doing
    anything else").  Before, a daemon asked about the program's path is
    only ever shown envp strings the kernel has already read."""
    m = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(m.group(1)), int(m.group(2))) >= (6, 8)


class Bg:
    """A background process whose stdout lines are collected as they come."""

    def __init__(self, argv, env=None, user=None, stdin=True):
        argv = [str(a) for a in argv]
        if user == "nobody":
            argv = NOBODY + argv
        self.cmd = " ".join(argv)
        self.lines = []
        self.started = time.monotonic()
        self.p = subprocess.Popen(argv, env={} if env is None else env,
                                  stdin=subprocess.PIPE if stdin else
                                  subprocess.DEVNULL,
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
        self.pid = self.p.pid
        self.err = b""
        self._cv = threading.Condition()
        self._t = threading.Thread(target=self._read, daemon=True)
        self._t.start()
        self._te = threading.Thread(target=self._read_err, daemon=True)
        self._te.start()

    def _read(self):
        for raw in self.p.stdout:
            with self._cv:
                self.lines.append((time.monotonic(),
                                   raw.decode(errors="replace").rstrip("\n")))
                self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def _read_err(self):
        self.err = self.p.stderr.read()

    def text(self):
        with self._cv:
            return "\n".join(line for _, line in self.lines)

    def find(self, pred):
        with self._cv:
            for when, line in self.lines:
                if pred(line):
                    return when, line
        return None

    def wait_line(self, pred, timeout):
        """(time, line) of the first line pred accepts, or None."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                for when, line in self.lines:
                    if pred(line):
                        return when, line
                left = deadline - time.monotonic()
                if left <= 0 or (self.p.poll() is not None and
                                 not self._t.is_alive()):
                    return None
                self._cv.wait(min(left, 0.05))

    def wait(self, timeout):
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        self._t.join(5)
        return self.p.returncode

    def close_stdin(self):
        if self.p.stdin and not self.p.stdin.closed:
            try:
                self.p.stdin.close()
            except OSError:
                pass

    def end(self, timeout=30):
        """Closes stdin (the janitor's signal), waits, then SIGKILLs."""
        self.close_stdin()
        if self.wait(timeout) is None:
            kill_pid(self.pid)
            self.wait(30)
        # vsattack's janitor, if it started one, is gone too
        janitor = self.find(lambda s: s.startswith("janitor "))
        if janitor:
            pid = int(janitor[1].split()[1])
            deadline = time.monotonic() + 10
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            kill_pid(pid)

    def describe(self):
        return (f"command: {self.cmd}\nstatus: {self.p.poll()}\n"
                f"stdout:\n{self.text()}\n"
                f"stderr: {self.err.decode(errors='replace')[-2000:]}")


class Stall:
    """A never-answering FUSE file system (tests/helpers/stallfs.c) mounted
    by the unprivileged user nobody through the setuid fusermount3."""

    def __init__(self, build, parent, slow=(), hang=(), more=()):
        self.dir = os.path.join(parent, "stall")
        os.mkdir(self.dir)
        os.chown(self.dir, 65534, 65534)
        self.file = os.path.join(self.dir, "file")
        argv = [os.path.join(build, "stallfs")]
        for s in slow:
            argv += ["--slow", s]
        for h in hang:
            argv += ["--hang", h]
        argv += list(more)
        argv.append(self.dir)
        self.bg = Bg(argv, env=dict(SBIN), user="nobody")
        if not self.bg.wait_line(lambda s: s == "mounted", 15):
            self.abort()
            raise Failed("stallfs did not mount as nobody:\n" +
                         self.bg.describe())

    def held_read(self):
        return self.bg.find(lambda s: s.startswith("held READ"))

    def tell(self, line):
        """A line on stallfs's standard input: "release" answers every
        held FLUSH and GETATTR, "hold-getattr" holds the --exe files'."""
        self.bg.p.stdin.write(line.encode() + b"\n")
        self.bg.p.stdin.flush()

    def abort(self):
        """Kills the server: the kernel aborts its connection and every
        request it held fails; then the mount is detached."""
        kill_pid(self.bg.pid)
        self.bg.wait(30)
        detach(self.dir)


@functools.lru_cache(maxsize=None)
def abi_missing(build, abi):
    """None if processes of this ABI run here, else why not."""
    argv = [os.path.join(build, "vsattack"), "int80-probe"] if abi == "int80" \
        else [os.path.join(build, f"vs32-{abi}"), "hello"]
    try:
        p = run(argv)
        if p.out.strip() == ("ok" if abi == "int80" else f"ok {abi}"):
            return None
        how = f"`{p.cmd}` exited with status {p.returncode}"
    except OSError as e:        # ENOEXEC: the kernel does not load it
        how = f"`{' '.join(argv)}`: {e.strerror}"
    if abi == "int80":
        return (f"int $0x80 does not work in this kernel ({how}): the host "
                "disables the 32-bit system-call entry; this row runs in the "
                "guests (scripts/vm-run)")
    if abi == "x32":
        return (f"x32 processes do not run in this kernel ({how}): Debian's "
                "kernels have x32 built in but off; boot with syscall.x32=y "
                "on the kernel command line to run this row")
    if abi == "arm":
        return (f"AArch32 processes do not run in this kernel ({how}): it "
                "has no CONFIG_COMPAT, or the CPU no AArch32 at EL0")
    return (f"i386 processes do not run in this kernel ({how}): the host "
            "disables IA32 emulation; this row runs in the guests "
            "(scripts/vm-run)")


PROBLEMS = re.compile(
    r"WARNING:|BUG:|BUG [a-z0-9_-]+ \(|Oops|Kernel panic|general protection "
    r"fault|UBSAN:|KASAN:|kernel BUG|Call Trace:|Busy inodes after unmount|"
    r"blocked for more than|detected stalls|soft lockup|still has objects")


def kernel_log():
    p = run(["dmesg"], env=SBIN)
    return p.out.splitlines() if p.returncode == 0 else []


def new_problems(before):
    """Kernel problem lines printed since the log `before` was read."""
    after = kernel_log()
    fresh = after[len(before):] if after[:len(before)] == before else after
    return [line for line in fresh if PROBLEMS.search(line) and
            "GUP no longer grows the stack" not in line]


@functools.lru_cache(maxsize=None)
def loader_universes(public_dir, build, real="good", fake="evil"):
    """Universe real (named 'good') holds the real loader as ld.so, fake
    ('evil') the fake one, which says its euid and exits 42."""
    roots = {}
    for name, src in ((real, os.path.realpath(SYSTEM_LOADER)),
                      (fake, os.path.join(build, "fake-loader"))):
        root = os.path.join(public_dir, name)
        os.makedirs(root, exist_ok=True)
        os.chmod(root, 0o755)
        shutil.copy(src, os.path.join(root, "ld.so"))
        os.chmod(os.path.join(root, "ld.so"), 0o755)
        roots[name] = root
    return roots


def gcc_program(directory, loader, name):
    """A 64-bit program printing its euid, whose ELF interpreter is loader."""
    src = os.path.join(directory, name + ".c")
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include <unistd.h>\n'
                'int main(void) { printf("real euid=%d\\n", (int)geteuid());'
                ' return 0; }\n')
    exe = os.path.join(directory, name)
    run(["gcc", "-o", exe, src, f"-Wl,--dynamic-linker={loader}"],
        env={"PATH": "/usr/bin:/bin"}, check=True, timeout=300)
    return exe


def user_allow_other(public_dir):
    """/etc/fuse.conf with user_allow_other, bound over it (the guests'
    /etc is read-only); returns how to put it back."""
    if not os.path.exists("/etc/fuse.conf"):
        pytest.skip("no /etc/fuse.conf to allow allow_other in")
    conf = os.path.join(public_dir, "fuse.conf")
    with open("/etc/fuse.conf") as f, open(conf, "w") as g:
        g.write(f.read() + "\nuser_allow_other\n")
    sbin = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
    run(["mount", "--bind", conf, "/etc/fuse.conf"], env=sbin, check=True)
    return lambda: run(["umount", "/etc/fuse.conf"], env=sbin, check=True)

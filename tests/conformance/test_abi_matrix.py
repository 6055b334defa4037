# SPDX-License-Identifier: GPL-2.0-only
"""Issue 11: setuid safety on every system-call ABI, and the execve rule
for each, as a matrix.

Rows are callers, each run by the unprivileged user nobody:
  execve            64-bit execve(2)
  execveat-dirfd    64-bit execveat(2), a directory descriptor and a name
  execveat-empty    64-bit execveat(2), a descriptor and AT_EMPTY_PATH
  int80             the ia32 execve through int $0x80, from a 64-bit process
  i386              a 32-bit i386 process (tests/helpers/vs32.c)
  x32               an x32 process (off in Debian's kernels unless booted
                    with syscall.x32=y: those cells skip and say so)
  arm               on arm64, in place of the three above: an AArch32
                    process (tests/helpers/vs32.c, svc 0)
Cells:
  setuid loader     a setuid-root program whose PT_INTERP crosses the link,
                    LOADER=evil in the caller's own environment and in the
                    envp it passes: the real loader runs ("real euid=0")
  (a) program       MOUNT/resolve/bin/prog with envp UNIVERSE choosing one
                    of two universes, the caller's own environment the
                    other: envp's program runs (SPEC: "while an execve
                    resolves the program it is starting, the environment
                    passed to that execve decides"); again after the
                    caller read the link itself, so that the FUSE program
                    keeps an answer for that thread
  (b) loader        a program that gains no privilege, PT_INTERP through
                    the link, envp LOADER=evil: the fake loader runs, as
                    the user
  (c) script        a #! script whose interpreter crosses the link: envp's
  (d) readlink      a 32-bit process readlink(2)s the link: its own value;
                    the same program setuid root, run by nobody: the default

FUSE daemons here are run by root (they serve every user).  With their exec
hooks (a BPF program: the guests) they follow the execve rule as the module
does; without them (this host, where BPF may not attach to LSM hooks) every
walk inside an execve gives the default (conftest.execve_decides).  Under
Yama (guests only; the host has none) the FUSE cells run under ptrace_scope
0, 1 and 2, set and restored by the test; scope 3 cannot be undone until
reboot, so scripts/check boots a guest with it set.  There the daemon
cannot read /proc/PID/syscall or mem of anyone: with its exec hooks, the
caller's exec-time environment decides where envp would (SPEC section 4);
without them every answer is the default (documented fail-closed).  Which
scopes run is chosen from the scope in force when the suite starts.
"""
import os
import shutil
import tempfile

import pytest

from attack import ABIS_32, COMPAT_CALLERS, SYSTEM_LOADER, YAMA, \
    abi_missing, gcc_program
from conftest import exec_mode, execve_decides, needs_real_root, Failed, \
    Mount, run, yama_scope

pytestmark = [pytest.mark.spec5, pytest.mark.kernel_dependent, pytest.mark.exec_hooks,
              pytest.mark.attack,
              pytest.mark.skipif(os.getuid() != 0,
                                 reason="needs root to make setuid programs"),
              needs_real_root]
NATIVE_CALLERS = ["execve", "execveat-dirfd", "execveat-empty"]
CALLERS = NATIVE_CALLERS + COMPAT_CALLERS


def pytest_generate_tests(metafunc):
    if "yama" not in metafunc.fixturenames:
        return
    now = yama_scope()
    if metafunc.config.getoption("--impl") == "kernel" or now is None:
        scopes = [None]
    elif now == 3:
        scopes = [3]
    else:
        scopes = [0, 1, 2]
    metafunc.parametrize("yama", scopes, indirect=True,
                         ids=["any-scope" if s is None else f"ptrace_scope{s}"
                              for s in scopes])


@pytest.fixture
def yama(request):
    """Sets Yama's ptrace_scope for one test, and puts it back."""
    want = request.param
    before = yama_scope()
    if want is not None and want != before:
        with open(YAMA, "w") as f:
            f.write(str(want))
    yield want
    if want is not None and want != before:
        with open(YAMA, "w") as f:
            f.write(str(before))


class World:
    """Everything the matrix needs, made once per module: two seed mounts
    (LOADER and UNIVERSE), loaders, universes, programs and scripts."""

    def __init__(self, impl, build):
        self.impl = impl
        self.build = build
        self.dir = os.path.realpath(tempfile.mkdtemp(prefix="varsym-abi-"))
        os.chmod(self.dir, 0o755)
        self.mounts = []
        self.root = {}
        try:
            self.make()
        except BaseException:
            self.close()  # a world half made: its mounts go too
            raise

    def make(self):
        # universes: bin/prog and bin/interp print which file really ran
        for name in ("att", "ucb", "dflt"):
            root = os.path.join(self.dir, name)
            os.makedirs(os.path.join(root, "bin"), mode=0o755)
            os.chmod(root, 0o755)
            for prog in ("prog", "interp"):
                dst = os.path.join(root, "bin", prog)
                shutil.copy(os.path.join(self.build, "vsattack"), dst)
                os.chmod(dst, 0o755)
            self.root[name] = root
        # loaders: good is the real one, evil the fake that says its euid
        self.good = os.path.join(self.dir, "good")
        self.evil = os.path.join(self.dir, "evil")
        for d, src in ((self.good, os.path.realpath(SYSTEM_LOADER)),
                       (self.evil, os.path.join(self.build, "fake-loader"))):
            os.mkdir(d, 0o755)
            shutil.copy(src, os.path.join(d, "ld.so"))
            os.chmod(os.path.join(d, "ld.so"), 0o755)
        self.loader_mount = self.mount(f"LOADER,default={self.good}")
        self.universe_mount = self.mount(
            f"UNIVERSE,default={self.root['dflt']}")
        prog = gcc_program(self.dir, self.loader_mount.link + "/ld.so",
                           "loader-prog")
        self.plain = os.path.join(self.dir, "plain-prog")
        self.suid = os.path.join(self.dir, "suid-prog")
        for dst, mode in ((self.plain, 0o755), (self.suid, 0o4755)):
            shutil.copy(prog, dst)
            os.chown(dst, 0, 0)
            os.chmod(dst, mode)
        self.script = os.path.join(self.dir, "script")
        with open(self.script, "w") as f:
            f.write(f"#!{self.universe_mount.link}/bin/interp exe\n")
        os.chmod(self.script, 0o755)
        self.suid32 = {}
        for abi in ABIS_32:
            dst = os.path.join(self.dir, f"vs32-{abi}-suid")
            shutil.copy(os.path.join(self.build, f"vs32-{abi}"), dst)
            os.chown(dst, 0, 0)
            os.chmod(dst, 0o4755)
            self.suid32[abi] = dst

    def mount(self, options):
        where = tempfile.mkdtemp(prefix="mnt-", dir=self.dir)
        os.chmod(where, 0o755)
        m = Mount(self.impl, self.build, options, where)
        self.mounts.append(m)
        ok, err = m.start()
        if not ok:
            raise Failed(f"mount failed: {' '.join(m.argv())}\n{err}")
        return m

    def close(self):
        errors = []
        for m in self.mounts:
            try:
                m.stop()
            except Failed as e:
                errors.append(str(e))
        shutil.rmtree(self.dir, ignore_errors=True)
        if errors:
            raise Failed("; ".join(errors))

    def argv(self, caller, envp, directory, name, args=()):
        """The command line that makes `caller` exec directory/name with
        exactly envp; execveat-dirfd opens directory and passes name."""
        path = os.path.join(directory, name)
        env = list(envp)
        tail = ["--", path] + list(args)
        if caller in ABIS_32:
            return [os.path.join(self.build, f"vs32-{caller}"), "exec"] + \
                env + tail
        mode = caller
        if caller == "execveat-dirfd":
            mode = f"execveat-dirfd={directory}"
            tail = ["--", name] + list(args)
        return [os.path.join(self.build, "vsattack"), "exec", mode] + env + tail

    def exec_as_nobody(self, caller, own, envp, directory, name, args=()):
        return run(self.argv(caller, envp, directory, name, args), env=own,
                   user="nobody")


@pytest.fixture(scope="module")
def world(impl, build):
    w = World(impl, build)
    yield w
    w.close()


def need(build, abi):
    why = abi_missing(build, abi)
    if why:
        pytest.skip(why)


def expect(p, out, status, what):
    """Exactly this output and status, or a failure naming the command."""
    if p.out != out or p.returncode != status:
        raise Failed(f"{what}\nexpected: {out!r}, status {status}\n"
                     f"got:      {p.out!r}, status {p.returncode}\n"
                     f"command (as nobody): {p.cmd}\nstderr: {p.err.strip()}")


def chosen(m, this, other):
    """Whose universe a walk inside the execve picks: envp chose this, the
    caller's own environment other (conftest.execve_decides)."""
    return {"envp": this, "own": other, "default": "dflt"}[execve_decides(m)]


def blind(m):
    """The FUSE program without exec hooks under Yama's ptrace_scope 3 can
    read no one's /proc/PID/syscall: every answer is the default."""
    return exec_mode(m) == "syscall only" and yama_scope() == 3


@pytest.mark.parametrize("caller", CALLERS)
def test_setuid_loader_is_never_the_callers(world, build, caller, yama):
    """A setuid-root program's dynamic loader behind the link: the real one
    runs, whatever the caller's environment and envp say."""
    if caller not in NATIVE_CALLERS:
        need(build, caller)
    evil = f"LOADER={world.evil}"
    p = world.exec_as_nobody(caller, {"LOADER": world.evil}, [evil],
                             world.dir, os.path.basename(world.suid))
    expect(p, "real euid=0\n", 0,
           f"{caller}: the setuid program's loader was not the default's "
           "(a fake loader run as root is a root exploit)")


@pytest.mark.parametrize("caller", CALLERS)
def test_envp_chooses_the_program(world, build, impl, caller, yama):
    """(a) The program behind the link is envp's, not the caller's own."""
    if caller == "execveat-empty":
        pytest.skip("with AT_EMPTY_PATH the program was found by open(2), "
                    "before execveat: no path is walked for envp to decide")
    if caller not in ("execve", "execveat-dirfd"):
        need(build, caller)
    m = world.universe_mount
    for this, other in (("att", "ucb"), ("ucb", "att")):
        want = chosen(m, this, other)
        p = world.exec_as_nobody(
            caller, {"UNIVERSE": world.root[other]},
            [f"UNIVERSE={world.root[this]}"], m.dir, "resolve/bin/prog",
            ["exe"])
        expect(p, f"exe {world.root[want]}/bin/prog\n", 0,
               f"{caller}: envp chose {this}, the caller's own environment "
               f"{other}: the program run should be {want}'s")


@pytest.mark.parametrize("caller", ["execve", "execveat-dirfd"] +
                         COMPAT_CALLERS[:1])
def test_envp_chooses_the_program_after_a_kept_answer(world, build, impl,
                                                      caller, yama):
    """(a) again, from a thread that has just read the link with its own
    environment, so that the FUSE program keeps that answer for it: the
    program's own path is walked inside execve before any exec hook runs,
    and the kept answer must not serve it."""
    if caller != "execve" and caller != "execveat-dirfd":
        need(build, caller)
    m = world.universe_mount
    for this, other in (("att", "ucb"), ("ucb", "att")):
        want = chosen(m, this, other)
        p = world.exec_as_nobody(
            caller, {"UNIVERSE": world.root[other],
                     "VSATTACK_PRIME": m.link},
            [f"UNIVERSE={world.root[this]}"], m.dir, "resolve/bin/prog",
            ["exe"])
        expect(p, f"exe {world.root[want]}/bin/prog\n", 0,
               f"{caller}, after two readlinks with its own UNIVERSE={other}"
               f": envp chose {this}, the program run should be {want}'s")


@pytest.mark.parametrize("caller", CALLERS)
def test_unprivileged_programs_loader(world, build, impl, caller, yama):
    """(b) A program that gains nothing, its loader behind the link, envp
    LOADER=evil: the execve rule (the fake loader runs as nobody), the
    caller's own LOADER under ptrace_scope 3 with the FUSE program's exec
    hooks, the real loader without them."""
    if caller not in NATIVE_CALLERS:
        need(build, caller)
    for own in (world.good, world.evil):
        p = world.exec_as_nobody(caller, {"LOADER": own},
                                 [f"LOADER={world.evil}"], world.dir,
                                 os.path.basename(world.plain))
        loader = chosen(world.loader_mount, world.evil, own)
        if loader == world.evil:
            expect(p, "FAKE-LOADER euid=65534\n", 42,
                   f"{caller}: the fake loader should run, as nobody; "
                   f"the caller's own LOADER was {os.path.basename(own)}")
        else:
            expect(p, "real euid=65534\n", 0,
                   f"{caller}: the real loader should run; the caller's "
                   f"own LOADER was {os.path.basename(own)}")


@pytest.mark.parametrize("caller", CALLERS)
def test_envp_chooses_the_script_interpreter(world, build, impl, caller,
                                             yama):
    """(c) A #! script whose interpreter is behind the link: envp's."""
    if caller not in NATIVE_CALLERS:
        need(build, caller)
    for this, other in (("att", "ucb"), ("ucb", "att")):
        want = chosen(world.universe_mount, this, other)
        p = world.exec_as_nobody(
            caller, {"UNIVERSE": world.root[other]},
            [f"UNIVERSE={world.root[this]}"], world.dir, "script")
        expect(p, f"exe {world.root[want]}/bin/interp\n", 0,
               f"{caller}: envp chose {this}, the caller's own environment "
               f"{other}: the interpreter run should be {want}'s")


@pytest.mark.parametrize("abi", ABIS_32)
def test_32bit_readlink_own_environment(world, build, impl, abi, yama):
    """(d) A 32-bit process's own value (its auxv is 32-bit pairs)."""
    need(build, abi)
    m = world.universe_mount
    want = world.root["dflt" if blind(m) else "att"]
    p = run([os.path.join(build, f"vs32-{abi}"), "readlink", m.link],
            env={"UNIVERSE": world.root["att"]}, user="nobody")
    expect(p, f"ok {want}\n", 0,
           f"{abi} readlink with its own UNIVERSE=att")


@pytest.mark.parametrize("abi", ABIS_32)
def test_32bit_setuid_readlink_gets_the_default(world, build, abi, yama):
    """(d) The same 32-bit program, setuid root, run by nobody: default."""
    need(build, abi)
    m = world.universe_mount
    p = run([world.suid32[abi], "readlink", m.link],
            env={"UNIVERSE": world.root["att"]}, user="nobody")
    expect(p, f"ok {world.root['dflt']}\n", 0,
           f"setuid-root {abi} readlink run by nobody with UNIVERSE=att")


def test_a_stack_below_4_gib_is_no_32bit_abi(world, build, yama):
    """Security round 4: any process may move where its stack starts with
    prctl(PR_SET_MM_MAP), below 4 GiB included, without a capability.
    Taken for the mark of a 32-bit program, it made arm64's execve (221)
    read as another AArch32 call, and the setuid program's loader walk
    inside it followed the caller's own environment: the fake loader ran
    as root.  The ABI is the kernel's own fact, never the stack's place."""
    evil = f"LOADER={world.evil}"
    p = run([os.path.join(build, "vsattack"), "exec", "execve,low-stack",
             evil, "--", world.suid], env={"LOADER": world.evil},
            user="nobody")
    if not p.out.startswith("stack 0x"):
        raise Failed("start_stack was not moved below 4 GiB:\n"
                     f"{p.cmd}\n{p.out}{p.err}")
    expect(p, p.out.splitlines()[0] + "\nreal euid=0\n", 0,
           "a caller whose stack starts below 4 GiB: the setuid program's "
           "loader was not the default's (a fake loader run as root is a "
           "root exploit)")

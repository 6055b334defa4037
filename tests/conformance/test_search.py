# SPDX-License-Identifier: GPL-2.0-only
"""Search mode (issue 21; docs/SPEC.md sections 3 and 8):
every name under a `search,fallback=DIR:...` mount is a link to the first
DIR/NAME the caller may execute, DIR running over the caller's PATH (SPEC
section 4, the execve rule included), then over the fallback list.  The
better envfs: each row is one of envfs's known failures, run on a
NixOS-shaped test system (conftest.NixSystem: a profile directory on PATH,
a fallback with only sh and env, a search mount standing in for /usr/bin).

  shebangs      #!/usr/bin/env python3 and #!/usr/bin/python3 scripts run
  make          SHELL=/usr/bin/bash make runs its recipes with bash
  env -i        /usr/bin/sh through the fallback; a profile-only name ENOENT
  setuid        a setuid program searches the fallback only
  loops         a PATH into the mount (or another search mount): no hang
  bounds        a PATH of 10,000 entries: 1024 absolute entries, 32 KiB;
                a Nix shell's 80-entry PATH whole; explain tells a cut
  concurrency   64 callers with distinct PATHs: never another's answer
  one answer    stat, lstat, statx, access, open, readlink, execve,
                execveat agree (envfs #173, #182, #180)
  skips         not executable, directories, fifos, noexec, empty and
                relative entries; trailing slashes
  credentials   the caller's, never the daemon's
  listing       the union of the fallback directories (envfs #162)
  options       refused with their message, shown in mountinfo;
                search=VAR; PATH from the mount's scopes
  explain       varsym explain shows each directory a search tries
  umount        lazy umount under load: no hang, no wrong answer
  kept answers  a change of credentials, mount namespace or root without
                an execve is never served a stale answer

What runs through execve depends on who decides an exec walk
(conftest.execve_decides): the module and the FUSE program with its exec
hooks follow envp; under Yama's ptrace_scope 3 the caller's exec-time
environment; the FUSE program without its hooks resolves every exec walk as
secure, through the fallback only.  Programs are started through
`sh -c 'exec "$@"'` where that matters, so that their own exec-time
environment and envp agree.  Timeouts here only detect hangs: no test
asserts a speed.  A hang fails its test, and the test's FUSE connections
are then aborted (a caller waiting for a request its daemon has read cannot
be killed), so that the suite goes on.
"""
import errno
import hashlib
import json
import os
import shutil
import stat
import subprocess
import threading
import time

import pytest

from attack import Bg, kernel_log, new_problems
from conftest import IN_USERNS, NEEDS_REAL_ROOT, Failed, assert_refused, \
    daemon_stacks, exec_mode, execve_decides, mounted_at, needs_real_root, \
    probe_line, run, setuid_copy

pytestmark = [pytest.mark.spec8, pytest.mark.exec_hooks]

SBIN = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
ENOENT = "err ENOENT"
HANG = 60           # seconds: a hang detector, never a speed requirement
PYTHON = "/usr/bin/python3"


# ---- helpers ------------------------------------------------------------------

NOBODY = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
          "--clear-groups", "--"]
FUSECTL = "/sys/fs/fuse/connections"
WATCHDOG = 900      # seconds a whole test may take before its mounts abort

_nix = None         # this test's NixSystem, for abort()


def abort(why):
    """Frees every process stuck on this test's FUSE mounts: a caller
    waiting for a request its daemon has read cannot be killed, and a
    daemon with a thread stuck on its own mount cannot exit, so each
    connection is aborted (fusectl), then the daemon killed, by pid.
    Returns what the daemons' threads were doing, for the message.  The
    module's walks are killable: there is nothing to do for it."""
    notes = [why]
    for m in (_nix.mounts if _nix else []):
        d = m.daemon
        if d is None or d.poll() is not None:
            continue
        notes.append(f"daemon of {m.dir}:\n{daemon_stacks(d.pid)}")
        minor = m.device.split(":")[1]
        made = False
        if not os.path.isdir(os.path.join(FUSECTL, minor)) and \
                os.path.isdir(FUSECTL):
            made = run(["mount", "-t", "fusectl", "none", FUSECTL],
                       env=SBIN).returncode == 0
        try:
            with open(os.path.join(FUSECTL, minor, "abort"), "w") as f:
                f.write("1")
        except OSError as e:
            notes.append(f"(could not abort connection {minor}: {e})")
        if made:
            run(["umount", FUSECTL], env=SBIN)
        d.kill()
        try:
            d.wait(timeout=30)
        except subprocess.TimeoutExpired:
            notes.append(f"(daemon {d.pid} did not exit)")
        m.daemon = None
    return "\n".join(notes)


@pytest.fixture(autouse=True)
def hang_guard(request):
    """A backstop: a test still running after WATCHDOG seconds has its
    mounts aborted, so that it ends (failing) instead of hanging the suite."""
    global _nix
    _nix = request.getfixturevalue("nix")
    timer = threading.Timer(WATCHDOG, abort, ["watchdog"])
    timer.daemon = True
    timer.start()
    yield
    timer.cancel()
    _nix = None


def reap(procs, what):
    """Ends processes of this test (Popen), by pid; a hang is a failure."""
    stuck = []
    for p in procs:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                stuck.append(p)
    if stuck:
        notes = abort(f"{len(stuck)} processes of {what} could not be "
                      "killed")
        for p in stuck:
            p.wait()
        raise Failed(notes)


class Result:
    def __init__(self, cmd, returncode, out, err):
        self.cmd, self.returncode, self.out, self.err = \
            cmd, returncode, out, err


def call(argv, env, user=None, timeout=HANG):
    """Runs argv with exactly env (user="nobody": as nobody, which needs
    real root); a hang (no exit within timeout) is a failure of its own,
    after which the test's mounts are aborted so that it can end."""
    argv = [str(a) for a in argv]
    if user is not None:
        if IN_USERNS:
            pytest.skip(NEEDS_REAL_ROOT)
        argv = NOBODY + argv
    cmd = " ".join(argv)
    p = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        notes = abort(f"no answer within {timeout} s (a hang): {cmd[:300]}")
        reap([p], cmd)
        raise Failed(notes) from None
    return Result(cmd, p.returncode, out.decode(errors="replace"),
                  err.decode(errors="replace"))


def wait_all(procs, timeout, what):
    """communicate() with each Popen of procs; a hang fails the test."""
    deadline = time.monotonic() + timeout
    outs = []
    try:
        for p in procs:
            try:
                out, err = p.communicate(
                    timeout=max(1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise Failed(abort(f"{what} did not finish in {timeout} s "
                                   "(a hang)")) from None
            outs.append((out.decode(errors="replace"),
                         err.decode(errors="replace")))
    finally:
        reap(procs, what)
    return outs


def vsp(probe, *args, env, user=None, program=None):
    """vsprobe's one line: "ok ..." or "err ERRNO"."""
    return probe_line(call([program or probe.path] + list(args), env,
                           user=user))


def sh_exec(argv, env, user=None, timeout=HANG):
    """argv, exec'd by a shell whose own environment is env: the program's
    path is walked with the same PATH whoever decides an exec walk."""
    return call(["/bin/sh", "-c", 'exec "$@"', "sh"] + [str(a) for a in argv],
                env, user=user, timeout=timeout)


def readlink(probe, path, env, user=None, program=None):
    return vsp(probe, "readlink", path, env=env, user=user, program=program)


def exec_rule(m, varsymfs):
    """Who decides the walks inside an execve on mount m (conftest's
    execve_decides): a search link may not carry system.varsym_exec; the
    daemon's exec mode is then read from a seed mount of the same program."""
    try:
        return execve_decides(m)
    except (OSError, StopIteration):
        return execve_decides(varsymfs("V"))


def link_size(impl, target):
    """A link's st_size (SPEC section 6): for the module the length of the
    caller's own target, 0 when it has none; for the FUSE program always 0
    (the kernel keeps one size per FUSE inode, for every caller)."""
    return len(target) if impl == "kernel" and target else 0


def file_id(path):
    st = os.stat(path)
    return f"{st.st_dev}:{st.st_ino}"


def needs_root():
    if os.getuid() != 0:
        pytest.skip("needs root (or root of a user namespace)")


def vsexe_copy(nix, build, directory, name="which"):
    """A copy of vsattack: `NAME exe` prints the file the kernel ran."""
    dst = os.path.join(directory, name)
    shutil.copy(os.path.join(build, "vsattack"), dst)
    os.chmod(dst, 0o755)
    return dst


# ---- the NixOS rows -------------------------------------------------------------

@pytest.mark.kernel_dependent
@pytest.mark.parametrize("shebang", ["env python3", "python3"])
def test_shebang_script(nix, varsymfs, shebang):
    """#!/usr/bin/env python3 (env from the fallback or the profile, then
    python3 from PATH) and #!/usr/bin/python3 (python3 found on PATH by the
    kernel's interpreter walk, inside execve)."""
    m = nix.usr_bin
    script = os.path.join(nix.dir("scripts"), "hello")
    with open(script, "w") as f:
        f.write(f"#!{m.dir}/{shebang}\nimport sys\n"
                "print('hello from python', sys.version_info[0], "
                "sys.argv[1:])\n")
    os.chmod(script, 0o755)
    p = sh_exec([script, "a", "b c"], env=nix.env())
    if shebang == "python3" and exec_rule(m, varsymfs) == "default":
        # the interpreter walk is resolved as secure: fallback only
        assert p.returncode != 0 and p.out == "", (p.out, p.err)
        return
    assert p.returncode == 0 and \
        p.out == "hello from python 3 ['a', 'b c']\n", (p.out, p.err)
    # a PATH without the profile: no python3 anywhere, the script fails
    p = sh_exec([script], env=nix.env(path="/nonexistent"))
    assert p.returncode != 0 and "hello" not in p.out, (p.out, p.err)


@pytest.mark.parametrize("where", ["makefile", "command line"])
def test_make_with_shell_through_the_mount(nix, varsymfs, where):
    """SHELL=/usr/bin/bash in a Makefile, or on make's command line: the
    recipe runs under bash (dash would refuse ${BASH_VERSINFO[0]})."""
    if "make" not in nix.programs:
        pytest.skip("no make on this system")
    m = nix.usr_bin
    src = nix.dir("src")
    shell = f"{m.dir}/bash"
    with open(os.path.join(src, "Makefile"), "w") as f:
        if where == "makefile":
            f.write(f"SHELL = {shell}\n")
        f.write('all:\n\t@echo "recipe ran by bash $${BASH_VERSINFO[0]}"\n')
    argv = [os.path.join(nix.profile, "make"), "-s", "-C", src]
    if where == "command line":
        argv.append(f"SHELL={shell}")
    p = sh_exec(argv, env=nix.env())
    if exec_rule(m, varsymfs) == "default":
        # make's execve of the shell is resolved as secure: no bash there
        assert p.returncode != 0 and "No such file or directory" in p.err, \
            (p.out, p.err)
        return
    assert p.returncode == 0, (p.out, p.err)
    words = p.out.split()
    assert p.out.startswith("recipe ran by bash ") and \
        words[-1].isdigit() and len(p.out.splitlines()) == 1, (p.out, p.err)


def test_env_i_finds_sh_in_the_fallback(nix, varsymfs, probe):
    """env -i /usr/bin/sh: no PATH at all, the fallback's sh; a name that
    only the profile holds is ENOENT for a process with no PATH."""
    m = nix.usr_bin
    env_prog = os.path.join(nix.profile, "env")
    p = sh_exec([env_prog, "-i", f"{m.dir}/sh", "-c", "echo ok"],
                env=nix.env())
    assert p.returncode == 0 and p.out == "ok\n", (p.out, p.err)
    # what a process with an empty environment is answered
    assert readlink(probe, f"{m.dir}/sh", env={}) == f"ok {nix.fallback}/sh"
    assert readlink(probe, f"{m.dir}/python3", env={}) == ENOENT
    assert readlink(probe, f"{m.dir}/python3", env=nix.env()) == \
        f"ok {nix.profile}/python3"
    # env -i of a name only in the profile: envp has no PATH
    p = sh_exec([env_prog, "-i", f"{m.dir}/python3", "-c", "print('ran')"],
                env=nix.env())
    if exec_rule(m, varsymfs) == "own":
        # envp unreadable (Yama 3): env's own exec-time PATH decides
        assert p.out == "ran\n", (p.out, p.err)
    else:
        assert p.returncode == 127 and p.out == "" and \
            "No such file or directory" in p.err, (p.out, p.err)


@pytest.mark.kernel_dependent
@needs_real_root
def test_setuid_program_searches_only_the_fallback(nix, probe, public_dir):
    """vsprobe made setuid root, run by nobody with a PATH naming nobody's
    own directory first (holding an sh of its own): it follows the
    fallback only, for readlink, stat and its own execve."""
    needs_root()
    m = nix.usr_bin
    mine = nix.dir("home/nobody/bin")
    os.chown(mine, 65534, 65534)
    nix.tool(mine, "sh", "#!/bin/sh\necho nobody sh\n")
    nix.tool(mine, "mine")
    suid = setuid_copy(probe.path, public_dir, "vsprobe-suid")
    env = {"PATH": f"{mine}:{nix.profile}"}
    sh = f"{m.dir}/sh"
    # the same program without the setuid bit follows nobody's PATH
    assert readlink(probe, sh, env, user="nobody") == f"ok {mine}/sh"
    assert readlink(probe, f"{m.dir}/mine", env, user="nobody") == \
        f"ok {mine}/mine"
    # setuid: the fallback only
    assert readlink(probe, sh, env, user="nobody", program=suid) == \
        f"ok {nix.fallback}/sh"
    for name in ("mine", "python3"):
        assert readlink(probe, f"{m.dir}/{name}", env, user="nobody",
                        program=suid) == ENOENT, name
    assert vsp(probe, "stat", sh, env=env, user="nobody", program=suid) == \
        f"ok {os.stat(os.path.join(nix.fallback, 'sh')).st_ino}"
    # its own execve, with nobody's PATH in envp too
    p = call([suid, "exec", f"PATH={mine}:{nix.profile}", "--", sh, "-c",
              "echo fallback sh"], env=env, user="nobody")
    assert p.out == "fallback sh\n", (p.out, p.err)


# ---- no recursion, no hang ----------------------------------------------------

def loop_paths(nix, m):
    """PATH entries that lead back into search mount m: {name: entry}."""
    back = os.path.join(nix.root, "back")
    os.symlink(m.dir, back)
    names = nix.dir("names-into-the-mount")
    for name in ("sh", "python3", "tool"):
        os.symlink(f"{m.dir}/{name}", os.path.join(names, name))
    return {
        "the mount": m.dir,
        "the mount, trailing slash": m.dir + "/",
        "a link to the mount": back,
        "a dir of links into it": names,
        "the mount through ..": f"{m.dir}/../{os.path.basename(m.dir)}",
    }


@pytest.mark.parametrize("shape", [
    "the mount", "the mount, trailing slash", "a link to the mount",
    "a dir of links into it", "the mount through ..",
    "another search mount"])
@pytest.mark.attack
@pytest.mark.kernel_dependent
def test_path_into_the_mount(nix, probe, shape):
    """A PATH entry that leads back into a search mount is skipped (envfs
    #196: D-state; #195: 97 % CPU): readlink, stat and exec answer, with
    the fallback's answer, or ENOENT, or a later entry's."""
    m = nix.usr_bin
    if shape == "another search mount":
        # two mounts, each the other's first fallback directory
        other = nix.mount(f"search,fallback={m.dir}:{nix.fallback}")
        entry = other.dir
        env = {"PATH": m.dir}
        assert readlink(probe, f"{other.dir}/sh", env) == \
            f"ok {nix.fallback}/sh"
        assert readlink(probe, f"{other.dir}/python3", env) == ENOENT
    else:
        entry = loop_paths(nix, m)[shape]
    env = {"PATH": entry}
    sh = f"{m.dir}/sh"
    assert readlink(probe, sh, env) == f"ok {nix.fallback}/sh"
    assert vsp(probe, "stat", sh, env=env) == \
        f"ok {os.stat(os.path.join(nix.fallback, 'sh')).st_ino}"
    assert readlink(probe, f"{m.dir}/python3", env) == ENOENT
    assert vsp(probe, "stat", f"{m.dir}/python3", env=env) == ENOENT
    # the entry does not end the search: a later one still counts
    env2 = {"PATH": f"{entry}:{nix.profile}:{entry}"}
    assert readlink(probe, f"{m.dir}/python3", env2) == \
        f"ok {nix.profile}/python3"
    p = sh_exec([sh, "-c", "echo ok"], env=env)
    assert p.returncode == 0 and p.out == "ok\n", (p.out, p.err)


@pytest.mark.threads
@pytest.mark.attack
def test_path_into_the_mount_many_at_once(nix, probe):
    """32 callers at once, each PATH leading back into the mount: none
    waits on another (a daemon whose threads wait on its own mount would
    run out of them)."""
    m = nix.usr_bin
    entries = list(loop_paths(nix, m).values())
    want = f"{nix.fallback}/sh"
    procs = []
    try:
        for i in range(32):
            path = ":".join(entries[i % len(entries):] + [m.dir] * (i % 3))
            procs.append(subprocess.Popen(
                [probe.path, "loop", "100", f"{m.dir}/sh", want],
                env={"PATH": path}, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE))
    finally:
        outs = wait_all(procs, 4 * HANG, "32 callers whose PATH leads into "
                        "the mount")
    assert [out.strip() for out, _ in outs] == ["ok 0 wrong of 100"] * 32, \
        outs


# ---- bounds -------------------------------------------------------------------

def nowhere(nbytes):
    """Absolute entries of directories that do not exist, each with its
    ':', nbytes in all (at least 6)."""
    out, left = [], nbytes
    while left:
        take = min(left, 200)
        if 0 < left - take < 6:
            take = left - 6
        out.append("/nx/" + "f" * (take - 5) + ":")
        left -= take
    text = "".join(out)
    assert len(text) == nbytes
    return text


def ten_thousand(head):
    """head (a PATH's first entries), then entries enough for 10,000."""
    count = len(head.split(":"))
    tail = ":".join(f"/t/{i}" for i in range(10000 - count))
    path = head + ":" + tail
    assert len(path.split(":")) == 10000
    return path


def bound_rows():
    """(id, PATH maker given the profile, whether the profile is searched)."""
    return [
        ("profile 1024th absolute entry",
         lambda p: ten_thousand(":".join(["", "relative", ".", ""] +
                                         [f"/nx{i}" for i in range(1023)] +
                                         [p])), True),
        ("profile 1025th absolute entry",
         lambda p: ten_thousand(":".join([f"/nx{i}" for i in range(1024)] +
                                         [p])), False),
        ("profile 10000th entry",
         lambda p: ":".join([f"/nx/{i}" for i in range(9999)] + [p]), False),
        ("profile ends at byte 32768",
         lambda p: ten_thousand(nowhere(32768 - len(p)) + p), True),
        ("profile ends at byte 32769",
         lambda p: ten_thousand(nowhere(32769 - len(p)) + p), False),
        ("profile after byte 32768",
         lambda p: ten_thousand(nowhere(40000) + p), False),
    ]


@pytest.mark.parametrize("make_path,searched",
                         [r[1:] for r in bound_rows()],
                         ids=[r[0] for r in bound_rows()])
@pytest.mark.attack
def test_path_of_10000_entries(nix, probe, make_path, searched):
    """Only the first 1024 absolute entries of PATH, and only those whole
    in its first 32768 bytes, are searched; the rest are not looked at.
    The fallback, whose bound is checked at mount, is searched after."""
    m = nix.usr_bin
    env = {"PATH": make_path(nix.profile)}
    assert readlink(probe, f"{m.dir}/python3", env) == \
        (f"ok {nix.profile}/python3" if searched else ENOENT)
    assert readlink(probe, f"{m.dir}/sh", env) == f"ok {nix.fallback}/sh"
    p = sh_exec([f"{m.dir}/sh", "-c", "echo ok"], env=env)
    assert p.returncode == 0 and p.out == "ok\n", (p.out, p.err)


def nix_shell_path(nix, count=80):
    """A PATH as `nix develop` makes one: count store directories of over
    100 bytes each, a tool in the last one only."""
    dirs = [nix.dir(f"store/{i:032x}-python3.11-package-{i:03d}-with-plugins"
                    "-1.0-dev/bin")
            for i in range(count)]
    tool = nix.tool(dirs[-1], "nixtool")
    return ":".join(dirs), tool


def test_a_nix_shell_path_finds_its_last_directory(nix, varsymfs, probe):
    """issue 33, item 8: a Nix development shell's PATH of 80 entries,
    about 9 KiB, was cut at 4095 bytes and lost its last directories, so
    that `command -v` found what the mount did not.  Now its last
    directory is searched, by every call and by the shell alike."""
    m = nix.usr_bin
    path, tool = nix_shell_path(nix)
    assert len(path.split(":")) == 80 and 8192 < len(path) < 32768
    env = {"PATH": path}
    link = f"{m.dir}/nixtool"
    assert readlink(probe, link, env) == f"ok {tool}"
    assert vsp(probe, "stat", link, env=env) == \
        f"ok {os.stat(tool).st_ino}"
    p = call(["/bin/sh", "-c", "command -v nixtool"], env)
    assert p.out == f"{tool}\n", (p.out, p.err)
    # run by a shell whose PATH is the same, through the mount
    p = sh_exec([link], env=env)
    if exec_rule(m, varsymfs) == "default":
        # execve's own walk without exec hooks: the fallback only
        assert p.returncode == 127, (p.out, p.err)
    else:
        assert p.returncode == 0 and p.out == f"nixtool in " \
            f"{os.path.dirname(tool)}\n", (p.out, p.err)


@pytest.mark.parametrize("shape", ["entries", "bytes"])
def test_explain_says_the_path_was_cut(nix, build, shape):
    """varsym explain tells, under a search link, how much of the caller's
    PATH the search left out: past its 1024th directory, or past its first
    32768 bytes; and nothing for a PATH searched whole."""
    m = nix.usr_bin
    if shape == "entries":
        path = ":".join([f"/nx{i}" for i in range(1499)] + [nix.profile])
        want = "cut       PATH: 1500 directories, searched the first 1024"
    else:
        path = nowhere(40000) + nix.profile
        dirs = path.count(":") + 1
        whole = 32768 // 200        # nowhere()'s entries: 200 bytes
        want = f"cut       PATH: {len(path)} bytes, searched the first " \
            f"32768: {whole} of its {dirs} directories"
    varsym = os.path.join(build, "varsym")
    p = call([varsym, "explain", f"{m.dir}/python3"], {"PATH": path})
    assert p.returncode == 1, p.out + p.err
    assert [line.strip() for line in p.out.splitlines()
            if line.strip().startswith("cut ")] == [want], p.out
    p = call([varsym, "explain", f"{m.dir}/python3"], nix.env())
    assert p.returncode == 0 and "cut " not in p.out, p.out


def test_fallback_of_256_directories(nix, probe):
    """256 fallback directories are accepted, the last one searched."""
    last = nix.dir("last/bin")
    nix.tool(last)
    dirs = [f"/nx{i}" for i in range(255)] + [last]
    m = nix.mount("search,fallback=" + ":".join(dirs))
    assert readlink(probe, f"{m.dir}/tool", {}) == f"ok {last}/tool"
    # a caller's 1024 entries do not use up the fallback's
    env = {"PATH": ":".join(f"/p{i}" for i in range(1100))}
    assert readlink(probe, f"{m.dir}/tool", env) == f"ok {last}/tool"


# ---- concurrency ----------------------------------------------------------------

@pytest.mark.threads
def test_64_callers_with_distinct_paths(nix, varsymfs, probe):
    """64 processes at once, each its own PATH (all alike but for the last
    entry): each reads, stats and runs its own directory's tool, never
    another's."""
    m = nix.usr_bin
    runs = exec_rule(m, varsymfs) != "default"
    tool = f"{m.dir}/tool"
    procs = []
    try:
        for i in range(64):
            d = nix.dir(f"callers/{i}/bin")
            nix.tool(d, text=f"#!/bin/sh\necho caller {i}\n")
            script = (f"{probe.path} loop 200 {tool} {d}/tool; "
                      f"{probe.path} stat-loop 50 {tool}; ")
            if runs:
                # a few each: 64 at once under TCG are many execs
                script += ("i=0; while [ $i -lt 5 ]; do "
                           f"{tool}; i=$((i + 1)); done")
            procs.append(subprocess.Popen(
                ["/bin/sh", "-c", script],
                env={"PATH": f"/nonexistent:{nix.profile}:{d}"},
                stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    finally:
        outs = wait_all(procs, 10 * HANG, "64 callers")
    wrong = []
    for i, (out, err) in enumerate(outs):
        lines = out.splitlines()
        want = ["ok 0 wrong of 200", "ok 50"] + \
            ([f"caller {i}"] * 5 if runs else [])
        if lines != want:
            wrong.append((i, lines[:3], sorted(set(lines[2:]))[:4],
                          err[-300:]))
    assert not wrong, f"{len(wrong)} callers got another answer: {wrong[:4]}"


# ---- one answer for every system call ------------------------------------------

SYSCALLS = r'''
import ctypes, errno, hashlib, json, os, platform, stat, subprocess, sys

libc = ctypes.CDLL(None, use_errno=True)
SYS_STATX = {"x86_64": 332, "aarch64": 291, "riscv64": 291}.get(
    platform.machine())
AT_FDCWD, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS = -100, 0x100, 0x7ff


def err(e):
    return "err " + errno.errorcode.get(e, str(e))


def show(mode, dev, ino, size):
    if stat.S_ISLNK(mode):
        return f"ok link {size}"
    return f"ok {stat.filemode(mode)[0]} {dev}:{ino}"


def by(fn, path):
    try:
        st = fn(path)
    except OSError as e:
        return err(e.errno)
    return show(st.st_mode, st.st_dev, st.st_ino, st.st_size)


def statx(path, flags):
    if SYS_STATX is None:
        return "no statx here"
    buf = ctypes.create_string_buffer(256)
    if libc.syscall(ctypes.c_long(SYS_STATX), ctypes.c_long(AT_FDCWD),
                    ctypes.c_char_p(os.fsencode(path)), ctypes.c_long(flags),
                    ctypes.c_long(STATX_BASIC_STATS), buf) != 0:
        return err(ctypes.get_errno())
    raw = buf.raw
    u = lambda off, n: int.from_bytes(raw[off:off + n], "little")
    return show(u(28, 2), os.makedev(u(136, 4), u(140, 4)), u(32, 8),
                u(40, 8))


def access(path):
    if libc.access(os.fsencode(path), os.X_OK) == 0:
        return "ok"
    return err(ctypes.get_errno())


def opened(path):
    try:
        with open(path, "rb") as f:
            return "ok " + hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        return err(e.errno)


def readlink(path):
    try:
        return "ok " + os.readlink(path)
    except OSError as e:
        return err(e.errno)


def execve(path, args):
    try:
        p = subprocess.run([path] + args, env=dict(os.environ),
                           capture_output=True, timeout=60)
    except OSError as e:
        return err(e.errno)
    return "ok " + p.stdout.decode(errors="replace")


path, args = sys.argv[1], sys.argv[2:]
print(json.dumps({
    "lstat": by(os.lstat, path),
    "statx nofollow": statx(path, AT_SYMLINK_NOFOLLOW),
    "readlink": readlink(path),
    "stat": by(os.stat, path),
    "statx": statx(path, 0),
    "access X_OK": access(path),
    "open": opened(path),
    "execve": execve(path, args),
}))
'''

# name: (the directory that holds it, exec arguments, what running it says)
ONE_ANSWER = {
    "python3": ("profile", ["-c", "print('python3 ran')"], "python3 ran\n"),
    "vsexe": ("profile", ["exe"], None),    # "exe " + the file the kernel ran
    "env": ("profile", ["/bin/echo", "env ran"], "env ran\n"),  # also in
    "sh": ("fallback", ["-c", "echo sh ran"], "sh ran\n"),      # the fallback
    "nowhere": (None, [], None),
}


@pytest.mark.parametrize("user", ["root", "nobody"])
@pytest.mark.parametrize("name", list(ONE_ANSWER))
def test_one_answer_for_every_system_call(nix, varsymfs, probe, build, impl,
                                          name, user):
    """The same answer for lstat, statx, readlink, stat, access, open,
    execve and execveat, from three programs (envfs #173, #182, #180): lstat
    shows a link, found or not (its st_size: link_size()), the rest follow
    it to the target, or ENOENT for a name found nowhere."""
    if user == "nobody" and IN_USERNS:
        pytest.skip(NEEDS_REAL_ROOT)
    who = "nobody" if user == "nobody" else None
    m = nix.usr_bin
    where, args, says = ONE_ANSWER[name]
    link = f"{m.dir}/{name}"
    env = nix.env()
    target = os.path.join(getattr(nix, where), name) if where else None
    if name == "vsexe":
        says = f"exe {target}\n"

    size = link_size(impl, target)
    if target:
        with open(target, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
        st = os.stat(target)
        want = {"lstat": f"ok link {size}",
                "statx nofollow": f"ok link {size}",
                "readlink": f"ok {target}",
                "stat": f"ok - {st.st_dev}:{st.st_ino}",
                "statx": f"ok - {st.st_dev}:{st.st_ino}",
                "access X_OK": "ok",
                "open": f"ok {digest}",
                "execve": f"ok {says}"}
    else:
        want = {"lstat": "ok link 0", "statx nofollow": "ok link 0",
                "readlink": ENOENT, "stat": ENOENT, "statx": ENOENT,
                "access X_OK": ENOENT, "open": ENOENT, "execve": ENOENT}
    # execve's own walk without exec hooks: secure, the fallback only
    fallback_only = exec_rule(m, varsymfs) == "default"
    if fallback_only and where == "profile":
        want["execve"] = ("ok " + says) if name in nix.FALLBACK else ENOENT
    script = os.path.join(nix.root, "syscalls.py")
    if not os.path.exists(script):
        with open(script, "w") as f:
            f.write(SYSCALLS)
        os.chmod(script, 0o644)
    p = call([PYTHON, script, link] + args, env=env, user=who)
    got = json.loads(p.out)
    if got["statx"] == "no statx here":
        del want["statx"], want["statx nofollow"]
        del got["statx"], got["statx nofollow"]
    # execveat, relative to the mount, and through an O_PATH descriptor
    vsattack = os.path.join(build, "vsattack")
    for mode in (f"execveat-dirfd={m.dir}", "execveat-empty"):
        p = call([vsattack, "exec", mode, f"PATH={nix.profile}", "--",
                  name if "dirfd" in mode else link] + args, env=env,
                 user=who)
        got[mode] = ENOENT if p.out.startswith("err ENOENT") else \
            "ok " + p.out
    want[f"execveat-dirfd={m.dir}"] = want["execve"]
    # open(O_PATH) follows the link as stat does, outside execve
    want["execveat-empty"] = f"ok {says}" if target else ENOENT
    # and vsprobe's and vsattack's own calls
    for call_name in ("readlink", "lstat", "stat", "open"):
        got["vsprobe " + call_name] = vsp(probe, call_name, link, env=env,
                                          user=who)
    p = call([vsattack, "lstat-size", link], env=env, user=who)
    got["vsattack statx size"] = p.out.strip()
    want.update({
        "vsprobe readlink": want["readlink"],
        "vsprobe lstat": f"ok {size}",
        "vsprobe stat": f"ok {os.stat(target).st_ino}" if target else ENOENT,
        "vsprobe open": "ok" if target else ENOENT,
        "vsattack statx size": f"ok {size}",
    })
    assert got == want


def test_lstat_size_is_each_callers_own(nix, probe, impl):
    """Alternating callers: the size one is shown is never another's."""
    m = nix.usr_bin
    short = nix.dir("s")
    longer = nix.dir("a/much/longer/directory/name/than/the/other/one")
    for d in (short, longer):
        nix.tool(d)
    for d in (short, longer, None, short, None, longer):
        env = {"PATH": d} if d else {}
        want = link_size(impl, f"{d}/tool" if d else None)
        assert vsp(probe, "lstat", f"{m.dir}/tool", env=env) == \
            f"ok {want}", d


# ---- what counts, what is skipped ----------------------------------------------

def skip_rows():
    """(id, setup(nix, first, second) -> PATH): `tool` is in second,
    executable; setup puts something else named tool in first."""
    def not_executable(nix, a, b):
        nix.tool(a, mode=0o644)
        return f"{a}:{b}"

    def directory(nix, a, b):
        os.mkdir(os.path.join(a, "tool"))
        os.chmod(os.path.join(a, "tool"), 0o755)
        return f"{a}:{b}"

    def link_to_directory(nix, a, b):
        os.symlink(a, os.path.join(a, "tool"))
        return f"{a}:{b}"

    def dangling_link(nix, a, b):
        os.symlink("/nonexistent/tool", os.path.join(a, "tool"))
        return f"{a}:{b}"

    def fifo(nix, a, b):
        os.mkfifo(os.path.join(a, "tool"), 0o777)
        os.chmod(os.path.join(a, "tool"), 0o777)
        return f"{a}:{b}"

    def missing_dir(nix, a, b):
        return f"{a}/nonexistent:{a}/tool-is-not-a-dir:{b}"

    def empty_entries(nix, a, b):
        return f"::{b}::"

    def relative_entries(nix, a, b):
        return f"relative:.:./:..:{b}"

    return [("not executable", not_executable), ("a directory", directory),
            ("a link to a directory", link_to_directory),
            ("a dangling link", dangling_link), ("a fifo", fifo),
            ("a missing directory", missing_dir),
            ("empty entries", empty_entries),
            ("relative entries", relative_entries)]


@pytest.mark.parametrize("setup", [r[1] for r in skip_rows()],
                         ids=[r[0] for r in skip_rows()])
def test_only_executable_files_count(nix, varsymfs, probe, setup):
    """A later directory's executable wins over a file that is not
    executable, a directory, a link to one, a dangling link or a fifo of
    the same name; empty and relative entries are skipped (they would name
    the current directory: here one holding tool and bin/tool)."""
    m = nix.usr_bin
    a, b = nix.dir("first"), nix.dir("second")
    nix.tool(b)
    path = setup(nix, a, b)
    cwd = nix.dir("cwd")
    nix.tool(cwd)
    nix.tool(nix.dir("cwd/relative"))
    # from a shell in cwd, so that "." and "relative" would find a tool
    env = {"PATH": path}
    p = call(["/bin/sh", "-c", f'cd {cwd} && exec "$@"', "sh", probe.path,
              "readlink", f"{m.dir}/tool"], env=env)
    assert p.out.strip() == f"ok {b}/tool", (p.out, p.err)
    p = call(["/bin/sh", "-c", f'cd {cwd} && exec "$@"', "sh", probe.path,
              "stat", f"{m.dir}/tool"], env=env)
    assert p.out.strip() == f"ok {os.stat(f'{b}/tool').st_ino}", \
        (p.out, p.err)
    p = call(["/bin/sh", "-c", f"cd {cwd} && {m.dir}/tool"], env=env)
    if exec_rule(m, varsymfs) == "default":
        assert p.returncode != 0 and p.out == "", (p.out, p.err)
    else:
        assert p.out == f"tool in {b}\n", (p.out, p.err)


def test_a_link_to_an_executable_counts(nix, probe):
    """DIR/NAME a link to an executable: it counts, and the answer is
    DIR/NAME itself, not where it leads."""
    m = nix.usr_bin
    a, b = nix.dir("first"), nix.dir("second")
    real = nix.tool(b, "real")
    os.symlink(real, os.path.join(a, "tool"))
    assert readlink(probe, f"{m.dir}/tool", {"PATH": f"{a}:{b}"}) == \
        f"ok {a}/tool"


@pytest.mark.parametrize("slashes", ["/", "//", "///"])
def test_trailing_slashes(nix, probe, slashes):
    """A directory's trailing slashes are dropped, in PATH and in the
    fallback list: DIR/NAME, never DIR//NAME."""
    d = nix.dir("bin")
    nix.tool(d)
    m = nix.mount(f"search,fallback={nix.fallback}{slashes}")
    assert readlink(probe, f"{m.dir}/tool", {"PATH": d + slashes}) == \
        f"ok {d}/tool"
    assert readlink(probe, f"{m.dir}/sh", {"PATH": d + slashes}) == \
        f"ok {nix.fallback}/sh"


@pytest.mark.kernel_dependent
def test_noexec_mount_does_not_count(nix, varsymfs, probe):
    """An executable file on a noexec mount cannot be run: skipped."""
    needs_root()
    m = nix.usr_bin
    a, b = nix.dir("noexec"), nix.dir("second")
    nix.tool(b)
    env = {"PATH": f"{a}:{b}"}
    for options, first in (("noexec,mode=0755", False), ("mode=0755", True)):
        run(["mount", "-t", "tmpfs", "-o", options, "none", a], env=SBIN,
            check=True)
        try:
            nix.tool(a)
            # the same file on a mount that allows exec counts
            assert readlink(probe, f"{m.dir}/tool", env) == \
                f"ok {a if first else b}/tool", options
        finally:
            run(["umount", a], env=SBIN, check=True)


@pytest.mark.kernel_dependent
@needs_real_root
def test_the_callers_credentials_decide(nix, varsymfs, probe):
    """Whether the caller may execute DIR/NAME, as faccessat(X_OK,
    AT_EACCESS) with the caller's fsuid, fsgid and groups: never the
    daemon's (root's)."""
    needs_root()
    m = nix.usr_bin
    tool = f"{m.dir}/tool"
    root_only = nix.dir("root-only")
    nix.tool(root_only, mode=0o700)
    closed = nix.dir("closed")
    nix.tool(closed)
    os.chmod(closed, 0o700)         # nobody may not walk it
    group = nix.dir("group")
    nix.tool(group, mode=0o710)
    os.chown(os.path.join(group, "tool"), 0, 4242)
    own_group = nix.dir("nogroup")
    nix.tool(own_group, mode=0o710)
    os.chown(os.path.join(own_group, "tool"), 0, 65534)
    everyone = nix.dir("everyone")
    nix.tool(everyone)

    def ask(path, argv_user):
        p = call(argv_user + [probe.path, "readlink", tool],
                 env={"PATH": path})
        return p.out.strip()

    nobody = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
              "--clear-groups", "--"]
    in_4242 = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
               "--groups=4242", "--"]
    for first in (root_only, closed, group):
        path = f"{first}:{everyone}"
        assert ask(path, []) == f"ok {first}/tool", first
        assert ask(path, nobody) == f"ok {everyone}/tool", first
    # a supplementary group, and the primary one
    assert ask(f"{group}:{everyone}", in_4242) == f"ok {group}/tool"
    assert ask(f"{own_group}:{everyone}", nobody) == f"ok {own_group}/tool"
    # the same for stat and exec
    env = {"PATH": f"{root_only}:{everyone}"}
    assert vsp(probe, "stat", tool, env=env, user="nobody") == \
        f"ok {os.stat(os.path.join(everyone, 'tool')).st_ino}"
    p = sh_exec([tool], env=env, user="nobody")
    if exec_rule(m, varsymfs) == "default":
        assert p.returncode != 0 and p.out == "", (p.out, p.err)
    else:
        assert p.out == f"tool in {everyone}\n", (p.out, p.err)
    p = sh_exec([tool], env=env)
    if exec_rule(m, varsymfs) != "default":
        assert p.out == f"tool in {root_only}\n", (p.out, p.err)


# ---- names, the root, listing ------------------------------------------------

def test_every_name_is_a_link(nix, probe):
    """Any name (1 to 255 bytes, not . or ..) is a symlink, found or not;
    the root is a read-only directory owned by the mounter."""
    m = nix.usr_bin
    st = os.lstat(m.dir)
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o555
    assert st.st_uid == os.getuid()
    for name in ("sh", "nowhere", "x" * 255, "with space", "-dash",
                 ".hidden", "...", "\x01"):
        st = os.lstat(os.path.join(m.dir, name))
        assert stat.S_ISLNK(st.st_mode) and \
            stat.S_IMODE(st.st_mode) == 0o777, name
    with pytest.raises(OSError) as e:
        os.lstat(os.path.join(m.dir, "x" * 256))
    assert e.value.errno == errno.ENAMETOOLONG
    assert os.path.samestat(os.stat(os.path.join(m.dir, ".")),
                            os.stat(m.dir))
    assert os.path.samestat(os.stat(os.path.join(m.dir, "..")),
                            os.stat(os.path.dirname(m.dir)))
    options = os.getxattr(os.path.join(m.dir, "sh"), "system.varsym_options",
                          follow_symlinks=False)
    assert options == f"search=PATH,fallback={nix.fallback}".encode()


def test_the_root_cannot_change(nix):
    """Even root adds, removes and renames nothing; the fallback's files
    stay as they were."""
    needs_root()
    m = nix.usr_bin
    new, sh = os.path.join(m.dir, "new"), os.path.join(m.dir, "sh")
    for action in (lambda: os.mkdir(new), lambda: os.symlink("/x", new),
                   lambda: os.mknod(new, 0o600 | stat.S_IFIFO)):
        with pytest.raises(OSError) as e:
            action()
        # every name exists already: EEXIST, or EPERM
        assert e.value.errno in (errno.EPERM, errno.EEXIST), e.value
    for action in (lambda: os.unlink(sh), lambda: os.rename(sh, new),
                   lambda: os.chmod(m.dir, 0o777)):
        with pytest.raises(PermissionError):
            action()
    assert os.path.isfile(os.path.join(nix.fallback, "sh"))
    assert stat.S_IMODE(os.lstat(m.dir).st_mode) == 0o555


def test_listing_is_the_union_of_the_fallback(nix, probe):
    """ls shows what a plain /usr/bin would: the fallback directories'
    names, each once, all links; never the caller's PATH (envfs #162)."""
    more = nix.dir("more/bin")
    nix.tool(more, "env")               # the first directory's env wins
    nix.tool(more, "extra")
    m = nix.mount(f"search,fallback={nix.fallback}:{more}")
    want = ["env", "extra", "sh"]
    names = os.listdir(m.dir)
    assert sorted(names) == want, names
    with os.scandir(m.dir) as it:
        assert all(e.is_symlink() for e in it)
    p = call(["/bin/ls", "-a", m.dir], env={})
    assert p.out.split() == [".", ".."] + want, (p.out, p.err)
    # a caller with the profile on PATH lists the same
    p = call([PYTHON, "-c", "import os, sys; "
              "print(*sorted(os.listdir(sys.argv[1])))", m.dir],
             env=nix.env())
    assert p.out.split() == want, (p.out, p.err)
    assert readlink(probe, f"{m.dir}/extra", {}) == f"ok {more}/extra"
    assert readlink(probe, f"{m.dir}/env", {}) == f"ok {nix.fallback}/env"
    # no fallback: nothing to list
    bare = nix.mount("search")
    assert os.listdir(bare.dir) == []


@needs_real_root
def test_listing_with_the_callers_permissions(nix, probe):
    """A fallback directory the caller cannot read is not listed for it;
    its files are still found (searching needs only x)."""
    needs_root()
    more = nix.dir("more/bin")
    nix.tool(more, "extra")
    os.chmod(more, 0o711)
    m = nix.mount(f"search,fallback={nix.fallback}:{more}")
    lister = [PYTHON, "-c", "import os, sys; "
              "print(*sorted(os.listdir(sys.argv[1])))", m.dir]
    assert call(lister, env={}).out.split() == ["env", "extra", "sh"]
    assert call(lister, env={}, user="nobody").out.split() == ["env", "sh"]
    assert readlink(probe, f"{m.dir}/extra", {}, user="nobody") == \
        f"ok {more}/extra"


# ---- options ---------------------------------------------------------------------

BAD = [
    ("search,fallback=bin", "'fallback=' entry 'bin' is not an absolute path"),
    ("search,fallback=/a:rel/b",
     "'fallback=' entry 'rel/b' is not an absolute path"),
    ("search,fallback=/a::/b", "'fallback=' entry '' is not an absolute path"),
    ("search,fallback=/a:", "'fallback=' entry '' is not an absolute path"),
    ("search,fallback=", "empty value in 'fallback='"),
    ("search,fallback", "option 'fallback' needs a value ('fallback=...')"),
    ("search,fallback=" + ":".join(f"/d{i}" for i in range(257)),
     "'fallback=' has more than 256 directories"),
    ("fallback=/bin", "option 'fallback=' applies only to search mode "
     "('search' or 'search=VAR')"),
    ("UNIVERSE,fallback=/bin", "option 'fallback=' applies only to search "
     "mode ('search' or 'search=VAR')"),
    ("search,default=/bin",
     "option 'default=' applies only to seed mode, not to search mode"),
    ("search,prefix=/p/",
     "option 'prefix=' applies only to seed mode, not to search mode"),
    ("search,mode=0755",
     "option 'mode=' applies only to template mode, not to search mode"),
    ("search,uid=0",
     "option 'uid=' applies only to template mode, not to search mode"),
    ("search,nr_links=5",
     "option 'nr_links=' applies only to template mode, not to search mode"),
    ("search,UNIVERSE",
     "variable 'UNIVERSE' given, but 'search=PATH' makes this a search mount"),
    ("UNIVERSE,search", "variable given twice: 'UNIVERSE' and 'search=PATH'"),
    ("search,search=P", "option 'search' given twice"),
    ("search=1P", "invalid variable name in 'search=1P'"),
]


@pytest.mark.parametrize("options,message", BAD, ids=[b[0][:40] for b in BAD])
def test_bad_options_are_refused(varsymfs, impl, probe, public_dir, options,
                                 message):
    assert_refused(varsymfs, impl, probe, public_dir, options, message)


def test_a_missing_fallback_directory_is_warned_of(nix, impl, probe):
    """issue 33, item 12: a FUSE search mount whose fallback= names a
    directory that does not exist is made, and the program says which, in
    the words mount.varsymfs uses for the module's mounts
    (test_mount_helper.py); the directories that exist are not named."""
    if impl != "fuse":
        pytest.skip("the FUSE program; the module's is mount.varsymfs's")
    missing = os.path.join(nix.root, "no-such-dir")
    m = nix.mount(f"search,fallback={missing}:{nix.fallback}")
    assert readlink(probe, f"{m.dir}/sh", {}) == f"ok {nix.fallback}/sh"
    m.stop()
    assert f"varsymfs: warning: fallback={missing}: no such directory " \
        "(yet): a search finds nothing there\n" in m.said, m.said
    assert m.said.count("fallback=") == 1, m.said


@pytest.mark.parametrize("options,shown", [
    ("search", "search=PATH"),
    ("search,fallback={fb}", "search=PATH,fallback={fb}"),
    ("fallback={fb}:{more},search", "search=PATH,fallback={fb}:{more}"),
    ("search=MYPATH,fallback={fb}", "search=MYPATH,fallback={fb}"),
    ("var=search", "var=search"),
])
def test_options_show_in_mountinfo(nix, impl, options, shown):
    more = nix.dir("more/bin")
    fill = {"fb": nix.fallback, "more": more}
    m = nix.mount(options.format(**fill))
    shown = shown.format(**fill)
    fields = mounted_at(m.dir).split()
    sep = fields.index("-")
    fstype, source, superopts = fields[sep + 1:sep + 4]
    if impl == "fuse":
        assert (fstype, source) == ("fuse.varsymfs", shown)
    else:
        assert fstype == "varsymfs"
        assert superopts.split(",")[1:] == shown.split(",")
    link = os.path.join(m.dir, "resolve")
    assert os.getxattr(link, "system.varsym_options",
                       follow_symlinks=False) == shown.encode()


def test_var_search_is_a_seed_variable(nix, probe):
    """-o var=search: a seed mount of a variable named search, as before."""
    m = nix.mount("var=search")
    assert sorted(os.listdir(m.dir)) == ["resolve"]
    assert readlink(probe, m.link, {"search": "/x", "PATH": "/y"}) == "ok /x"


def test_search_names_the_variable(nix, probe):
    """search=MYPATH: MYPATH is searched, PATH is not."""
    m = nix.mount(f"search=MYPATH,fallback={nix.fallback}")
    py = f"{m.dir}/python3"
    assert readlink(probe, py, {"MYPATH": nix.profile, "PATH": "/nx"}) == \
        f"ok {nix.profile}/python3"
    assert readlink(probe, py, {"PATH": nix.profile}) == ENOENT
    assert readlink(probe, f"{m.dir}/sh", {"MYPATH": nix.profile}) == \
        f"ok {nix.fallback}/sh"


def test_explain_shows_each_directory(nix, build):
    """varsym explain names the variable, its source, each directory tried
    and the file found; for a name found nowhere, ENOENT and why."""
    m = nix.usr_bin
    empty = nix.dir("empty")
    env = {"PATH": f"{empty}:{nix.profile}"}
    p = call([os.path.join(build, "varsym"), "explain", f"{m.dir}/python3"],
             env)
    assert p.returncode == 0, p.out + p.err
    assert f"v python3 -> {nix.profile}/python3" in p.out, p.out
    assert f"PATH = {empty}:{nix.profile}   (from the environment)" in p.out
    assert f"not here  {empty}/python3" in p.out, p.out
    assert f"found     {nix.profile}/python3" in p.out, p.out
    p = call([os.path.join(build, "varsym"), "explain", f"{m.dir}/nowhere"],
             env)
    assert p.returncode == 1, p.out + p.err
    assert f"not here  {nix.fallback}/nowhere" in p.out, p.out
    assert "ENOENT: No such file or directory (no directory searched holds " \
        "it)" in p.out, p.out


def test_without_exec_hooks_it_says_what_breaks(nix, build, impl):
    """issue 33, item 9: a FUSE daemon serving every user without its exec
    hooks runs every program through a search mount as a setuid program
    would: from the fallback only.  It says so once, at mount, in plain
    words: what breaks, why, and what fixes it; and varsym explain says it
    once, under the link, not a line of jargon."""
    if impl != "fuse":
        pytest.skip("the FUSE program's exec hooks")
    m = nix.mount()
    mode = exec_mode(m)
    p = call([os.path.join(build, "varsym"), "explain", f"{m.dir}/python3"],
             nix.env())
    assert p.returncode == 0, p.out + p.err
    # a count of the execs whose state the exec hooks could not keep is
    # the machine's, not this mount's: no warning
    notes = [line.strip() for line in p.out.splitlines()
             if line.strip().startswith("exec ") and
             "could not keep" not in line]
    m.stop()
    if mode != "syscall only":
        assert notes == [] and "warning" not in m.said, (p.out, m.said)
        return
    assert len(notes) == 2, p.out
    runs = "programs run through this mount come from its fallback " \
        "directories only, never from the caller's PATH"
    assert notes[0] == f"exec      {runs}: fixed by the kernel's BPF " \
        "LSM or the kernel module (varsymfs(8))", p.out
    assert notes[1].startswith("exec      why: "), p.out
    said = " ".join(m.said.split())
    assert m.said.count("varsymfs: warning:") == 1, m.said
    # the daemon's warning and explain say it in the same words
    for words in (f"varsymfs: warning: {runs}; stat, test -x and command "
                  "-v still find a program on the caller's PATH.",
                  "Why: the daemon cannot put its BPF program on the "
                  "kernel's exec hooks (",
                  "bpf in its lsm= boot parameter",
                  "CAP_BPF and CAP_PERFMON",
                  "the kernel module instead: mount -t varsymfs."):
        assert words in said, m.said


def test_scopes_give_the_path(nix, probe, build, public_dir):
    """PATH from the mount's scopes (SPEC section 4): the system scope's
    for a caller with no PATH of its own, and for a setuid program,
    whatever its caller's PATH; an environment's PATH is searched alone,
    never merged with a scope's."""
    m = nix.usr_bin
    system = nix.dir("system/bin")
    nix.tool(system)
    varsym = os.path.join(build, "varsym")
    p = call([varsym, "set", "-s", m.dir, f"PATH={system}"],
             env={"PATH": "/usr/bin:/bin"})
    assert p.returncode == 0, p.err
    tool = f"{m.dir}/tool"
    assert readlink(probe, tool, {}) == f"ok {system}/tool"
    assert readlink(probe, tool, nix.env()) == ENOENT
    assert readlink(probe, f"{m.dir}/python3", {}) == ENOENT
    assert readlink(probe, f"{m.dir}/sh", {}) == f"ok {nix.fallback}/sh"
    if IN_USERNS or os.getuid() != 0:
        return
    mine = nix.dir("home/nobody/bin")
    nix.tool(mine)
    os.chown(mine, 65534, 65534)
    suid = setuid_copy(probe.path, public_dir, "vsprobe-suid")
    env = {"PATH": mine}
    assert readlink(probe, tool, env, user="nobody") == f"ok {mine}/tool"
    assert readlink(probe, tool, env, user="nobody", program=suid) == \
        f"ok {system}/tool"
    # nobody's own user scope: theirs, and never a setuid program's
    p = call([varsym, "set", m.dir, f"PATH={mine}"],
             env={"PATH": "/usr/bin:/bin"}, user="nobody")
    assert p.returncode == 0, p.err
    assert readlink(probe, tool, {}, user="nobody") == f"ok {mine}/tool"
    assert readlink(probe, tool, {}, user="nobody", program=suid) == \
        f"ok {system}/tool"
    assert readlink(probe, tool, {}) == f"ok {system}/tool"


@pytest.mark.kernel_dependent
def test_execve_rule(nix, varsymfs, probe, build):
    """env PATH=DIR /usr/bin/NAME runs DIR's NAME: the envp given to
    execve decides the program's own path (SPEC section 4), not env's own
    exec-time PATH."""
    m = nix.usr_bin
    own, theirs = nix.dir("own/bin"), nix.dir("theirs/bin")
    for d in (own, theirs):
        vsexe_copy(nix, build, d)
    env_prog = os.path.join(nix.profile, "env")
    which = f"{m.dir}/which"
    p = call([env_prog, f"PATH={theirs}", which, "exe"], env={"PATH": own})
    want = {"envp": f"exe {theirs}/which\n", "own": f"exe {own}/which\n",
            "default": ""}[exec_rule(m, varsymfs)]
    assert p.out == want, (p.out, p.err)
    if not want:
        assert p.returncode == 127 and "No such file" in p.err, p.err
    # the program then follows its own exec-time PATH
    p = call([env_prog, f"PATH={theirs}", probe.path, "readlink", which],
             env={"PATH": own})
    assert p.out.strip() == f"ok {theirs}/which"


# ---- unmount under load -------------------------------------------------------

WORKER = r'''
import errno, json, os, subprocess, sys, time

mnt, want_py, want_sh = sys.argv[1:4]
counts, wrong, streak, told = {"good": 0, "ENOENT": 0}, [], 0, False
deadline = time.monotonic() + 240


def note(answer, good):
    global streak, told
    if answer == good:
        counts["good"] += 1
        streak = 0
        if not told:
            print("good", flush=True)
            told = True
    elif answer == "err ENOENT":
        counts["ENOENT"] += 1
        streak += 1
    else:
        wrong.append(answer)


def err(e):
    return "err " + errno.errorcode.get(e.errno, str(e.errno))


while streak < 30 and time.monotonic() < deadline and len(wrong) < 20:
    try:
        a = "ok " + os.readlink(mnt + "/python3")
    except OSError as e:
        a = err(e)
    note(a, "ok " + want_py)
    try:
        st = os.stat(mnt + "/sh")
        a = f"ok {st.st_dev}:{st.st_ino}"
    except OSError as e:
        a = err(e)
    note(a, "ok " + want_sh)
    try:
        p = subprocess.run([mnt + "/sh", "-c", "echo ran"],
                           capture_output=True, timeout=60)
        a = "ok " + p.stdout.decode().strip()
    except OSError as e:
        a = err(e)
    note(a, "ok ran")
print(json.dumps({"counts": counts, "wrong": wrong, "streak": streak}),
      flush=True)
'''


@pytest.mark.threads
@pytest.mark.kernel_dependent
def test_lazy_umount_under_load(nix, impl):
    """8 workers loop on readlink, stat and exec through the mount; a lazy
    umount: it returns, every worker only ever sees good answers then
    ENOENT, none hangs, and the mount goes away whole (the FUSE daemon
    exits with status 0)."""
    needs_root()
    m = nix.usr_bin
    before = kernel_log() if impl == "kernel" and not IN_USERNS else None
    script = os.path.join(nix.root, "worker.py")
    with open(script, "w") as f:
        f.write(WORKER)
    workers = []
    try:
        for _ in range(8):
            workers.append(Bg([PYTHON, script, m.dir,
                               f"{nix.profile}/python3",
                               file_id(os.path.join(nix.fallback, "sh"))],
                              env=nix.env()))
        for w in workers:
            if not w.wait_line(lambda s: s == "good", HANG):
                raise Failed(abort("a worker had no good answer:\n" +
                                   w.describe()))
        p = call(["umount", "-l", m.dir], env=SBIN)
        assert p.returncode == 0, p.err
        assert not mounted_at(m.dir)
        results = []
        for w in workers:
            if w.wait(4 * HANG) is None:
                raise Failed(abort("a worker hung:\n" + w.describe()))
            results.append(json.loads(w.text().splitlines()[-1]))
    finally:
        for w in workers:
            w.end()
    for r in results:
        assert r["wrong"] == [] and r["counts"]["good"] > 0 and \
            r["streak"] >= 30, results
    m.stop()        # the daemon exited, with status 0
    if before is not None:
        assert not new_problems(before)


# ---- kept answers -----------------------------------------------------------------

KEPT = r'''
import ctypes, errno, json, os, sys

libc = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNS, MS_BIND, MS_REC, MS_PRIVATE = 0x20000, 0x1000, 0x4000, 0x40000


def ask(tag, link):
    for _ in range(3):      # a kept answer would serve the later ones
        try:
            a = "ok " + os.readlink(link)
        except OSError as e:
            a = "err " + errno.errorcode[e.errno]
        try:
            st = os.stat(link)
            s = f"{st.st_dev}:{st.st_ino}"
        except OSError as e:
            s = "err " + errno.errorcode[e.errno]
        print(json.dumps([tag, a, s]), flush=True)


def check(ret):
    if ret != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def new_namespace():
    check(libc.unshare(CLONE_NEWNS))
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None))


def bind(src, dst):
    check(libc.mount(os.fsencode(src), os.fsencode(dst), None, MS_BIND,
                     None))


what, link = sys.argv[1], sys.argv[2]
ask("before", link)
if what == "credentials":
    os.setgroups([])
    os.setegid(65534)
    os.seteuid(65534)
    ask("euid nobody", link)
    os.seteuid(0)
    os.setegid(0)
    ask("euid root", link)
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
    ask("uid nobody", link)
elif what == "mount namespace":
    new_namespace()
    bind(sys.argv[3], sys.argv[4])
    ask("bound", link)
elif what == "root":
    root, mnt = sys.argv[3], sys.argv[4]
    new_namespace()
    bind(os.path.dirname(link), os.path.join(root, mnt.lstrip("/")))
    inside = os.path.join(mnt, os.path.basename(link))
    ask("before", os.path.join(root, inside.lstrip("/")))
    os.chroot(root)
    os.chdir("/")
    ask("chrooted", inside)
'''


def kept(nix, what, link, *args, env):
    script = os.path.join(nix.root, "kept.py")
    with open(script, "w") as f:
        f.write(KEPT)
    os.chmod(script, 0o644)
    p = call([PYTHON, script, what, link] + list(args), env=env)
    assert p.returncode == 0, (p.out, p.err)
    out = {}
    for line in p.out.splitlines():
        tag, link_answer, stat_answer = json.loads(line)
        out.setdefault(tag, set()).add(f"{link_answer} {stat_answer}")
    return out


def answer(path):
    return {f"ok {path} {file_id(path)}"}


@pytest.mark.kernel_dependent
@needs_real_root
def test_kept_answer_follows_the_credentials(nix):
    """A process that changes its ids without an execve (root to nobody and
    back with seteuid, then setresuid for good) is answered for the ids it
    has: the first candidate is executable by root only."""
    needs_root()
    m = nix.usr_bin
    root_only, everyone = nix.dir("root-only"), nix.dir("everyone")
    nix.tool(root_only, mode=0o700)
    nix.tool(everyone)
    got = kept(nix, "credentials", f"{m.dir}/tool",
               env={"PATH": f"{root_only}:{everyone}"})
    mine, theirs = answer(f"{root_only}/tool"), answer(f"{everyone}/tool")
    assert got == {"before": mine, "euid nobody": theirs, "euid root": mine,
                   "uid nobody": theirs}


@pytest.mark.kernel_dependent
def test_kept_answer_follows_the_mount_namespace(nix, probe):
    """unshare -m, then a bind mount over the first PATH directory: the
    process is answered from its new namespace at once; the old namespace
    is not changed."""
    needs_root()
    m = nix.usr_bin
    first, second, other = (nix.dir("first"), nix.dir("second"),
                            nix.dir("other"))
    nix.tool(second)
    nix.tool(other)
    env = {"PATH": f"{first}:{second}"}
    got = kept(nix, "mount namespace", f"{m.dir}/tool", other, first, env=env)
    # (in the new namespace first/tool is other's file)
    assert got == {"before": answer(f"{second}/tool"),
                   "bound": {f"ok {first}/tool {file_id(other + '/tool')}"}}
    assert readlink(probe, f"{m.dir}/tool", env) == f"ok {second}/tool"


@pytest.mark.kernel_dependent
def test_kept_answer_follows_the_root(nix, probe):
    """chroot: PATH's directories are walked from the caller's new root."""
    needs_root()
    m = nix.usr_bin
    bindir = "/varsym-search-chroot-bin"
    assert not os.path.exists(bindir)
    root = nix.dir("chroot")
    inside = nix.dir("chroot" + bindir)
    nix.tool(inside)
    nix.dir("chroot/mnt")
    outside = nix.dir("outside")
    nix.tool(outside)
    env = {"PATH": f"{bindir}:{outside}"}
    got = kept(nix, "root", f"{m.dir}/tool", root, "/mnt", env=env)
    assert got == {"before": answer(f"{outside}/tool"),
                   "chrooted": {f"ok {bindir}/tool "
                                f"{file_id(inside + '/tool')}"}}
    assert readlink(probe, f"{m.dir}/tool", env) == f"ok {outside}/tool"


# SPDX-License-Identifier: GPL-2.0-only
"""mount.varsymfs, the module's mount helper (mount.varsymfs(8)), called as
mount(8) calls it: `mount.varsymfs SPEC DIR [-sfnv] [-N NS] [-o OPTIONS]`.

With --impl=kernel the helper makes real module mounts.  With --impl=fuse
(no module on this machine) a stand-in for `mount -i -t varsymfs` comes
first on the helper's PATH and starts the FUSE program instead, in the
namespace -N names as mount(8) would: everything the helper itself does
(its namespace, `varsym load`, the umount of a failed load) is the same.

-N NS (issue 31, security round 4, finding 7): mount(8) hands the helper
the target mount namespace, as a PID or a path (/proc/PID/fd/N); the
mount, the load of its system scope and the umount after a failed load
must all happen there, never to a mount at the same path outside.  And
(security round 5, item 1) nothing of NS's own may run: its files are
whoever owns NS's, a user's own `unshare -Urm` namespace included.
"""
import os
import re
import shlex
import shutil
import subprocess
import textwrap
import time

import pytest

from conftest import (MOUNT_HELPER, TIMEOUT, Failed, mounted_at,
                      needs_real_root, run, wait_for)

pytestmark = [pytest.mark.spec3, pytest.mark.kernel_dependent]

SYSTEM = "system.varsym_system"
SBIN = "/usr/sbin:/usr/bin:/sbin:/bin"


def without_leak_check(env):
    """make check's ASan stage runs sanitized programs; LeakSanitizer
    refuses to run under ptrace and ends the program, so a traced run
    checks no leaks."""
    opts = filter(None, [env.get("ASAN_OPTIONS"), "detect_leaks=0"])
    return {**env, "ASAN_OPTIONS": ":".join(opts)}


# mount -i -t varsymfs [-fnsv] [-N NS] [-o OPTIONS] SPEC DIR, for the FUSE
# program: started (in NS, through nsenter, as mount(8) -N would) with no
# configuration of its own, so that only the helper's `varsym load` loads
# one; done once its mount shows in that namespace.  The program is the
# only thing it runs in NS (test machinery: the product runs nothing
# there): NS's mounts are read from /proc/PID, so -N is a PID or
# /proc/PID/ns/mnt here.
FAKE_MOUNT = textwrap.dedent("""\
    #!/bin/sh
    ns= opts=
    while [ $# -gt 2 ]; do
        case $1 in
        -N) ns=$2; shift 2 ;;
        -o) opts=$2; shift 2 ;;
        -t) shift 2 ;;
        -*) shift ;;
        *) break ;;
        esac
    done
    spec=$1 dir=$2
    # -N takes a PID or a namespace file, as mount(8)'s
    case $ns in
    '') pid=self ;;
    *[!0-9]*) pid=${ns#/proc/}; pid=${pid%/ns/mnt} ;;
    *) pid=$ns; ns=/proc/$ns/ns/mnt ;;
    esac
    case $pid in
    self) ;;
    ''|*[!0-9]*) echo "fake mount: -N $ns: a PID or /proc/PID/ns/mnt" >&2; exit 32 ;;
    esac
    set -- "$VARSYMFS_PROGRAM" -f ${opts:+-o "$opts"} "$spec" "$dir"
    [ -z "$ns" ] || set -- nsenter --mount="$ns" -- "$@"
    target=$(readlink "${ns:-/proc/self/ns/mnt}")
    before=$(grep -c " $dir " /proc/$pid/mountinfo)
    VARSYM_CONF=/nonexistent "$@" </dev/null >>"$FAKE_MOUNT_LOG" 2>&1 &
    echo $! >>"$FAKE_MOUNT_PIDS"
    tries=0
    # (nsenter enters the namespace, then runs the program as the same pid)
    while [ "$(readlink /proc/$!/ns/mnt)" != "$target" ] ||
          [ "$(grep -c " $dir " /proc/$!/mountinfo 2>/dev/null)" -le "$before" ]; do
        kill -0 $! 2>/dev/null || exit 32
        tries=$((tries + 1))
        [ $tries -lt 1000 ] || exit 32
        sleep 0.01
    done
    """)


def mounts_at(where, pid="self"):
    """How many mounts are stacked at where, in pid's mount namespace."""
    with open(f"/proc/{pid}/mountinfo") as f:
        return sum(line.split()[4] == os.path.realpath(where) for line in f)


class Helper:
    """Runs the helper as mount(8) does, with the stand-in mount for FUSE;
    stops the FUSE programs that stand-in started."""

    def __init__(self, impl, build, scratch):
        self.impl = impl
        self.build = build
        self.env = {"PATH": SBIN, "VARSYM": os.path.join(build, "varsym")}
        self.scratch = scratch
        self.pids = os.path.join(scratch, "fake-mount.pids")
        self.fake_mount = None
        if impl == "fuse":
            bindir = os.path.join(scratch, "fake-bin")
            os.mkdir(bindir)
            self.fake_mount = os.path.join(bindir, "mount")
            with open(self.fake_mount, "w") as f:
                f.write(FAKE_MOUNT)
            os.chmod(self.fake_mount, 0o755)
            self.env.update({
                "PATH": f"{bindir}:{SBIN}",
                "VARSYMFS_PROGRAM": os.path.join(build, "varsymfs"),
                "FAKE_MOUNT_LOG": os.path.join(scratch, "fake-mount.log"),
                "FAKE_MOUNT_PIDS": self.pids,
            })

    def __call__(self, *args, env=None):
        return run([MOUNT_HELPER] + [str(a) for a in args],
                   env={**self.env, **(env or {})})

    def traced(self, *args, env=None):
        """The same under `strace -f` where there is strace: (the finished
        helper, as run() gives it, and the trace's lines, or None)."""
        argv = [MOUNT_HELPER] + [str(a) for a in args]
        strace = shutil.which("strace", path=SBIN)
        if not strace:
            return self(*args, env=env), None
        log = os.path.join(self.scratch, f"strace-{time.monotonic_ns()}.log")
        out = os.path.join(self.scratch, "traced.out")
        err = os.path.join(self.scratch, "traced.err")
        # -D: the tracer is a grandchild, so the helper's own exit ends
        # the call (a FUSE program the stand-in started stays traced until
        # its umount); its output to files, which the tracer does not hold
        with open(out, "w") as o, open(err, "w") as e:
            p = subprocess.Popen(
                [strace, "-D", "-f", "-q", "-o", log, "-e",
                 "trace=execve,setns,clone,clone3,fork,vfork", "--"] + argv,
                env=without_leak_check({**self.env, **(env or {})}),
                stdin=subprocess.DEVNULL, stdout=o, stderr=e)
            p.wait(timeout=TIMEOUT)
        with open(out) as o, open(err) as e:
            p.out, p.err = o.read(), e.read()
        p.cmd = " ".join(argv)
        # the tracer writes the helper's end a moment after it was reaped
        done = re.compile(rf"{p.pid} +\+\+\+ (exited|killed)")

        def lines():
            with open(log) as f:
                return f.read().splitlines()
        wait_for(lambda: any(done.match(line) for line in lines()),
                 f"strace to write the end of {p.pid}")
        return p, lines()

    def programs(self):
        """The FUSE programs the stand-in started (pids)."""
        if not os.path.exists(self.pids):
            return []
        with open(self.pids) as f:
            return [int(p) for p in f.read().split()]


@pytest.fixture
def helper(impl, build, public_dir):
    h = Helper(impl, build, public_dir)
    yield h
    # each stand-in FUSE program ends once its mount is gone (namespace's)
    for pid in h.programs():
        try:
            wait_for(lambda: not os.path.exists(f"/proc/{pid}") or
                     open(f"/proc/{pid}/stat").read().split()[2] == "Z",
                     f"the FUSE program {pid} to exit after its umount")
        except Failed:
            os.kill(pid, 9)
            raise


def in_a_chroot():
    """Whether setns(2) into our own namespace would move us to another
    root: then we run in a chroot."""
    ns_root = run(["nsenter", "--mount=/proc/self/ns/mnt", "--", "stat",
                   "-c", "%d:%i", "/"], env={"PATH": SBIN}).out.strip()
    root = os.stat("/")
    return bool(ns_root) and ns_root != f"{root.st_dev}:{root.st_ino}"


def skip_in_a_chroot():
    """setns(2) moves nsenter (and mount -N) to the namespace's own root:
    from a chroot, where this chroot's helper and directories are not."""
    if in_a_chroot():
        pytest.skip("run in a chroot: -N NS looks paths up in NS's own "
                    "root, not this one")


@pytest.fixture
def namespace(public_dir):
    """A process in a mount namespace of its own (private propagation):
    its pid.  What was mounted in it is unmounted there, then it ends."""
    skip_in_a_chroot()
    p = subprocess.Popen(["/usr/bin/unshare", "--mount", "--propagation",
                          "private", "/bin/sleep", "600"], env={})
    own = os.readlink("/proc/self/ns/mnt")
    wait_for(lambda: os.readlink(f"/proc/{p.pid}/ns/mnt") != own,
             "unshare to enter its namespace")
    p.start_mounts = {}
    yield p
    try:
        for where, count in p.start_mounts.items():
            while mounts_at(where, p.pid) > count:
                run(["nsenter", f"--mount=/proc/{p.pid}/ns/mnt", "--",
                     "umount", where], env={"PATH": SBIN}, check=True)
    finally:
        p.kill()
        p.wait()


def in_namespace(pid, code):
    """Python code run in pid's mount namespace: what it printed."""
    return run(["nsenter", f"--mount=/proc/{pid}/ns/mnt", "--",
                "/usr/bin/python3", "-c", code], env={"PATH": SBIN},
               check=True).out


@pytest.mark.attack
@pytest.mark.parametrize("form", ["path", "pid"])
def test_dash_n_mounts_and_loads_in_that_namespace(varsymfs, helper,
                                                   namespace, public_dir,
                                                   form):
    """mount -N NS: the mount, and the load of its system scope, are the
    namespace's; a mount at the same path outside keeps its own scope."""
    outside = varsymfs("")
    where = outside.dir
    os.setxattr(where, SYSTEM, b"V=/outside")
    namespace.start_mounts[where] = mounts_at(where, namespace.pid)
    conf = os.path.join(public_dir, "varsym.conf")
    with open(conf, "w") as f:
        f.write(f"[{os.path.realpath(where)}]\nV=/inside\n")
    ns = (f"/proc/{namespace.pid}/ns/mnt" if form == "path" else
          str(namespace.pid))
    p = helper("none", where, "-N", ns, env={"VARSYM_CONF": conf})
    assert p.returncode == 0, f"{p.cmd}: {p.returncode}\n{p.err}"
    assert mounts_at(where, namespace.pid) == \
        namespace.start_mounts[where] + 1, "not mounted in the namespace"
    assert os.getxattr(where, SYSTEM) == b"V=/outside\0", \
        "the load changed the mount outside the namespace"
    assert mounts_at(where) == 1
    assert in_namespace(namespace.pid, f"import os; print(os.getxattr("
                        f"{where!r}, {SYSTEM!r}))") == "b'V=/inside\\x00'\n"


@pytest.mark.attack
def test_dash_n_failed_load_unmounts_in_that_namespace(varsymfs, helper,
                                                       namespace, public_dir):
    """A load that fails unmounts the new mount, in the namespace: never
    the mount at the same path outside it."""
    outside = varsymfs("")
    where = outside.dir
    os.setxattr(where, SYSTEM, b"V=/outside")
    namespace.start_mounts[where] = mounts_at(where, namespace.pid)
    # a configuration that cannot be read: a directory
    p = helper("none", where, "-N", f"/proc/{namespace.pid}/ns/mnt",
               env={"VARSYM_CONF": public_dir})
    assert p.returncode == 32, f"{p.cmd}: {p.returncode}\n{p.err}"
    assert f"not mounted: {public_dir} could not be loaded" in p.err, p.err
    assert mounted_at(where), "the mount outside the namespace was unmounted"
    assert os.getxattr(where, SYSTEM) == b"V=/outside\0"
    assert mounts_at(where, namespace.pid) == namespace.start_mounts[where]


# nobody's stand-in for a program, in nobody's own namespace: it leaves a
# mark saying who ran it (the uid and user namespace, and the capabilities,
# of whoever ran it: nobody's own processes are uid 0 of nobody's user
# namespace), and fails.  bash: /bin/sh is one of those it stands in for.
MARK = textwrap.dedent("""\
    #!/usr/bin/bash
    echo "uid=$(id -u) $(readlink /proc/$$/ns/user)" \\
        "$(grep CapEff /proc/$$/status)" >"{marks}/{name}.$$"
    exit 1
    """)


def programs_to_replace(helper):
    """What the helper runs, or ran before security round 5 (through
    nsenter, in NS): name -> the file the name leads to.  `mount` last:
    nobody's own binds run it."""
    which = {name: shutil.which(name, path=SBIN)
             for name in ("umount", "nsenter", "mount")}
    files = {
        "mount.varsymfs": MOUNT_HELPER,
        "sh": "/bin/sh",
        "varsym": helper.env["VARSYM"],
        "umount": which["umount"],
        "nsenter": which["nsenter"],
    }
    if helper.fake_mount:
        files["fake-mount"] = helper.fake_mount
    files["mount"] = which["mount"]
    return {name: os.path.realpath(path) for name, path in files.items()}


@pytest.fixture
def nobodys_namespace(helper, public_dir):
    """make(binds=()): nobody's own `unshare -Urm` namespace, as any user
    may make one: a long-lived sleep in it (its pid), in which nobody has
    bound a script of their own (MARK) over each file of
    programs_to_replace(), and each (SOURCE, TARGET) of binds.  .marks():
    the marks left (name -> text).  .made: mount points to clean up:
    unmounted from here with `umount -N` (nothing of the namespace runs),
    then the sleep is killed."""
    skip_in_a_chroot()
    marks = os.path.join(public_dir, "marks")
    os.mkdir(marks)
    os.chmod(marks, 0o1777)
    scripts = os.path.join(public_dir, "nobodys")
    os.mkdir(scripts)
    os.chmod(scripts, 0o755)
    err = open(os.path.join(public_dir, "nobodys.err"), "w+")
    made = []

    def left():
        return {n: open(os.path.join(marks, n)).read().strip()
                for n in sorted(os.listdir(marks))}

    def make(binds=()):
        # binds first: the scripts' own (`mount` last) stop nobody's mount
        binds = list(binds)
        for name, target in programs_to_replace(helper).items():
            script = os.path.join(scripts, name)
            with open(script, "w") as f:
                f.write(MARK.format(marks=marks, name=name))
            os.chmod(script, 0o755)
            binds.append((script, target))
        setup = ["set -e"] + [f"mount --bind {shlex.quote(source)} "
                              f"{shlex.quote(target)}"
                              for source, target in binds]
        setup.append("exec /usr/bin/sleep 600")
        p = subprocess.Popen(["/usr/bin/setpriv", "--reuid=65534",
                              "--regid=65534", "--clear-groups", "--",
                              "/usr/bin/unshare", "-Urm", "/usr/bin/bash",
                              "-c", "\n".join(setup)],
                             env={"PATH": SBIN}, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=err)
        p.made, p.marks = [], left
        made.append(p)

        def comm():
            with open(f"/proc/{p.pid}/comm") as f:
                return f.read().strip()
        wait_for(lambda: p.poll() is not None or comm() == "sleep",
                 "nobody's namespace to be set up")
        err.seek(0)
        assert p.poll() is None, f"nobody's namespace: {err.read()}"
        assert not left(), "nobody's own setup left marks"
        return p

    yield make
    try:
        for p in made:
            for where in p.made:
                while p.poll() is None and mounts_at(where, p.pid):
                    run(["umount", "-N", str(p.pid), "-n", "-i", where],
                        env={"PATH": SBIN}, check=True)
    finally:
        for p in made:
            p.kill()
            p.wait()
        err.close()


def execs_in_a_namespace(lines, allowed=()):
    """From `strace -f -e trace=execve,setns,clone,...` lines: each program
    run (execve(2), tried or done, but for allowed) by a process after it
    entered a mount namespace (setns(2) with CLONE_NEWNS), or by a process
    forked from one that had: ["PID execve(PATH)"]."""
    entered, parent = {}, {}
    for at, line in enumerate(lines):
        m = re.match(r"(\d+) +(?:<\.\.\. )?(?:clone3?|v?fork)\b.*= (\d+)$",
                     line)
        if m:
            parent[int(m[2])] = (int(m[1]), at)
        m = re.match(r"(\d+) +setns\(.*CLONE_NEWNS", line)
        if m:
            entered.setdefault(int(m[1]), at)

    def since(pid):
        mine = entered.get(pid, len(lines))
        if pid in parent:
            ppid, forked = parent[pid]
            if since(ppid) < forked:
                return -1
        return mine

    found = []
    for at, line in enumerate(lines):
        m = re.match(r'(\d+) +execve\("([^"]*)"', line)
        if m and at > since(int(m[1])) and m[2] not in allowed:
            found.append(f"{m[1]} execve({m[2]})")
    return found


def assert_ran_nothing_there(trace, allowed):
    """No program was run in a namespace entered, by strace's trace (None:
    no strace here; the marks say it then)."""
    if trace is None:
        return
    assert any(re.match(r"\d+ +setns\(.*CLONE_NEWNS", line)
               for line in trace), "nothing entered the namespace"
    found = execs_in_a_namespace(trace, allowed)
    assert not found, f"ran programs after entering a namespace: {found}"


@needs_real_root
@pytest.mark.attack
@pytest.mark.parametrize("form", ["pid", "path"])
def test_dash_n_runs_nothing_of_that_namespace(helper, nobodys_namespace,
                                                public_dir, form):
    """Security round 5, item 1: the helper entered NS (nsenter) and ran
    itself, its shell, mount, varsym and umount from there, as root: NS's
    files, which a user's own namespace lets them bind their own over.
    Root's `mount -N NS -t varsymfs` (and so the helper's -N) must run
    nothing of NS's, yet mount there and load the mount's system scope,
    and after a load that fails unmount there."""
    ns = nobodys_namespace()
    arg = str(ns.pid) if form == "pid" else f"/proc/{ns.pid}/ns/mnt"
    where, failed = (os.path.join(public_dir, d) for d in ("m", "failed"))
    for d in (where, failed):
        os.mkdir(d)
        os.chmod(d, 0o755)
        ns.made.append(d)
    conf = os.path.join(public_dir, "varsym.conf")
    with open(conf, "w") as f:
        f.write(f"[{os.path.realpath(where)}]\nV=/inside\n")
    # the stand-in's FUSE program is test machinery, not the product
    allowed = [helper.env["VARSYMFS_PROGRAM"]] if helper.fake_mount else []

    def helper_in_ns(target, conf):
        """The helper run with -N into nobody's namespace: it must have
        run nothing of that namespace's, as root or at all."""
        p, trace = helper.traced("none", target, "-N", arg,
                                 env={"VARSYM_CONF": conf})
        assert not ns.marks(), \
            f"ran as root from nobody's namespace: {ns.marks()}\n{p.err}"
        assert_ran_nothing_there(trace, allowed)
        return p

    p = helper_in_ns(where, conf)
    assert p.returncode == 0, f"{p.cmd}: {p.returncode}\n{p.err}"
    assert mounts_at(where, ns.pid) == 1, "not mounted in the namespace"
    assert mounts_at(where) == 0, "mounted in root's own namespace"
    assert os.getxattr(f"/proc/{ns.pid}/root{os.path.realpath(where)}",
                       SYSTEM) == b"V=/inside\0", "not loaded"

    # a configuration that cannot be read: the umount is the namespace's
    p = helper_in_ns(failed, public_dir)
    assert p.returncode == 32, f"{p.cmd}: {p.returncode}\n{p.err}"
    assert f"not mounted: {public_dir} could not be loaded" in p.err, p.err
    assert mounts_at(failed, ns.pid) == 0, "left mounted in the namespace"
    assert mounts_at(where, ns.pid) == 1


@needs_real_root
@pytest.mark.attack
def test_load_in_a_users_namespace_leaves_our_mounts_alone(varsymfs, helper,
                                                          nobodys_namespace,
                                                          public_dir):
    """Between the helper's mount and its load, whoever owns NS may unmount
    the new mount and put there a copy of one of root's own mounts, which
    their namespace has: `varsym load --mount-ns` must not replace that
    mount's system scope (a file system also mounted in root's namespace
    is refused; the helper then unmounts in NS)."""
    outside = varsymfs("")
    os.setxattr(outside.dir, SYSTEM, b"V=/outside")
    where = os.path.join(public_dir, "m")
    os.mkdir(where)
    os.chmod(where, 0o755)
    ns = nobodys_namespace(binds=[(outside.dir, where)])
    conf = os.path.join(public_dir, "varsym.conf")
    with open(conf, "w") as f:
        f.write(f"[{os.path.realpath(where)}]\nV=/inside\n")
    for arg in (str(ns.pid), f"/proc/{ns.pid}/ns/mnt"):
        p = run([helper.env["VARSYM"], "load", f"--mount-ns={arg}",
                 "--config", conf, where], env={"PATH": SBIN})
        assert p.returncode == 2, f"{p.cmd}: {p.returncode}\n{p.err}"
        assert p.err == f"varsym: {arg}: {where}: not loaded: its file " \
            "system is mounted outside the namespace too, so it is not a " \
            "mount made there\n", p.err
        assert os.getxattr(outside.dir, SYSTEM) == b"V=/outside\0"
    assert not ns.marks(), ns.marks()


def test_load_mount_ns_names_what_is_wrong(helper, public_dir):
    """varsym load --mount-ns NS: a namespace that cannot be entered, or a
    DIR there that is not a varsymfs mount, is named; the option is
    load's alone.  (The first line said; the errno of the last is the
    file system's.)"""
    varsym = helper.env["VARSYM"]
    conf = os.path.join(public_dir, "varsym.conf")
    open(conf, "w").close()
    load = ["load", "--config", conf]
    rows = [
            (["set", "--mount-ns=1", public_dir, "V=1"],
             "varsym: --mount-ns is an option of load only"),
            (load + ["--mount-ns=", public_dir],
             "varsym: --mount-ns needs a PID or a namespace file"),
            (load + ["--mount-ns=/nonexistent", public_dir],
             "varsym: /nonexistent: cannot open its mount namespace "
             "(/nonexistent): No such file or directory"),
            (load + ["--mount-ns=999999999", public_dir],
             "varsym: 999999999: cannot open its mount namespace "
             "(/proc/999999999/ns/mnt): No such file or directory"),
            (load + [f"--mount-ns={conf}", public_dir],
             f"varsym: {conf}: not a mount namespace")]
    # entering our own namespace from a chroot leaves the chroot: DIR,
    # this chroot's, is not found there (skip_in_a_chroot())
    if not in_a_chroot():
        rows.append((load + ["--mount-ns=/proc/self/ns/mnt", public_dir],
                     f"varsym: /proc/self/ns/mnt: {public_dir}: not a "
                     "varsymfs mount ("))
    for argv, said in rows:
        p = run([varsym] + argv, env={"PATH": SBIN})
        assert p.returncode == 2, f"{p.cmd}: {p.returncode}\n{p.err}"
        first = p.err.splitlines()[0]
        assert first.startswith(said) if said.endswith("(") else \
            first == said, p.err


def test_dash_n_names_no_namespace(helper, public_dir):
    """-N without a namespace, or naming none: nothing is mounted."""
    where = os.path.join(public_dir, "m")
    os.mkdir(where)
    p = helper("none", where, "-N")
    assert p.returncode == 1 and "-N needs a PID or a namespace file" in p.err
    p = helper("none", where, "-N", os.path.join(public_dir, "no-such-ns"))
    assert p.returncode != 0, p.cmd
    assert not mounted_at(where)


def test_help_and_version(build):
    """--help and --version exit 0 on standard output; no arguments is a
    usage error, on standard error."""
    p = run([MOUNT_HELPER, "--help"], env={"PATH": SBIN})
    assert p.returncode == 0 and p.err == ""
    assert p.out.startswith("usage: mount.varsymfs SPEC DIR [-sfnv] "
                            "[-N NS] [-o OPTIONS]\n")
    for opt in ("-o OPTIONS", "-N NS", "-f ", "-n, -s, -v", "--help",
                "--version"):
        assert opt in p.out, opt
    for arg in ("--version", "-V"):
        p = run([MOUNT_HELPER, arg], env={"PATH": SBIN})
        assert p.returncode == 0 and p.err == ""
        assert p.out == f"mount.varsymfs version {project_version()}\n"
    p = run([MOUNT_HELPER], env={"PATH": SBIN})
    assert p.returncode == 1 and p.out == "" and p.err.startswith("usage:")


def project_version():
    with open(os.path.join(os.path.dirname(MOUNT_HELPER), "..",
                           "dkms.conf")) as f:
        return [line.split('"')[1] for line in f
                if line.startswith("PACKAGE_VERSION=")][0]


def test_a_missing_fallback_directory_is_warned_of(helper, public_dir, probe):
    """A search mount whose fallback= names a directory that does not
    exist is made, and the helper says which directory is missing."""
    where = os.path.join(public_dir, "bin")
    os.mkdir(where)
    missing = os.path.join(public_dir, "no-such-dir")
    p = helper("none", where, "-o", f"search,fallback={missing}:/usr/bin")
    try:
        assert p.returncode == 0, f"{p.cmd}: {p.err}"
        assert p.err.endswith(
            f"mount.varsymfs: warning: fallback={missing}: no such directory "
            "(yet): a search finds nothing there\n"), p.err
        assert "/usr/bin:" not in p.err
        assert probe.readlink(os.path.join(where, "sh"), env={}) == \
            "ok /usr/bin/sh"
    finally:
        if mounted_at(where):
            run(["umount", where], env={"PATH": SBIN}, check=True)


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
must all happen there, never to a mount at the same path outside.
"""
import os
import subprocess
import textwrap
import time

import pytest

from conftest import MOUNT_HELPER, Failed, mounted_at, run, wait_for

pytestmark = [pytest.mark.spec3, pytest.mark.kernel_dependent]

SYSTEM = "system.varsym_system"
SBIN = "/usr/sbin:/usr/bin:/sbin:/bin"

# mount -i -t varsymfs [-fnsv] [-N NS] [-o OPTIONS] SPEC DIR, for the FUSE
# program: started (in NS, through nsenter, as mount(8) -N would) with no
# configuration of its own, so that only the helper's `varsym load` loads
# one; done once its mount shows in that namespace.
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
    *[!0-9]*|'') ;;
    *) ns=/proc/$ns/ns/mnt ;;
    esac
    set -- "$VARSYMFS_PROGRAM" -f ${opts:+-o "$opts"} "$spec" "$dir"
    [ -z "$ns" ] || set -- nsenter --mount="$ns" -- "$@"
    target=$(readlink "${ns:-/proc/self/ns/mnt}")
    before=$(${ns:+nsenter --mount="$ns" --} grep -c " $dir " /proc/self/mountinfo)
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
        self.pids = os.path.join(scratch, "fake-mount.pids")
        if impl == "fuse":
            bindir = os.path.join(scratch, "fake-bin")
            os.mkdir(bindir)
            with open(os.path.join(bindir, "mount"), "w") as f:
                f.write(FAKE_MOUNT)
            os.chmod(os.path.join(bindir, "mount"), 0o755)
            self.env.update({
                "PATH": f"{bindir}:{SBIN}",
                "VARSYMFS_PROGRAM": os.path.join(build, "varsymfs"),
                "FAKE_MOUNT_LOG": os.path.join(scratch, "fake-mount.log"),
                "FAKE_MOUNT_PIDS": self.pids,
            })

    def __call__(self, *args, env=None):
        return run([MOUNT_HELPER] + [str(a) for a in args],
                   env={**self.env, **(env or {})})

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


@pytest.fixture
def namespace(public_dir):
    """A process in a mount namespace of its own (private propagation):
    its pid.  What was mounted in it is unmounted there, then it ends."""
    # setns(2) moves nsenter (and mount -N) to the namespace's own root:
    # from a chroot, where this chroot's helper and directories are not
    ns_root = run(["nsenter", "--mount=/proc/self/ns/mnt", "--", "stat",
                   "-c", "%d:%i", "/"], env={"PATH": SBIN}).out.strip()
    root = os.stat("/")
    if ns_root and ns_root != f"{root.st_dev}:{root.st_ino}":
        pytest.skip("run in a chroot: -N NS looks paths up in NS's own "
                    "root, not this one")
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


# SPDX-License-Identifier: GPL-2.0-only
"""docs/SPEC.md section 3: options, their errors, and how they show."""
import ctypes
import os
import signal
import subprocess
import tempfile

import pytest

from conftest import REPO, assert_refused, mounted_at, needs_real_root, run

pytestmark = [pytest.mark.spec3]

SBIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
CLONE_NEWPID = 0x20000000


class Pid:
    """A process of ours that is no child: killed by its pid."""

    def __init__(self, pid):
        self.pid = pid

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def wait(self):
        pass

# (options, the message naming the bad option)
BAD = [
    ("foo=bar", "unknown option 'foo=bar'"),
    ("1abc", "unknown option or invalid variable name '1abc'"),
    ("var=1abc", "invalid variable name in 'var=1abc'"),
    ("UNIVERSE,FOO", "unknown option 'FOO' (the mount's variable is "
     "'UNIVERSE' already)"),
    ("var=A,B", "unknown option 'B' (the mount's variable is 'A' already)"),
    ("A,var=B", "variable given twice: 'A' and 'B'"),
    ("var=A,var=B", "variable given twice: 'A' and 'B'"),
    ("A,prefix=", "empty value in 'prefix='"),
    ("A,default=", "empty value in 'default='"),
    ("A,default", "option 'default' needs a value ('default=...')"),
    ("A,default=x,default=y", "option 'default=' given twice"),
    ("default=/ucb", "option 'default=' needs a variable"),
    ("prefix=/u/", "option 'prefix=' needs a variable"),
    ("A,mode=0700", "option 'mode=' applies only to template mode"),
    ("mode=9", "invalid value in 'mode=9'"),
    ("uid=-1", "invalid value in 'uid=-1'"),
    ("nr_links=0", "'nr_links=0': a mount needs room for one link at least"),
    ("A,nr_links=9", "option 'nr_links=' applies only to template mode"),
    ("var=" + "N" * 256, "variable name '" + "N" * 32 + "...' is longer than 255 bytes"),
]


@pytest.mark.parametrize("options,message", BAD, ids=[b[0][:40] for b in BAD])
def test_bad_options_fail_with_message(varsymfs, impl, build, probe,
                                       public_dir, options, message):
    assert_refused(varsymfs, impl, probe, public_dir, options, message)


def test_failed_mount_leaves_nothing_mounted(varsymfs, public_dir):
    before = open("/proc/self/mountinfo").read()
    varsymfs("1abc", expect_failure=True)
    assert open("/proc/self/mountinfo").read() == before


def test_fuse_exit_status_and_stderr(impl, build, public_dir):
    if impl != "fuse":
        pytest.skip("the FUSE program's own command line")
    exe = os.path.join(build, "varsymfs")
    p = run([exe, "-o", "foo=bar", "none", public_dir])
    assert p.returncode == 1
    assert p.err == "varsymfs: unknown option 'foo=bar'\n"
    p = run([exe, "-o", "UNIVERSE", "none", os.path.join(public_dir, "missing")])
    assert p.returncode == 1
    assert "missing" in p.err
    assert not mounted_at(os.path.join(public_dir, "missing"))
    p = run([exe, "-o", "UNIVERSE"])
    assert p.returncode == 1 and "no mount point" in p.err
    p = run([exe, "--help"])
    assert p.returncode == 0 and "default=VALUE" in p.out
    p = run([exe, "--version"])
    assert p.returncode == 0 and "varsymfs version" in p.out


@pytest.mark.attack
@needs_real_root
def test_a_descriptor_mounted_in_another_pid_namespace_is_refused(
        impl, build, public_dir, request):
    """libfuse serves a MOUNTPOINT of /dev/fd/N: a /dev/fuse descriptor
    that another process mounted.  The kernel then names each caller by
    its tid in that process's pid namespace, and the daemon read that tid
    in its own /proc.  The attack: a connection mounted from a child pid
    namespace; a caller there with VSB=/mine and the local pid of a host
    process with VSB=/evil.  Before, the caller got /evil.  The daemon
    refuses such a descriptor, names it, and the mount is never served."""
    if impl != "fuse":
        pytest.skip("the FUSE program's own command line")
    procs, fds = [], [os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)]
    fd = fds[0]

    def clean():
        subprocess.run(["umount", "-l", public_dir], capture_output=True)
        for p in procs:
            p.kill()
            p.wait()
        for f in fds:
            os.close(f)
    request.addfinalizer(clean)

    # bash's children are in a new pid namespace: the first (sleep) its
    # init, the second the mount; none keeps a descriptor of the connection
    libc = ctypes.CDLL(None, use_errno=True)
    holder = subprocess.Popen(
        ["bash", "-c",
         f"(exec sleep 600 {fd}>&-) & init=$!; trap 'kill -9 $init' EXIT; "
         f"mount -i -t fuse -o fd={fd},rootmode=40000,user_id=0,group_id=0,"
         f"allow_other varsymfs {public_dir} || exit 1; exec {fd}>&-; "
         "echo $init; wait"],
        preexec_fn=lambda: libc.unshare(CLONE_NEWPID), pass_fds=[fd],
        stdout=subprocess.PIPE, env={"PATH": "/usr/bin:/bin"})
    procs.append(holder)
    ns_init = int(holder.stdout.readline() or 0)
    assert ns_init, "the mount from a child pid namespace failed"
    # its end ends every process of the namespace: before bash's
    procs.insert(0, Pid(ns_init))
    evil = subprocess.Popen(["sleep", "600"],
                            env={"PATH": "/usr/bin:/bin", "VSB": "/evil"})
    procs.append(evil)
    daemon = subprocess.Popen(
        [os.path.join(build, "varsymfs"), "-f", "-o", "VSB,default=/dflt",
         f"/dev/fd/{fd}"], pass_fds=[fd], stderr=subprocess.PIPE, env={})
    procs.append(daemon)
    try:
        status = daemon.wait(timeout=2)
    except subprocess.TimeoutExpired:
        status = None       # serving it
    # no daemon then: the connection goes with its last descriptor
    os.close(fds.pop())
    # in the child namespace, the next process takes the host's evil pid
    caller = run(["nsenter", "-t", ns_init, "-p", "--", "unshare", "-m",
                  "sh", "-c",
                  "mount -t proc proc /proc && "
                  f"echo {evil.pid - 1} > /proc/sys/kernel/ns_last_pid && "
                  f"env VSB=/mine sh -c 'echo $$; exec readlink {public_dir}/resolve'"
                  "; true"], env={"PATH": "/usr/bin:/bin"})
    lines = caller.out.split()
    assert lines and lines[0] == str(evil.pid), (caller.out, caller.err)
    assert "/evil" not in caller.out, caller.out
    assert status == 1, caller.out
    err = daemon.stderr.read().decode()
    assert err.startswith(f"varsymfs: /dev/fd/{fd}: a /dev/fuse descriptor "
                          "mounted by another process is not served"), err


def test_help_lists_every_option_and_version_comes_first(impl, build):
    """issue 33, item 11: `varsymfs --help` lists every option the program
    takes, its own and the shared parser's (core/options.c), and
    `varsymfs --version` prints its own version first, even through a
    pipe, where libfuse's fusermount3 writes beside it."""
    if impl != "fuse":
        pytest.skip("the FUSE program's own command line")
    exe = os.path.join(build, "varsymfs")
    p = run([exe, "--help"])
    assert p.returncode == 0, p.err
    words = p.out.replace(",", " ").split()
    for word in ("var=NAME", "default=VALUE", "prefix=PATH", "uid=N",
                 "gid=N", "mode=M", "nr_links=N", "search[=VAR]",
                 "--multithread", "-h", "--help", "-V", "--version", "-f",
                 "-d", "-s", "-o"):
        assert word in words, (word, p.out)
    with open(os.path.join(REPO, "core", "options.c")) as f:
        valued = f.read().split("valued[] = {")[1].split("};")[0]
    for key in valued.replace('"', " ").replace(",", " ").split():
        assert any(w.startswith(key + "=") for w in words), (key, p.out)
    with open(os.path.join(REPO, "dkms.conf")) as f:
        version = f.read().split('PACKAGE_VERSION="')[1].split('"')[0]
    p = run([exe, "--version"])
    assert p.returncode == 0, p.err
    assert p.out.splitlines()[0] == f"varsymfs version {version}", p.out


@pytest.mark.parametrize("options,shown", [
    ("UNIVERSE", "var=UNIVERSE"),
    ("rw,var=UNIVERSE,default=/ucb", "var=UNIVERSE,default=/ucb"),
    ("UNIVERSE,prefix=/universes/,default=ucb",
     "var=UNIVERSE,prefix=/universes/,default=ucb"),
    ("mode=1777,nr_links=100", "mode=1777,nr_links=100"),
])
def test_options_show_in_mountinfo(varsymfs, impl, options, shown):
    m = varsymfs(options)
    fields = mounted_at(m.dir).split()
    sep = fields.index("-")
    fstype, source, superopts = fields[sep + 1:sep + 4]
    if impl == "fuse":
        assert fstype == "fuse.varsymfs"
        assert source == shown
    else:
        assert fstype == "varsymfs"
        assert superopts.split(",")[1:] == shown.split(",")


@pytest.fixture
def helper_on_path(build):
    """mount(8) runs mount.fuse3 with an empty environment, so the program
    must be on the default PATH: link it into /usr/local/sbin for the test."""
    link = "/usr/local/sbin/varsymfs"
    if os.path.lexists(link):
        pytest.skip(f"{link} exists (an installed varsymfs): not replacing it")
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(os.path.join(build, "varsymfs"), link)
    yield
    os.unlink(link)


def test_mount_t_fuse_varsymfs_and_fstab(impl, probe, public_dir, request):
    """mount -t fuse.varsymfs goes through mount.fuse3, as fstab lines do."""
    if impl != "fuse":
        pytest.skip("mount.fuse3 starts the FUSE program")
    request.getfixturevalue("helper_on_path")
    env = {"PATH": SBIN_PATH}
    where = tempfile.mkdtemp(dir=public_dir)
    os.chmod(where, 0o755)
    fstab = os.path.join(public_dir, "fstab")
    with open(fstab, "w") as f:
        f.write(f"none {where} fuse.varsymfs UNIVERSE,default=/ucb 0 0\n")
    for argv in (["mount", "-t", "fuse.varsymfs", "-o", "UNIVERSE,default=/ucb",
                  "none", where],
                 ["mount", "-T", fstab, where]):
        try:
            run(argv, env=env, check=True)
            link = os.path.join(where, "resolve")
            assert probe.readlink(link, env={"UNIVERSE": "/att"}) == "ok /att"
            assert probe.readlink(link, env={}) == "ok /ucb"
            assert probe.readlink(link, env={"UNIVERSE": "/n"},
                                  user="nobody") == "ok /n"
        finally:
            run(["umount", where], env=env)
        assert not mounted_at(where)


def test_fstab_words_given_to_the_program(impl, build, probe, public_dir):
    """Words mount(8) keeps to itself (an fstab line's defaults, nofail,
    x-systemd.*, relatime...) are accepted and ignored by the program too."""
    if impl != "fuse":
        pytest.skip("the FUSE program's own command line")
    where = tempfile.mkdtemp(dir=public_dir)
    words = "defaults,nofail,noauto,_netdev,x-systemd.automount,relatime"
    run([os.path.join(build, "varsymfs"), "-o", f"UNIVERSE,{words}", "none",
         where], env={"PATH": SBIN_PATH}, check=True)
    try:
        assert probe.readlink(os.path.join(where, "resolve"),
                              env={"UNIVERSE": "/att"}) == "ok /att"
    finally:
        run(["umount", where], env={"PATH": SBIN_PATH})
    assert not mounted_at(where)


# SPDX-License-Identifier: GPL-2.0-only
"""varsymfs.ko mounted without privilege, in a user namespace of one's own
(docs/SPEC.md section 3, docs/SECURITY.md): run as real root in a guest,
each test makes the unprivileged user nobody the root of a namespace
(tests/conformance/in-userns) and acts there.

  mount      nobody mounts both modes in its own namespace; ids that do not
             map into it are refused with a message
  loader     a setuid-root program of the host, whose loader path crosses
             a variant link nobody mounted in its namespace: whatever
             loader runs, it runs without privilege over the machine
  memory     what nobody makes the module allocate is charged to its memory
             cgroup: links until refused (ENOSPC at nr_links=, or the
             cgroup's limit), the machine healthy, the charge back at umount
  hostile    bad options as nobody; a thousand mounts and umounts in a loop

The suite as a whole runs again in such a namespace too (scripts/check):
this file tests what only a namespace's root can do to everyone else.
"""
import errno
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from attack import SYSTEM_LOADER, gcc_program
from conftest import IN_USERNS, Failed, run

pytestmark = [pytest.mark.spec3, pytest.mark.kernel_dependent, pytest.mark.attack]

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
IN_USERNS_SH = os.path.join(REPO, "tests", "conformance", "in-userns")
SBIN = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
CGROUP = "/sys/fs/cgroup"


@pytest.fixture(autouse=True)
def kernel_as_root(impl):
    if impl != "kernel":
        pytest.skip("varsymfs.ko in a user namespace (--impl=kernel)")
    if os.getuid() != 0 or IN_USERNS:
        pytest.skip("needs real root, to make nobody a namespace's root")


def as_nobody(script, env=None, timeout=300, cgroup=None):
    """Runs a shell script as nobody, root of its own user and mount
    namespaces, in an environment of exactly env; in cgroup, if given (root
    moves it there first: nobody may not)."""
    argv = [IN_USERNS_SH, "/bin/sh", "-c", script]
    if cgroup:
        argv = ["/bin/sh", "-c", f'echo $$ > {cgroup}/cgroup.procs && exec "$@"',
                "sh"] + argv
    env = dict(env or {}, PATH="/usr/sbin:/usr/bin:/sbin:/bin")
    p = subprocess.run(argv, env=env, capture_output=True, text=True,
                       timeout=timeout)
    p.cmd = " ".join(argv)
    return p


def public_tmp():
    d = tempfile.mkdtemp(prefix="userns-")
    os.chmod(d, 0o755)
    return d


@pytest.fixture
def where():
    """A directory of nobody's, readable by all."""
    d = public_tmp()
    os.chown(d, 65534, 65534)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def test_nobody_mounts_both_modes(where):
    p = as_nobody(f"""set -e
        mkdir {where}/seed {where}/tm
        mount -t varsymfs -o UNIVERSE,default=/ucb none {where}/seed
        mount -t varsymfs none {where}/tm
        ln -s '/opt/${{V:-d}}' {where}/tm/l
        readlink {where}/seed/resolve
        env UNIVERSE=/att readlink {where}/seed/resolve
        env V=x readlink {where}/tm/l
        stat -c '%U %a' {where}/tm {where}/tm/l
        grep -c ' varsymfs ' /proc/self/mountinfo
    """, env={})
    assert p.returncode == 0, (p.cmd, p.stderr)
    assert p.stdout.split("\n")[:5] == ["/ucb", "/att", "/opt/x", "root 755",
                                        "root 777"], p.stdout
    # nothing of it outside the namespace
    assert " varsymfs " not in open("/proc/self/mountinfo").read()


@pytest.mark.parametrize("option,message", [
    ("uid=1000", "uid=1000 has no mapping in the mounter's user namespace"),
    ("gid=100", "gid=100 has no mapping in the mounter's user namespace"),
])
def test_ids_that_do_not_map_are_refused(build, where, option, message):
    """uid= and gid= are read in the mounter's namespace, where only 0 (the
    user itself) maps; anything else is refused, and nothing mounted."""
    probe = os.path.join(build, "vsprobe")
    p = as_nobody(f"""mkdir {where}/m
        mount -t varsymfs -o {option} none {where}/m; echo "mount: $?"
        {probe} fsmount varsymfs {where}/m {option}
        mount -t varsymfs -o uid=0,gid=0 none {where}/m && echo mapped
        grep -c ' varsymfs ' /proc/self/mountinfo
    """)
    out = p.stdout
    assert "mount: 0" not in out and "err EINVAL" in out, (p.cmd, out, p.stderr)
    assert f"e varsymfs: {message}" in out, out
    assert out.split("\n")[-3:-1] == ["mapped", "1"], out


def loader_world(build, where):
    """A setuid-root program of the host whose loader is WHERE/ld/resolve/
    ld.so, and two universes of loaders: good (the real one) and evil (one
    that says whether it may read /etc/shadow)."""
    ld = os.path.join(where, "ld")
    os.mkdir(ld)
    os.chmod(ld, 0o755)
    for name, src in (("good", os.path.realpath(SYSTEM_LOADER)),
                      ("evil", os.path.join(build, "fake-loader-shadow"))):
        os.makedirs(os.path.join(where, name), mode=0o755)
        shutil.copy(src, os.path.join(where, name, "ld.so"))
        os.chmod(os.path.join(where, name, "ld.so"), 0o755)
    src = os.path.join(where, "prog.c")
    with open(src, "w") as f:
        f.write('#include <fcntl.h>\n#include <stdio.h>\n#include <unistd.h>\n'
                'int main(void) { printf("PROGRAM euid=%d shadow=%s\\n", '
                '(int)geteuid(), open("/etc/shadow", O_RDONLY) >= 0 ? '
                '"yes" : "no"); return 0; }\n')
    exe = os.path.join(where, "prog")
    run(["gcc", "-o", exe, src, f"-Wl,--dynamic-linker={ld}/resolve/ld.so"],
        env=SBIN, check=True)
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    return ld, exe


def test_setuid_loader_gives_no_privilege(build, where):
    """Nothing new to trust: nobody mounts a variant link over the loader
    path of a setuid-root program of the host, in its own namespace, with
    options of its choosing (its default included) and its own variable.
    The kernel gives no privilege to set-id bits whose owner does not map
    into the namespace, so whatever runs, loader or program, runs without
    privilege over the machine.  Outside a namespace nobody cannot mount
    there at all."""
    ld, exe = loader_world(build, where)
    # root can read the shadow file: the check itself works
    p = run([os.path.join(where, "evil", "ld.so")], env={})
    assert p.out == "FAKE-LOADER euid=0 shadow=yes\n", p.out
    p = run(["mount", "-t", "varsymfs", "-o", "LOADER", "none", ld],
            env=SBIN, user="nobody")
    assert p.returncode != 0, "nobody mounted outside a namespace"
    evil = os.path.join(where, "evil")
    for options in (f"LOADER,default={evil}", f"LOADER,default={where}/good"):
        p = as_nobody(f"""set -e
            mount -t varsymfs -o {options} none {ld}
            for i in 1 2 3; do {exe} || true; done
            env LOADER={evil} {exe} || true
        """, env={"LOADER": evil})
        lines = p.stdout.splitlines()
        assert p.returncode == 0 and len(lines) == 4, (p.cmd, p.stdout,
                                                       p.stderr)
        for line in lines:
            assert line.endswith("shadow=no"), (options, lines)


# ---- memory -----------------------------------------------------------------

@pytest.fixture
def memcg():
    """A memory cgroup (cgroup v2) to put nobody in; mounted if need be."""
    mounted = False
    if not os.path.exists(os.path.join(CGROUP, "cgroup.controllers")):
        if run(["mount", "-t", "cgroup2", "none", CGROUP], env=SBIN).returncode:
            pytest.skip("no cgroup v2 here")
        mounted = True
    with open(os.path.join(CGROUP, "cgroup.controllers")) as f:
        if "memory" not in f.read().split():
            pytest.skip("no memory controller")
    with open(os.path.join(CGROUP, "cgroup.subtree_control"), "w") as f:
        f.write("+memory")
    group = tempfile.mkdtemp(prefix="varsymfs-", dir=CGROUP)
    yield group
    os.rmdir(group)
    if mounted:
        run(["umount", CGROUP], env=SBIN)


def cg_read(group, name):
    with open(os.path.join(group, name)) as f:
        return f.read()


def cg_write(group, name, value):
    with open(os.path.join(group, name), "w") as f:
        f.write(value)


def fill(where, group, options, limit):
    """nobody, in group, mounts template mode with options and makes links
    with 2 KiB templates until one is refused (at most limit).  Returns the
    count, the errno's name, and the cgroup's charge before and while the
    links exist (nobody may not read it itself); then its namespace goes,
    and the mount with it."""
    script = f"""mkdir -p {where}/tm
        mount -t varsymfs -o {options} none {where}/tm || exit 3
        exec python3 -c '
import errno, os, sys
print("mounted", flush=True)
sys.stdin.readline()
t = "/" + "x" * 2048 + "/${{V:-d}}"
n, err = 0, "none"
try:
    while n < {limit}:
        os.symlink(t + str(n), "{where}/tm/l%d" % n)
        n += 1
except OSError as e:
    err = errno.errorcode[e.errno]
print(n, err, flush=True)
sys.stdin.readline()
'
    """
    argv = ["/bin/sh", "-c", f'echo $$ > {group}/cgroup.procs && exec "$@"',
            "sh", IN_USERNS_SH, "/bin/sh", "-c", script]
    p = subprocess.Popen(argv, env={"PATH": SBIN["PATH"]}, text=True,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    try:
        if p.stdout.readline().strip() != "mounted":
            raise Failed(f"nobody did not mount: {p.stderr.read()}")
        before = int(cg_read(group, "memory.current"))
        p.stdin.write("go\n")
        p.stdin.flush()
        result = p.stdout.readline().split()
        during = int(cg_read(group, "memory.current"))
        p.stdin.close()
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return (int(result[0]), result[1]) if result else None, before, during


def settled(group, below, timeout=30):
    """memory.current once under below (freeing after an umount waits for
    RCU grace periods), or as it is at the timeout."""
    deadline = time.monotonic() + timeout
    while True:
        now = int(cg_read(group, "memory.current"))
        if now < below or time.monotonic() > deadline:
            return now
        time.sleep(0.2)


def test_links_are_charged_to_the_cgroup_and_come_back(where, memcg):
    """nr_links= is reached first: ENOSPC; the links' memory was charged to
    nobody's cgroup, and comes back when its namespace (and mount) goes."""
    baseline = int(cg_read(memcg, "memory.current"))
    result, before, during = fill(where, memcg, "nr_links=2000", 5000)
    assert result == (2000, "ENOSPC"), result
    grown = during - before
    # each link holds a 2 KiB template, and an inode and a dentry
    assert grown >= 2000 * 2048, f"only {grown} bytes charged for 2000 links"
    # the namespace is gone with its last process, the mount with it
    after = settled(memcg, baseline + grown // 4)
    print(f"\nmemory: {grown} bytes charged for 2000 links "
          f"({grown // 2000} a link); {after - baseline} bytes left after "
          f"the namespace went")
    assert after - baseline < grown // 4, (baseline, during, after)


def test_the_cgroup_limit_stops_a_user(where, memcg):
    """No nr_links= to stop it, a memory.max of 64 MiB does: nobody gets
    ENOMEM, or the cgroup's OOM killer ends it; the machine stays healthy
    (a mount still works), and the charge comes back."""
    cg_write(memcg, "memory.max", str(64 << 20))
    if os.path.exists(os.path.join(memcg, "memory.swap.max")):
        cg_write(memcg, "memory.swap.max", "0")
    baseline = int(cg_read(memcg, "memory.current"))
    result, before, during = fill(where, memcg, "nr_links=2000000", 2000000)
    events = cg_read(memcg, "memory.events")
    oom_kills = int(dict(line.split() for line in events.splitlines())
                    .get("oom_kill", 0))
    print(f"\nmemory.max 64 MiB: {result or 'killed'}, "
          f"{(during - before) >> 20} MiB charged, oom_kill {oom_kills}")
    if result:
        assert result[1] in ("ENOMEM", "ENOSPC") and result[0] < 2000000, \
            result
    else:
        assert oom_kills > 0, events
    assert settled(memcg, baseline + (4 << 20)) - baseline < 4 << 20
    p = as_nobody(f"mkdir {where}/after && "
                  f"mount -t varsymfs -o U none {where}/after && echo ok")
    assert p.stdout.strip() == "ok", (p.stdout, p.stderr)


# ---- hostile input -------------------------------------------------------------

def test_bad_options_as_nobody(build, where):
    probe = os.path.join(build, "vsprobe")
    bad = ["foo=bar", "1abc", "var=A,var=B", "A,prefix=", "mode=9",
           "nr_links=0", "uid=4294967295", "nr_links=99999999999",
           "var=" + "N" * 300, "\x01", "A,mode=1777", "A,default=x,default=y"]
    script = f"mkdir {where}/m\n"
    for options in bad:
        script += (f"mount -t varsymfs -o '{options}' none {where}/m "
                   f"2>/dev/null && echo 'mounted {options}'\n")
    script += f"{probe} fsmount varsymfs {where}/m 1abc\n"
    script += "grep -c ' varsymfs ' /proc/self/mountinfo || true\n"
    p = as_nobody(script)
    assert "mounted" not in p.stdout, p.stdout
    assert "err EINVAL" in p.stdout and p.stdout.split()[-1] == "0", p.stdout


# One process makes the system calls (mount(8) and umount(8) would cost a
# fork and exec each, four minutes a guest under TCG).
THOUSAND_MOUNTS = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
m = sys.argv[1].encode()
def check(r):
    if r:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
for i in range(500):
    check(libc.mount(b"none", m, b"varsymfs", 0, b"U,default=/d"))
    assert os.readlink(m + b"/resolve") == b"/d"
    check(libc.umount2(m, 0))
    check(libc.mount(b"none", m, b"varsymfs", 0, b"nr_links=2"))
    os.symlink("/${U:-x}", m + b"/l")
    check(libc.umount2(m, 0))
print("done", i + 1)
"""


def test_a_thousand_mounts_as_nobody(where):
    """Mount, use and unmount, a thousand times in a loop, both modes."""
    p = as_nobody(f"""set -e
        mkdir {where}/m
        exec {sys.executable} -c '{THOUSAND_MOUNTS}' {where}/m
    """, timeout=1200)
    assert p.returncode == 0 and p.stdout.strip() == "done 500", (
        p.cmd, p.stdout[-300:], p.stderr[-300:])


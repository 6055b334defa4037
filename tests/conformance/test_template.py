# SPDX-License-Identifier: GPL-2.0-only
"""docs/SPEC.md section 2: template mode, a flat directory of variant links."""
import ctypes
import errno
import os
import shutil
import stat
import struct
import subprocess
import threading
import time

import pytest

from conftest import IN_USERNS, run

pytestmark = [pytest.mark.spec2]

XATTR = "system.varsym_template"


def link(m, name, template):
    path = os.path.join(m.dir, name)
    os.symlink(template, path)
    return path


@pytest.fixture
def tm(varsymfs):
    """A template-mode mount, as root, default options."""
    return varsymfs("")


def test_root_directory(tm):
    st = os.stat(tm.dir)
    assert stat.S_IMODE(st.st_mode) == 0o755
    assert (st.st_uid, st.st_gid) == (0, 0)
    assert os.listdir(tm.dir) == []


def test_the_perl_example(tm, probe):
    perl = link(tm, "perl-lib", "/opt/perl/${PERL_VERSION:-5.22.1}/lib")
    bin_ = link(tm, "bin", "/opt/${UNIVERSE:-ucb}/bin")
    assert probe.readlink(perl, env={"PERL_VERSION": "5.24.0"}) == \
        "ok /opt/perl/5.24.0/lib"
    assert probe.readlink(perl, env={}) == "ok /opt/perl/5.22.1/lib"
    assert probe.readlink(perl, env={"PERL_VERSION": ""}) == \
        "ok /opt/perl/5.22.1/lib"
    assert probe.readlink(bin_, env={"UNIVERSE": "att"}) == "ok /opt/att/bin"
    assert sorted(os.listdir(tm.dir)) == ["bin", "perl-lib"]


# (template, environment, expected readlink)
EXPANSIONS = [
    ("${A}", {"A": "/x"}, "ok /x"),
    ("${A}", {}, "err ENOENT"),
    ("${A}", {"A": ""}, "err ENOENT"),
    ("/${A}/${B}/${A}", {"A": "a", "B": "b"}, "ok /a/b/a"),
    ("/${A}/${B}", {"A": "a"}, "err ENOENT"),
    ("${A:-${B:-/c}}", {"B": "/b"}, "ok /b"),
    ("${A:-${B:-/c}}", {}, "ok /c"),
    ("${A:-${B}}", {"A": "/a"}, "ok /a"),
    ("/cost/$$5", {}, "ok /cost/$5"),
    ("/$$${A}", {"A": "x"}, "ok /$x"),
    ("/a$", {}, "ok /a$"),
    ("/a$b", {"b": "no"}, "ok /a$b"),
    ("/a}b", {}, "ok /a}b"),
    ("${A:-}", {}, "err ENOENT"),
    ("/x${A:-}", {}, "ok /x"),
    ("${A}", {"A": "${B}", "B": "no"}, "ok ${B}"),
    ("${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H}}}}}}}}", {"H": "/eight"},
     "ok /eight"),
    ("${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H:-/d}}}}}}}}", {}, "ok /d"),
]


@pytest.mark.parametrize("template,env,expected", EXPANSIONS,
                         ids=[t for t, _, _ in EXPANSIONS])
def test_expansion(tm, probe, template, env, expected):
    path = link(tm, "l", template)
    assert probe.readlink(path, env=env) == expected


MALFORMED = [
    "${A", "${", "${}", "${1A}", "${A-x}", "${A:x}", "${A:-x", "${A.B}",
    "${A:-${B}", "x${ A}", "${" + "N" * 256 + "}",
    "${A:-${B:-${C:-${D:-${E:-${F:-${G:-${H:-${I}}}}}}}}}",
]


@pytest.mark.parametrize("template", MALFORMED, ids=[t[:24] for t in MALFORMED])
def test_malformed_template_is_refused(tm, template):
    with pytest.raises(OSError) as e:
        os.symlink(template, os.path.join(tm.dir, "bad"))
    assert e.value.errno == 22  # EINVAL
    assert os.listdir(tm.dir) == []


def test_lengths(tm, probe):
    long_literal = "/" + "x" * 4094
    assert len(long_literal) == 4095
    path = link(tm, "long", long_literal)
    assert probe.readlink(path, env={}) == "ok " + long_literal
    os.unlink(path)
    path = link(tm, "twice", "${A}${A}/")
    half = "/" + "a" * 2046
    assert len(half * 2 + "/") == 4095
    assert probe.readlink(path, env={"A": half}) == "ok " + half * 2 + "/"
    assert probe.readlink(path, env={"A": half + "a"}) == "err ENAMETOOLONG"
    name = "N" * 255
    path = link(tm, "longname", "${" + name + ":-/d}")
    assert probe.readlink(path, env={name: "/v"}) == "ok /v"


def test_only_links(tm):
    target = os.path.join(tm.dir, "x")
    link(tm, "l", "/t")
    for action in (lambda: os.mkdir(target),
                   lambda: os.mknod(target, 0o600 | stat.S_IFIFO),
                   lambda: open(target, "w"),
                   lambda: os.link(os.path.join(tm.dir, "l"), target)):
        with pytest.raises(PermissionError):
            action()
    assert os.listdir(tm.dir) == ["l"]


def test_unlink_and_rename(tm, probe):
    a = link(tm, "a", "/a-${V:-d}")
    b = link(tm, "b", "/b-${V:-d}")
    os.rename(a, os.path.join(tm.dir, "c"))
    assert sorted(os.listdir(tm.dir)) == ["b", "c"]
    assert probe.readlink(os.path.join(tm.dir, "c"), env={}) == "ok /a-d"
    os.rename(os.path.join(tm.dir, "c"), b)       # over an existing link
    assert os.listdir(tm.dir) == ["b"]
    assert probe.readlink(b, env={"V": "v"}) == "ok /a-v"
    os.unlink(b)
    assert os.listdir(tm.dir) == []
    assert probe.readlink(b, env={}) == "err ENOENT"
    with pytest.raises(FileNotFoundError):
        os.unlink(b)


def test_symlink_over_existing_is_eexist(tm):
    link(tm, "a", "/a")
    with pytest.raises(FileExistsError):
        link(tm, "a", "/b")


def test_raw_template_readable_by_anyone(tm, build):
    template = "/opt/$${A:-x}/${B:-${C:-/c}}"
    path = link(tm, "raw", template)
    assert os.getxattr(path, XATTR, follow_symlinks=False) == template.encode()
    p = run(["/usr/bin/python3", "-c",
             f"import os; print(os.getxattr({path!r}, {XATTR!r}, "
             "follow_symlinks=False).decode())"], user="nobody", check=True)
    assert p.out == template + "\n"
    assert XATTR in os.listxattr(path, follow_symlinks=False)
    with pytest.raises(OSError) as e:
        os.setxattr(path, XATTR, b"/other", follow_symlinks=False)
    assert e.value.errno == 95  # EOPNOTSUPP
    assert os.getxattr(path, XATTR, follow_symlinks=False) == template.encode()


def test_seed_link_shows_its_options(varsymfs):
    m = varsymfs("UNIVERSE,default=/ucb")
    value = os.getxattr(m.link, "system.varsym_options", follow_symlinks=False)
    assert value == b"var=UNIVERSE,default=/ucb"


@pytest.mark.threads
def test_two_processes_at_once(tm, probe):
    path = link(tm, "bin", "/opt/${UNIVERSE:-ucb}/bin")
    procs = {
        f"/opt/{u}/bin": subprocess.Popen(
            [probe.path, "loop", "2000", path, f"/opt/{u}/bin"],
            env={"UNIVERSE": u}, stdout=subprocess.PIPE)
        for u in ("att", "ucb", "plan9")
    }
    for expect, p in procs.items():
        out = p.communicate(timeout=120)[0].decode()
        assert p.returncode == 0 and out.startswith("ok 0 wrong"), (expect, out)


def test_owner_and_mode_options(varsymfs, probe, public_dir):
    """uid=, gid=, mode= as for tmpfs: who may change the directory."""
    create = ["/usr/bin/ln", "-s", "/t/${V}"]
    shared = varsymfs("mode=1777")
    assert stat.S_IMODE(os.stat(shared.dir).st_mode) == 0o1777
    run(create + [os.path.join(shared.dir, "mine")], user="nobody", check=True)
    st = os.lstat(os.path.join(shared.dir, "mine"))
    assert (st.st_uid, st.st_gid) == (65534, 65534)
    root_owned = link(shared, "roots", "/r")
    p = run(["/usr/bin/rm", "-f", root_owned], user="nobody")
    assert p.returncode != 0 and os.path.lexists(root_owned)  # sticky bit

    private = varsymfs("")
    p = run(create + [os.path.join(private.dir, "x")], user="nobody")
    assert p.returncode != 0 and "Permission denied" in p.err

    owned = varsymfs("uid=65534,gid=65534,mode=0700")
    st = os.stat(owned.dir)
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == \
        (65534, 65534, 0o700)
    run(create + [os.path.join(owned.dir, "x")], user="nobody", check=True)


@pytest.mark.kernel_dependent
def test_setuid_gets_defaults(tm, probe, public_dir):
    if os.getuid() != 0:
        pytest.skip("needs root")
    suid = os.path.join(public_dir, "vsprobe-suid")
    shutil.copy(probe.path, suid)
    os.chmod(suid, 0o4755)
    with_default = link(tm, "d", "/opt/${A:-dflt}/x")
    without = link(tm, "n", "/opt/${A}/x")
    env = {"A": "evil"}
    assert probe.readlink(with_default, env=env, user="nobody") == "ok /opt/evil/x"
    assert probe.readlink(with_default, env=env, user="nobody",
                          probe=suid) == "ok /opt/dflt/x"
    assert probe.readlink(without, env=env, user="nobody",
                          probe=suid) == "err EACCES"


@pytest.mark.threads
def test_changes_while_walked(tm, probe):
    """rename and unlink under a process walking the link: every answer is
    one the link could give, nothing hangs, nothing crashes."""
    path = os.path.join(tm.dir, "moving")
    link(tm, "moving", "/one/${V:-d}")
    stop = time.monotonic() + 3
    errors = []

    def churn():
        i = 0
        while time.monotonic() < stop:
            try:
                tmp = os.path.join(tm.dir, f"new{i}")
                os.symlink("/two/${V:-d}" if i % 2 else "/one/${V:-d}", tmp)
                os.rename(tmp, path)
                if i % 5 == 0:
                    os.unlink(path)
                    os.symlink("/one/${V:-d}", path)
            except OSError as e:
                errors.append(e)
            i += 1

    t = threading.Thread(target=churn)
    t.start()
    tallies = []
    while time.monotonic() < stop:
        p = run([probe.path, "tally", "500", path], env={"V": "v"})
        assert p.returncode == 0, p.out + p.err
        tallies += [line.split(" ", 2)[2] for line in p.out.splitlines()[:-1]]
    t.join()
    assert not errors, errors
    assert set(tallies) <= {"/one/v", "/two/v", "err ENOENT"}, set(tallies)
    assert "/one/v" in tallies and "/two/v" in tallies
    assert probe.readlink(path, env={}) in ("ok /one/d", "ok /two/d")


def test_tmpfiles_recreates_links_at_boot(tm, probe, public_dir):
    """The documented way to keep links across reboots: tmpfiles.d L lines."""
    tmpfiles = shutil.which("systemd-tmpfiles", path="/usr/bin:/bin")
    if not tmpfiles:
        pytest.skip("systemd-tmpfiles is not installed")
    if IN_USERNS:
        pytest.skip("systemd-tmpfiles refuses paths under a /tmp it sees "
                    "owned by an unmapped user (nobody)")
    conf = os.path.join(public_dir, "varsym.conf")
    with open(conf, "w") as f:
        f.write(f"L {tm.dir}/perl-lib - - - - /opt/perl/${{PERL_VERSION:-5.22.1}}/lib\n"
                f"L {tm.dir}/bin - - - - /opt/${{UNIVERSE:-ucb}}/bin\n")
    run([tmpfiles, "--create", conf], env={"PATH": "/usr/bin:/bin"}, check=True)
    assert probe.readlink(os.path.join(tm.dir, "perl-lib"),
                          env={"PERL_VERSION": "5.24.0"}) == "ok /opt/perl/5.24.0/lib"
    assert probe.readlink(os.path.join(tm.dir, "bin"), env={}) == "ok /opt/ucb/bin"


def link_when_room(m, name, template, timeout=5.0):
    """A link gone counts until its inode goes: at once for the kernel;
    when the kernel's FORGET reaches the FUSE daemon, soon after."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return link(m, name, template)
        except OSError as e:
            if e.errno != errno.ENOSPC or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def test_nr_links_limits_the_links(varsymfs):
    """docs/SPEC.md section 3: nr_links= bounds the links a mount holds at
    once; one more is ENOSPC, and a link gone makes room again."""
    m = varsymfs("nr_links=3")
    for i in range(3):
        link(m, f"l{i}", f"/t/{i}")
    with pytest.raises(OSError) as e:
        link(m, "l3", "/t/3")
    assert e.value.errno == errno.ENOSPC
    os.unlink(os.path.join(m.dir, "l0"))
    link_when_room(m, "l3", "/t/3")
    os.rename(os.path.join(m.dir, "l3"), os.path.join(m.dir, "l1"))
    link_when_room(m, "l4", "/t/4")
    assert sorted(os.listdir(m.dir)) == ["l1", "l2", "l4"]
    with pytest.raises(OSError) as e:
        link(m, "l5", "/t/5")
    assert e.value.errno == errno.ENOSPC


class _FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * 128)]


def file_handle(path):
    """name_to_handle_at(2) of path itself (not followed): (type, bytes)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fh = _FileHandle(handle_bytes=128)
    mount_id = ctypes.c_int()
    if libc.name_to_handle_at(-100, os.fsencode(path), ctypes.byref(fh),
                              ctypes.byref(mount_id), 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), path)
    return fh.handle_type, bytes(fh.f_handle[:fh.handle_bytes])


def test_file_handles_hold_no_daemon_address(impl, tm):
    """docs/SECURITY.md: anyone may ask name_to_handle_at(2) for a link's
    handle; a FUSE handle holds the daemon's node id (u32 high, u32 low,
    u32 generation), which must be opaque, never the root daemon's heap
    address (that would give its ASLR away)."""
    if impl != "fuse":
        pytest.skip("a property of the FUSE daemon's node ids")
    paths = [link(tm, f"h{i}", f"/t/${{V:-{i}}}") for i in range(4)]
    os.unlink(paths[1])
    paths[1] = link(tm, "h1", "/t/again")
    for path in paths + [tm.dir]:
        kind, raw = file_handle(path)
        assert kind in (0x81, 0x82), f"{path}: handle type {kind:#x}"
        hi, lo = struct.unpack_from("=II", raw)
        nodeid = hi << 32 | lo
        ino = os.lstat(path).st_ino
        assert nodeid == ino and nodeid < 2 ** 32, (
            f"{path}: the handle's node id is {nodeid:#x}, its st_ino "
            f"{ino}: the node id must be the opaque st_ino, not an address")


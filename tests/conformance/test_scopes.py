# SPDX-License-Identifier: GPL-2.0-only
"""docs/SPEC.md section 4, "Scopes" and "Built-in names": values that survive
a clean environment, set with `varsym set` on a mount's user and system
scopes, and facts about the caller that no environment sets.

Each precedence row is checked on a template link and on the seed link; a
secure-exec caller is a real setuid-root copy of vsprobe run by nobody.
"""
import errno
import os
import pwd
import shutil
import subprocess
import textwrap

import pytest

from conftest import IN_USERNS, needs_real_root, run, wait_for

pytestmark = [pytest.mark.spec4, pytest.mark.exec_hooks]

SYSTEM = "system.varsym_system"
USER = "system.varsym_user"
PATH = {"PATH": "/usr/bin:/bin"}
SBIN = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}


@pytest.fixture
def varsym(build):
    return os.path.join(build, "varsym")


@pytest.fixture
def suid_probe(probe, public_dir):
    """vsprobe, setuid root: a secure-exec caller when nobody runs it."""
    if IN_USERNS:
        pytest.skip("needs real root to make a setuid-root program")
    dst = os.path.join(public_dir, "vsprobe-suid")
    shutil.copy(probe.path, dst)
    os.chown(dst, 0, 0)
    os.chmod(dst, 0o4755)
    return dst


def vs(varsym, *args, user=None, env=None, check=True):
    p = run([varsym] + [str(a) for a in args], env=env or PATH, user=user)
    if check:
        assert p.returncode == 0, f"{p.cmd}: {p.returncode}\n{p.err}"
    return p


def make_public(path):
    os.chmod(path, 0o755)


# ---- precedence ------------------------------------------------------------

@pytest.fixture(params=["template", "seed"])
def scoped(request, varsymfs):
    """A link that reads V (default /dflt), on a template or seed mount."""
    if request.param == "template":
        m = varsymfs("")
        path = os.path.join(m.dir, "v")
        os.symlink("${V:-/dflt}", path)
    else:
        m = varsymfs("V,default=/dflt")
        path = m.link
    return m, path


def test_precedence_row_by_row(scoped, probe, varsym):
    m, link = scoped
    assert probe.readlink(link, env={}) == "ok /dflt"
    vs(varsym, "set", "-s", m.dir, "V=/sys")
    assert probe.readlink(link, env={}) == "ok /sys"
    vs(varsym, "set", m.dir, "V=/user")          # -u is the default
    assert probe.readlink(link, env={}) == "ok /user"
    assert probe.readlink(link, env={"V": "/env"}) == "ok /env"
    # set but empty counts as unset, at every source
    assert probe.readlink(link, env={"V": ""}) == "ok /user"
    vs(varsym, "unset", "-u", m.dir, "V")
    assert probe.readlink(link, env={"V": ""}) == "ok /sys"
    vs(varsym, "unset", "-s", m.dir, "V")
    assert probe.readlink(link, env={}) == "ok /dflt"
    assert vs(varsym, "list", "-s", m.dir).out == ""


def test_list_shows_each_scope(varsymfs, varsym):
    m = varsymfs("")
    vs(varsym, "set", "-s", m.dir, "A=/a", "B=/b")
    vs(varsym, "set", m.dir, "C=/c")
    assert vs(varsym, "list", "-s", m.dir).out == "A=/a\nB=/b\n"
    assert vs(varsym, "list", m.dir).out == "C=/c\n"
    assert os.getxattr(m.dir, SYSTEM) == b"A=/a\0B=/b\0"
    # a path inside the mount names it too: a link in its root
    os.symlink("${A}", os.path.join(m.dir, "a"))
    assert vs(varsym, "list", "-s", os.path.join(m.dir, "a")).out == \
        "A=/a\nB=/b\n"
    os.removexattr(m.dir, SYSTEM)
    assert os.getxattr(m.dir, SYSTEM) == b""
    vs(varsym, "set", "-s", m.dir, "A=/a")
    with pytest.raises(OSError) as e:           # an empty change: EINVAL
        os.setxattr(m.dir, SYSTEM, b"")
    assert e.value.errno == 22
    assert os.getxattr(m.dir, SYSTEM) == b"A=/a\0"
    assert sorted(os.listxattr(m.dir)) == [SYSTEM, USER]


@pytest.mark.kernel_dependent
def test_clean_environment_and_setuid_take_the_system_scope(
        varsymfs, probe, suid_probe, varsym):
    """env -i follows the system scope, and so does a setuid program; a
    setuid program never follows its invoker's user scope."""
    m = varsymfs("")
    link = os.path.join(m.dir, "v")
    os.symlink("${V:-/dflt}", link)
    vs(varsym, "set", "-s", m.dir, "V=/sys")
    assert probe.readlink(link, env={}, user="nobody") == "ok /sys"
    assert run([suid_probe, "readlink", link], env={"V": "/env"},
               user="nobody").out.strip() == "ok /sys"
    vs(varsym, "set", m.dir, "V=/nobody", user="nobody")
    assert probe.readlink(link, env={}, user="nobody") == "ok /nobody"
    assert run([suid_probe, "readlink", link], env={},
               user="nobody").out.strip() == "ok /sys"
    # root's own user scope is its own: nobody's value is not root's
    assert probe.readlink(link, env={}) == "ok /sys"
    assert vs(varsym, "list", m.dir, user="nobody").out == "V=/nobody\n"
    assert vs(varsym, "list", m.dir).out == ""


@needs_real_root
def test_a_user_sets_only_their_own_scope(varsymfs, probe, varsym):
    m = varsymfs("")
    link = os.path.join(m.dir, "v")
    os.symlink("${V:-/dflt}", link)
    p = vs(varsym, "set", "-s", m.dir, "V=/mine", user="nobody", check=False)
    assert p.returncode == 3
    assert "only the mount's administrator" in p.err
    assert os.getxattr(m.dir, SYSTEM) == b""
    # the attribute itself refuses, whatever the tool says
    p = run(["/usr/bin/python3", "-c", textwrap.dedent(f"""
        import errno, os
        try:
            os.setxattr({m.dir!r}, {SYSTEM!r}, b"V=/mine")
        except OSError as e:
            print(errno.errorcode[e.errno])
        """)], env=PATH, user="nobody")
    assert p.out.strip() == "EPERM"
    assert probe.readlink(link, env={}) == "ok /dflt"
    # nobody's user scope changes nothing for root or for another user
    vs(varsym, "set", m.dir, "V=/nobody", user="nobody")
    assert probe.readlink(link, env={}) == "ok /dflt"
    p = run(["/usr/bin/setpriv", "--reuid=65533", "--regid=65533",
             "--clear-groups", "--", probe.path, "readlink", link], env={})
    assert p.out.strip() == "ok /dflt"


@pytest.mark.threads
def test_one_change_is_seen_whole(varsymfs, varsym, build):
    """64 readers while A and B change together: never one old and one
    new."""
    m = varsymfs("")
    link = os.path.join(m.dir, "ab")
    os.symlink("/q/${A}-${B}", link)
    vs(varsym, "set", "-s", m.dir, "A=1", "B=1")
    reader = textwrap.dedent(f"""
        import os, sys, threading
        seen = set()
        def read():
            for _ in range(150):
                seen.add(os.readlink({link!r}))
        ts = [threading.Thread(target=read) for _ in range(8)]
        [t.start() for t in ts]
        [t.join() for t in ts]
        print(" ".join(sorted(seen)))
        """)
    readers = [subprocess.Popen(["/usr/bin/python3", "-c", reader], env={},
                                stdout=subprocess.PIPE, text=True)
               for _ in range(8)]
    try:
        for i in range(40):
            v = str(2 + i % 2)
            os.setxattr(m.dir, SYSTEM, f"A={v}\0B={v}".encode())
    finally:
        outs = [r.communicate(timeout=300)[0] for r in readers]
    seen = set(" ".join(outs).split())
    assert seen, "the readers read nothing"
    mixed = [t for t in seen if t.split("/")[-1].split("-")[0] !=
             t.split("-")[-1]]
    assert not mixed, f"mixed answers: {mixed}"
    assert seen <= {"/q/1-1", "/q/2-2", "/q/3-3"}


@pytest.mark.threads
def test_a_kept_answer_follows_a_change(varsymfs, varsym, probe):
    """A process that read a link, then reads it after a change, gets the
    new value: no kept answer outlives the change."""
    m = varsymfs("")
    link = os.path.join(m.dir, "v")
    os.symlink("${V:-/dflt}", link)
    p = subprocess.Popen(["/usr/bin/python3", "-c", textwrap.dedent(f"""
        import os, sys
        for line in sys.stdin:
            print(os.readlink({link!r}), flush=True)
        """)], env={}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True)
    try:
        def ask():
            p.stdin.write("\n")
            p.stdin.flush()
            return p.stdout.readline().strip()
        assert ask() == "/dflt"
        assert ask() == "/dflt"
        vs(varsym, "set", "-s", m.dir, "V=/new")
        assert ask() == "/new"
        vs(varsym, "set", m.dir, "V=/mine")
        assert ask() == "/mine"
        vs(varsym, "unset", m.dir, "V")
        assert ask() == "/new"
    finally:
        p.stdin.close()
        p.wait(timeout=60)


def test_get_prints_the_value_alone(varsymfs, varsym):
    """varsym get, for scripts (DragonFly's `varsym NAME`): the value and a
    newline, exit 1 when unset; without -s or -u the user scope first."""
    m = varsymfs("")
    vs(varsym, "set", "-s", m.dir, "A=/sys-a", "B=/sys b")
    vs(varsym, "set", m.dir, "B=/user-b")
    for args, out in ((["A"], "/sys-a\n"), (["B"], "/user-b\n"),
                      (["-s", "B"], "/sys b\n"), (["-u", "B"], "/user-b\n"),
                      (["--system", "A"], "/sys-a\n")):
        p = vs(varsym, "get", *args[:-1], m.dir, args[-1])
        assert (p.out, p.err) == (out, ""), args
    for args in (["C"], ["-u", "A"]):
        p = vs(varsym, "get", *args[:-1], m.dir, args[-1], check=False)
        assert (p.returncode, p.out, p.err) == (1, "", ""), args
    # another user's processes get the system scope's
    if not IN_USERNS:
        assert vs(varsym, "get", m.dir, "B", user="nobody").out == "/sys b\n"


def test_conflicting_and_misplaced_flags_are_refused(varsymfs, varsym):
    """Usage errors exit 2 and change nothing; refusals exit 3."""
    m = varsymfs("")
    vs(varsym, "set", "-s", m.dir, "A=/a")
    for argv in (["list", "-s", "-u", m.dir], ["get", "-u", "-s", m.dir, "A"],
                 ["set", "-s", "-u", m.dir, "A=/b"], ["unset", "-u", "-s", m.dir, "A"],
                 ["get", m.dir], ["get", m.dir, "A", "B"], ["get", m.dir, "1A"],
                 ["list", "--save", m.dir], ["list", "--config", "/x", m.dir],
                 ["load", "-s", "-u", m.dir], ["load", "--save", m.dir]):
        p = vs(varsym, *argv, check=False)
        assert p.returncode == 2 and p.out == "", (argv, p.err)
        assert "Try 'varsym --help'." in p.err, (argv, p.err)
    assert "-s and -u name two scopes" in vs(varsym, "list", "-s", "-u", m.dir,
                                             check=False).err
    assert os.getxattr(m.dir, SYSTEM) == b"A=/a\0"


ROOTS_NOTE = ("varsym: note: that was root's own user scope (-u), which "
              "every process of real uid 0 follows: what sudo runs, root's "
              "services and cron jobs; other users' processes do not see it. "
              "The system scope, for every process, is -s.\n")


def test_root_is_told_whose_scope_it_set(varsymfs, varsym, probe):
    """Root's `varsym set` without -s sets root's own user scope, which
    every sudo'd program follows: said on standard error where it is run;
    not when -u or -s says which, nor to another user."""
    m = varsymfs("")
    for verb, arg in (("set", "V=/root"), ("unset", "V")):
        p = vs(varsym, verb, m.dir, arg)
        assert p.err == (ROOTS_NOTE if os.getuid() == 0 else ""), p.err
    for flag in ("-u", "-s"):
        assert vs(varsym, "set", flag, m.dir, "V=/x").err == ""
    if os.getuid() == 0 and not IN_USERNS:
        assert vs(varsym, "set", m.dir, "V=/n", user="nobody").err == ""


@needs_real_root
def test_a_users_saved_values_come_back_with_load_u(varsymfs, varsym, probe,
                                                     public_dir):
    """A user's --save goes to their own ~/.config/varsym.conf (or
    $XDG_CONFIG_HOME's), made as the XDG base directories say; no file
    system reads it: after a remount their scope is empty until their own
    `varsym load -u` sets it again."""
    home = os.path.join(public_dir, "home")
    os.mkdir(home)
    os.chown(home, 65534, 65534)
    env = {**PATH, "HOME": home}
    m = varsymfs("")
    link = os.path.join(m.dir, "v")
    os.symlink("${V:-/dflt}", link)
    vs(varsym, "set", "--save", m.dir, "V=/mine", "W=/w", user="nobody", env=env)
    vs(varsym, "unset", "--save", m.dir, "W", user="nobody", env=env)
    conf = os.path.join(home, ".config", "varsym.conf")
    st = os.stat(os.path.dirname(conf))
    assert (st.st_mode & 0o777, st.st_uid) == (0o700, 65534)
    assert os.stat(conf).st_uid == 65534
    with open(conf) as f:
        assert f.read() == f"[{os.path.realpath(m.dir)}]\nV=/mine\n"
    assert not os.path.exists("/etc/varsym.conf") or \
        "/mine" not in open("/etc/varsym.conf").read()
    where = m.dir
    m.stop()
    m = varsymfs("", where=where)
    os.symlink("${V:-/dflt}", link)
    assert vs(varsym, "list", m.dir, user="nobody", env=env).out == ""
    assert probe.readlink(link, env={}, user="nobody") == "ok /dflt"
    vs(varsym, "load", "-u", m.dir, user="nobody", env=env)
    assert vs(varsym, "list", m.dir, user="nobody", env=env).out == \
        "V=/mine\n"
    assert probe.readlink(link, env={}, user="nobody") == "ok /mine"
    assert probe.readlink(link, env={}) == "ok /dflt"     # root's: not it
    assert os.getxattr(m.dir, SYSTEM) == b""
    # $XDG_CONFIG_HOME, when set, is where the file lives
    xdg = os.path.join(home, "xdg")
    vs(varsym, "set", "--save", m.dir, "V=/xdg", user="nobody",
       env={**env, "XDG_CONFIG_HOME": xdg})
    with open(os.path.join(xdg, "varsym.conf")) as f:
        assert f.read() == f"[{os.path.realpath(m.dir)}]\nV=/xdg\n"


@needs_real_root
def test_a_save_whose_directory_cannot_be_made_says_so(varsymfs, varsym,
                                                       public_dir):
    """--save makes the last directory of the user's file only (mode
    0700); one it cannot make is named with why, not reported as a file
    that cannot be written, and nothing changes (docs/SPEC.md section 4,
    "A user's own file": exit 2)."""
    home = os.path.join(public_dir, "home")
    os.mkdir(home)                  # root's: nobody cannot make .config
    m = varsymfs("")
    for xdg, errno_name in ((None, "EACCES"),
                            (os.path.join(public_dir, "no", "such"), "ENOENT")):
        env = {**PATH, "HOME": home}
        if xdg:
            env["XDG_CONFIG_HOME"] = xdg
        conf_dir = xdg or os.path.join(home, ".config")
        p = run([varsym, "set", "--save", m.dir, "V=/mine"], env=env,
                user="nobody")
        assert p.returncode == 2, p.err
        assert p.err == (f"varsym: {conf_dir}: cannot make the directory of "
                         f"{conf_dir}/varsym.conf: "
                         f"{os.strerror(getattr(errno, errno_name))} "
                         f"({errno_name}); nothing changed\n"), p.err
        assert vs(varsym, "list", m.dir, user="nobody", env=env).out == ""
        assert not os.path.exists(conf_dir)


def test_scopes_belong_to_their_mount(varsymfs, varsym, probe):
    a, b = varsymfs(""), varsymfs("")
    for m in (a, b):
        os.symlink("${V:-/dflt}", os.path.join(m.dir, "v"))
    vs(varsym, "set", "-s", a.dir, "V=/a")
    vs(varsym, "set", b.dir, "V=/b-user")
    assert probe.readlink(os.path.join(a.dir, "v"), env={}) == "ok /a"
    assert probe.readlink(os.path.join(b.dir, "v"), env={}) == "ok /b-user"


# ---- bad input: its error, and nothing changed -----------------------------

BAD = [
    (["1V=x"], "invalid variable name '1V'"),
    (["V="], "empty value for 'V' (unset it instead)"),
    (["@uid=0"], "'@uid' is a built-in name: nobody sets it"),
    (["V=a", "V=b"], "'V' given twice"),
    (["V=" + "x" * 4096], "value of 'V' is longer than PATH_MAX - 1 bytes"),
    ([f"V{i}=" + "x" * 4000 for i in range(17)], "more than 65536 bytes"),
    # control characters, in a value or a name: the same message everywhere
    (["V=a\nb"], "control character 0x0a in 'V=...': names and values are "
     "printable text"),
    (["V=tab\there"], "control character 0x09 in 'V=...'"),
    (["V=\x7f"], "control character 0x7f in 'V=...'"),
    (["A\x01B=1"], "control character 0x01 in 'A...'"),
]


@pytest.mark.parametrize("args,message", BAD, ids=range(len(BAD)))
def test_bad_change_is_refused_whole(varsymfs, varsym, args, message):
    m = varsymfs("")
    vs(varsym, "set", "-s", m.dir, "KEEP=/k")
    p = vs(varsym, "set", "-s", m.dir, "OK=/ok", *args, check=False)
    assert p.returncode == 3 and message in p.err, p.err
    assert os.getxattr(m.dir, SYSTEM) == b"KEEP=/k\0"
    # the file system refuses it on its own too
    raw = "\0".join(["OK=/ok"] + args).encode()
    if len(raw) <= 65536:
        with pytest.raises(OSError) as e:
            os.setxattr(m.dir, SYSTEM, raw)
        assert e.value.errno in (22, 7), e.value     # EINVAL, E2BIG
    assert os.getxattr(m.dir, SYSTEM) == b"KEEP=/k\0"


def test_bad_places_and_forms(varsymfs, varsym, public_dir):
    m = varsymfs("")
    p = vs(varsym, "set", public_dir, "V=x", check=False)
    assert p.returncode == 2 and "not a varsymfs mount" in p.err
    p = vs(varsym, "set", m.dir, "V", check=False)
    assert p.returncode == 2 and "set needs NAME=VALUE" in p.err
    p = vs(varsym, "unset", m.dir, "V=x", check=False)
    assert p.returncode == 2 and "unset needs NAME" in p.err
    p = vs(varsym, "set", m.dir, check=False)
    assert p.returncode == 2 and "missing NAME" in p.err
    os.symlink("${V}", os.path.join(m.dir, "v"))
    with pytest.raises(OSError) as e:     # only the root holds scopes
        os.setxattr(os.path.join(m.dir, "v"), SYSTEM, b"V=x",
                    follow_symlinks=False)
    assert e.value.errno == 95            # EOPNOTSUPP
    assert os.getxattr(m.dir, SYSTEM) == b"" and \
        os.getxattr(m.dir, USER) == b""


# ---- built-in names ---------------------------------------------------------

BUILTINS = "/b/${@machine}/${@uid}/${@gid}/${@ruid:-none}/${@hostname}"


def test_builtins(varsymfs, probe):
    m = varsymfs("")
    link = os.path.join(m.dir, "b")
    os.symlink(BUILTINS, link)
    u = os.uname()
    want = f"/b/{u.machine}/{os.getuid()}/{os.getgid()}/{os.getuid()}/{u.nodename}"
    # never from the environment
    assert probe.readlink(link, env={"@machine": "x"}) == f"ok {want}"
    os.symlink("${@osrelease}", os.path.join(m.dir, "r"))
    assert probe.readlink(os.path.join(m.dir, "r"), env={}) == \
        f"ok {u.release}"
    with pytest.raises(OSError) as e:
        os.symlink("${@nope}", os.path.join(m.dir, "bad"))
    assert e.value.errno == 22


# uname -m of a linux32 process: the architecture's COMPAT_UTS_MACHINE
LINUX32_MACHINE = {"x86_64": "i686", "aarch64": "armv8l"}


@pytest.mark.kernel_dependent
def test_builtin_machine_under_linux32(varsymfs, probe):
    native = os.uname().machine
    if native not in LINUX32_MACHINE:
        pytest.skip(f"linux32's machine is not known here for {native}")
    m = varsymfs("")
    link = os.path.join(m.dir, "opt")
    os.symlink("/opt/${@machine}", link)
    p = run(["/usr/bin/setarch", "linux32", probe.path, "readlink", link],
            env={})
    assert p.out.strip() == f"ok /opt/{LINUX32_MACHINE[native]}"
    assert probe.readlink(link, env={}) == f"ok /opt/{native}"


def test_builtin_hostname_of_a_new_uts_namespace(varsymfs, probe):
    m = varsymfs("")
    link = os.path.join(m.dir, "h")
    os.symlink("/h/${@hostname}", link)
    p = run(["/usr/bin/unshare", "--uts", "/bin/sh", "-c",
             f"hostname vs-elsewhere && {probe.path} readlink {link}"],
            env=PATH)
    assert p.out.strip() == "ok /h/vs-elsewhere", p.err
    assert probe.readlink(link, env={}) == f"ok /h/{os.uname().nodename}"


@pytest.mark.kernel_dependent
def test_builtin_real_ids_unset_for_setuid(varsymfs, probe, suid_probe):
    m = varsymfs("")
    link = os.path.join(m.dir, "ids")
    os.symlink("/i/${@uid}/${@ruid:-none}/${@rgid:-none}", link)
    assert probe.readlink(link, env={}, user="nobody") == \
        "ok /i/65534/65534/65534"
    assert run([suid_probe, "readlink", link], env={},
               user="nobody").out.strip() == "ok /i/0/none/none"


def test_seed_mode_builtin(varsymfs, probe):
    m = varsymfs("@machine,prefix=/opt/")
    assert probe.readlink(m.link, env={"machine": "x"}) == \
        f"ok /opt/{os.uname().machine}"


# ---- persistence --------------------------------------------------------------

def test_saved_values_survive_umount_and_mount(varsymfs, varsym, probe,
                                               public_dir):
    conf = os.path.join(public_dir, "varsym.conf")
    with open(conf, "w") as f:
        f.write("# another mount's section stays as it is\n[/elsewhere]\nX=1\n")
    env = {"VARSYM_CONF": conf}
    m = varsymfs("", env=env, helper=True)
    where = m.dir
    vs(varsym, "set", "-s", "--save", where, "PERL_VERSION=5.24.0", "B=/b",
       env={**PATH, **env})
    vs(varsym, "unset", "-s", "--save", where, "B", env={**PATH, **env})
    with open(conf) as f:
        text = f.read()
    real = os.path.realpath(where)
    assert text == ("# another mount's section stays as it is\n[/elsewhere]\n"
                    f"X=1\n\n[{real}]\nPERL_VERSION=5.24.0\n")
    m.stop()
    m2 = varsymfs("", env=env, helper=True, where=where)
    assert os.getxattr(m2.dir, SYSTEM) == b"PERL_VERSION=5.24.0\0"
    link = os.path.join(m2.dir, "perl")
    os.symlink("/opt/perl/${PERL_VERSION:-5.22.1}/lib", link)
    assert probe.readlink(link, env={}) == "ok /opt/perl/5.24.0/lib"


SAVED_BEFORE = """# the site's values
[/elsewhere]
X=1
[{where}]
  # Perl: ask the web team first
  PERL = 5.24.0
this line is not NAME=VALUE
A=1
A=2

[/other]
A=3
"""

SAVED_AFTER = """# the site's values
[/elsewhere]
X=1
[{where}]
  # Perl: ask the web team first
  PERL = 5.24.0
this line is not NAME=VALUE
NEW=/n

[/other]
A=3
"""


def test_save_edits_the_file_as_a_person_would(varsymfs, varsym, public_dir):
    """--save makes the change in the mount's sections and nowhere else:
    comments, lines a load skips and other sections stay, a line whose
    value is the same stays as written; the file keeps its mode and group
    (its owner is the writer: another's file is refused), a symbolic link
    stays one and its target is written, and the new text replaces the
    old whole (a new inode, no file left beside it)."""
    m = varsymfs("")
    real = os.path.realpath(m.dir)
    target = os.path.join(public_dir, "etc", "site.conf")
    os.mkdir(os.path.dirname(target))
    with open(target, "w") as f:
        f.write(SAVED_BEFORE.format(where=real))
    os.chmod(target, 0o640)
    # another group than the writer's (in a user namespace only its root
    # is mapped: the writer's own then)
    group = 0 if IN_USERNS else 65534
    os.chown(target, 0, group)
    conf = os.path.join(public_dir, "varsym.conf")
    os.symlink("etc/site.conf", conf)
    inode = os.stat(target).st_ino
    env = {**PATH, "VARSYM_CONF": conf}
    vs(varsym, "load", m.dir, env=env, check=False)
    assert os.getxattr(m.dir, SYSTEM) == b"PERL=5.24.0\0A=2\0"
    vs(varsym, "set", "-s", "--save", m.dir, "PERL=5.24.0", "NEW=/n",
       env=env)
    # (a file system may give the next new file the freed inode again)
    assert os.stat(target).st_ino != inode, "written in place, not replaced"
    vs(varsym, "unset", "-s", "--save", m.dir, "A", env=env)
    assert os.readlink(conf) == "etc/site.conf"
    with open(target) as f:
        assert f.read() == SAVED_AFTER.format(where=real)
    st = os.stat(target)
    assert (st.st_mode & 0o7777, st.st_uid, st.st_gid) == (0o640, 0, group)
    assert sorted(os.listdir(os.path.dirname(target))) == ["site.conf"]
    assert os.getxattr(m.dir, SYSTEM) == b"PERL=5.24.0\0NEW=/n\0"
    # and a new mount loads what the file now says
    m.stop()
    m2 = varsymfs("", env={"VARSYM_CONF": conf}, helper=True, where=m.dir)
    assert os.getxattr(m2.dir, SYSTEM) == b"PERL=5.24.0\0NEW=/n\0"


def test_a_save_that_cannot_write_changes_nothing(varsymfs, varsym,
                                                  public_dir):
    """--save writes the file first: when it cannot, the scope is as it
    was, and the message names the file and the errno."""
    m = varsymfs("")
    vs(varsym, "set", "-s", m.dir, "KEEP=/k")
    conf = os.path.join(public_dir, "missing", "varsym.conf")
    p = vs(varsym, "set", "-s", "--save", m.dir, "A=/a",
           env={**PATH, "VARSYM_CONF": conf}, check=False)
    assert (p.returncode, p.err) == (2, (
        f"varsym: {conf}: cannot write a new copy beside it: No such file "
        "or directory (ENOENT); nothing changed\n"))
    assert os.getxattr(m.dir, SYSTEM) == b"KEEP=/k\0"


def test_a_save_that_cannot_replace_the_file_undoes_the_change(
        varsymfs, varsym, public_dir):
    """When the new text cannot take the file's place (an immutable file:
    rename(2) fails with EPERM), the scope's change is undone."""
    m = varsymfs("")
    vs(varsym, "set", "-s", m.dir, "KEEP=/k", "A=/old")
    conf = os.path.join(public_dir, "varsym.conf")
    with open(conf, "w") as f:
        f.write("# as it was\n")
    if run(["chattr", "+i", conf], env=SBIN).returncode:
        pytest.skip(f"no immutable files on {public_dir}'s file system")
    try:
        p = vs(varsym, "set", "-s", "--save", m.dir, "A=/new", "B=/b",
               env={**PATH, "VARSYM_CONF": conf}, check=False)
    finally:
        run(["chattr", "-i", conf], env=SBIN, check=True)
    assert (p.returncode, p.err) == (2, (
        f"varsym: {conf}: cannot put its new copy in place: Operation not "
        "permitted (EPERM); the change is undone: nothing changed\n"))
    assert os.getxattr(m.dir, SYSTEM) == b"KEEP=/k\0A=/old\0"
    with open(conf) as f:
        assert f.read() == "# as it was\n"
    assert [x for x in os.listdir(public_dir)
            if x.startswith("varsym.conf")] == ["varsym.conf"]


@needs_real_root
def test_a_save_the_mount_refuses_leaves_the_file(varsymfs, varsym,
                                                  public_dir):
    """The new text is written, then the file system refuses the change
    (nobody may not change root's mount's system scope): the file stays
    as it was, and no copy is left beside it."""
    m = varsymfs("")
    d = os.path.join(public_dir, "nobodys")
    os.mkdir(d)
    os.chown(d, 65534, 65534)
    conf = os.path.join(d, "varsym.conf")
    with open(conf, "w") as f:
        f.write("# nobody's\n")
    os.chown(conf, 65534, 65534)
    p = vs(varsym, "set", "-s", "--save", m.dir, "A=/a", user="nobody",
           env={**PATH, "VARSYM_CONF": conf}, check=False)
    assert p.returncode == 3 and "only the mount's administrator" in p.err
    with open(conf) as f:
        assert f.read() == "# nobody's\n"
    assert os.listdir(d) == ["varsym.conf"]
    assert os.getxattr(m.dir, SYSTEM) == b""


# ---- --save writes only its writer's own files -------------------------------

VICTIM = "# root's own file, which is not varsym's\nkeep=me\n"


def nobodys(path, mode=0o755):
    """A directory made at path and given to nobody."""
    os.mkdir(path)
    os.chmod(path, mode)
    os.chown(path, 65534, 65534)
    return path


def nobodys_link(target, path):
    """A symbolic link at path to target, owned by nobody."""
    os.symlink(target, path)
    os.lchown(path, 65534, 65534)
    return path


def roots_dir(path):
    """A directory made at path, root's, 0755, with VICTIM in it."""
    os.mkdir(path)
    os.chmod(path, 0o755)
    victim = os.path.join(path, "victim")
    with open(victim, "w") as f:
        f.write(VICTIM)
    os.chmod(victim, 0o644)
    return victim


def untouched(victim, inode):
    """The victim has its text and inode, and its directory nothing else."""
    with open(victim) as f:
        assert f.read() == VICTIM
    assert os.stat(victim).st_ino == inode
    assert os.listdir(os.path.dirname(victim)) == ["victim"]


def as_root_with_a_private_home(varsym, env, *args):
    """varsym ARGS run by root with env (a user's environment, as `su`
    without `-` and `sudo -E` keep it), in a mount namespace of its own
    where root's home from the password database is an empty tmpfs, so
    that the real one is never written: "status N" and what root's own
    file there then holds, or "no file" (read in that namespace, which
    ends with the shell)."""
    home = pwd.getpwuid(0).pw_dir
    script = textwrap.dedent("""
        home=$1 varsym=$2
        shift 2
        mount -t tmpfs -o mode=0700 varsym-test "$home" || exit 99
        "$varsym" "$@"
        echo "status $?"
        cat "$home/.config/varsym.conf" 2>/dev/null || echo "no file"
        """)
    p = run(["/usr/bin/unshare", "--mount", "--propagation", "private",
             "/bin/sh", "-c", script, "sh", home, varsym] + list(args),
            env=env)
    assert p.returncode == 0, f"{p.cmd}: {p.returncode}\n{p.err}"
    return p


@pytest.mark.attack
@needs_real_root
@pytest.mark.parametrize("target", ["existing", "new"])
@pytest.mark.parametrize("variable", ["XDG_CONFIG_HOME", "HOME"])
def test_roots_user_file_is_never_the_one_a_users_environment_names(
        varsymfs, varsym, public_dir, variable, target):
    """Security round 5, item 4: root's `varsym set -u --save`, run with a
    user's environment (`su` without `-`, `sudo -E`), took its file from
    $XDG_CONFIG_HOME or $HOME and followed the user's link there, so the
    user chose which root file was replaced (another inode, another
    text) or created.  Root's user file is in root's own home, from the
    password database: the user's link is not followed, and the file it
    points at is neither written nor made."""
    m = varsymfs("")
    victim = roots_dir(os.path.join(public_dir, "roots"))
    inode = os.stat(victim).st_ino
    created = os.path.join(public_dir, "roots", "created")
    home = nobodys(os.path.join(public_dir, "home"))
    env = {**SBIN, "HOME": home}
    if variable == "XDG_CONFIG_HOME":
        env["XDG_CONFIG_HOME"] = nobodys(os.path.join(home, "xdg"), 0o700)
        conf = os.path.join(env["XDG_CONFIG_HOME"], "varsym.conf")
    else:
        conf = os.path.join(nobodys(os.path.join(home, ".config"), 0o700),
                            "varsym.conf")
    nobodys_link(victim if target == "existing" else created, conf)
    p = as_root_with_a_private_home(varsym, env, "set", "-u", "--save",
                                    m.dir, "V=/x")
    untouched(victim, inode)
    assert not os.path.lexists(created)
    assert os.readlink(conf) == (victim if target == "existing" else created)
    # root's own file, in root's own home; and root's own scope
    assert p.out == f"status 0\n[{os.path.realpath(m.dir)}]\nV=/x\n", p.err
    assert p.err == ""
    assert os.getxattr(m.dir, USER) == b"V=/x\0"


@pytest.mark.attack
@needs_real_root
@pytest.mark.parametrize("how", ["link", "directory link", "nobody's file"])
def test_roots_save_writes_no_other_users_file_nor_follows_their_links(
        varsymfs, varsym, public_dir, how):
    """Whatever names root's file ($VARSYM_CONF here, or a home), --save
    follows no symbolic link but root's own, and never replaces a
    file of another owner: it refuses, naming the file and why, and
    neither the file nor the scope changes."""
    m = varsymfs("")
    vs(varsym, "set", "-s", m.dir, "KEEP=/k")
    victim = roots_dir(os.path.join(public_dir, "roots"))
    inode = os.stat(victim).st_ino
    d = nobodys(os.path.join(public_dir, "nobodys"))
    if how == "link":
        conf = nobodys_link(victim, os.path.join(d, "varsym.conf"))
        why = (f"varsym: {conf}: will not follow it: a symbolic link of "
               "uid 65534, and --save follows only its writer's (uid 0) "
               "and root's; nothing changed\n")
    elif how == "directory link":
        link = nobodys_link(os.path.dirname(victim), os.path.join(d, "etc"))
        conf = os.path.join(link, "varsym.conf")
        why = (f"varsym: {link}: will not follow it: a symbolic link of "
               "uid 65534, and --save follows only its writer's (uid 0) "
               "and root's; nothing changed\n")
    else:
        conf = os.path.join(d, "varsym.conf")
        with open(conf, "w") as f:
            f.write("# nobody's\n")
        os.chown(conf, 65534, 65534)
        why = (f"varsym: {conf}: will not write it: it belongs to uid "
               "65534, and --save writes only its writer's (uid 0) files; "
               "nothing changed\n")
    before = sorted(os.listdir(d))
    p = vs(varsym, "set", "-s", "--save", m.dir, "V=/x",
           env={**PATH, "VARSYM_CONF": conf}, check=False)
    untouched(victim, inode)
    if how == "nobody's file":
        with open(conf) as f:
            assert f.read() == "# nobody's\n"
    assert sorted(os.listdir(d)) == before
    assert (p.returncode, p.err) == (2, why)
    assert os.getxattr(m.dir, SYSTEM) == b"KEEP=/k\0"


@pytest.mark.attack
@needs_real_root
@pytest.mark.parametrize("whose", ["nobody's", "root's, 0666"])
def test_root_loads_no_system_scope_from_a_file_a_user_controls(
        varsymfs, varsym, public_dir, whose):
    """A root shell that kept a user's environment (`su` without `-`,
    `sudo -E`) kept their $VARSYM_CONF: root's `varsym load`, and so
    mount.varsymfs and every boot's load, set the system scope, the one
    setuid programs follow, from the user's file.  Root takes a file named
    by the environment only if root owns it and only root may write it;
    otherwise it refuses, naming the file and why, and the scope stays."""
    m = varsymfs("")
    vs(varsym, "set", "-s", m.dir, "KEEP=/k")
    d = nobodys(os.path.join(public_dir, "nobodys"))
    conf = os.path.join(d, "varsym.conf")
    with open(conf, "w") as f:
        f.write(f"[{os.path.realpath(m.dir)}]\nV=/chosen-by-nobody\n")
    if whose == "nobody's":
        os.chown(conf, 65534, 65534)
        why = "it belongs to uid 65534"
    else:
        os.chmod(conf, 0o666)
        why = "others may write it"
    p = vs(varsym, "load", m.dir, env={**PATH, "VARSYM_CONF": conf},
           check=False)
    print(p.err)
    assert p.returncode == 2 and p.err == (
        f"varsym: $VARSYM_CONF names {conf}: {why}, and root takes the "
        "system configuration only from a file that root owns and only "
        "root may write (a shell may have kept VARSYM_CONF from a user: "
        "unset it, or give --config FILE)\n"), p.err
    assert os.getxattr(m.dir, SYSTEM) == b"KEEP=/k\0"
    # given on the command line, root chose it
    p = vs(varsym, "load", "--config", conf, m.dir)
    assert os.getxattr(m.dir, SYSTEM) == b"V=/chosen-by-nobody\0"


@pytest.mark.attack
@needs_real_root
def test_roots_daemon_takes_no_system_scope_from_a_users_file(
        impl, build, public_dir):
    """The same for the FUSE program started by root with a user's
    $VARSYM_CONF: it refuses to mount, naming the file and why, and
    leaves nothing mounted."""
    if impl != "fuse":
        pytest.skip("the FUSE program reads the file itself")
    from conftest import Mount, mounted_at
    d = nobodys(os.path.join(public_dir, "nobodys"))
    conf = os.path.join(d, "varsym.conf")
    where = os.path.join(public_dir, "m")
    os.mkdir(where)
    with open(conf, "w") as f:
        f.write(f"[{os.path.realpath(where)}]\nV=/chosen-by-nobody\n")
    os.chown(conf, 65534, 65534)
    m = Mount("fuse", build, "", where, env={"VARSYM_CONF": conf})
    ok, err = m.start()
    if ok:
        m.stop()
    assert not ok and not mounted_at(where), err
    assert f"varsymfs: $VARSYM_CONF names {conf}: it belongs to uid " \
        "65534, and root takes the system configuration only from a " \
        "file that root owns" in err, err
    assert err.endswith("; not mounted\n"), err


@needs_real_root
def test_a_users_own_linked_file_is_still_written(varsymfs, varsym,
                                                  public_dir):
    """A user's --save follows their own links and root's (a home reached
    through the system's link, as /home -> /var/home), and writes the
    target: the link stays a link."""
    m = varsymfs("")
    real = os.path.realpath(m.dir)
    home = nobodys(os.path.join(public_dir, "home"))
    dots = nobodys(os.path.join(home, "dotfiles"))
    target = os.path.join(dots, "varsym.conf")
    with open(target, "w") as f:
        f.write("# nobody's own, kept in dotfiles\n")
    os.chown(target, 65534, 65534)
    config = nobodys(os.path.join(home, ".config"), 0o700)
    conf = nobodys_link("../dotfiles/varsym.conf",
                        os.path.join(config, "varsym.conf"))
    system_link = os.path.join(public_dir, "home-link")
    os.symlink(home, system_link)               # root's
    env = {**PATH, "HOME": system_link}
    vs(varsym, "set", "--save", m.dir, "V=/mine", user="nobody", env=env)
    assert os.readlink(conf) == "../dotfiles/varsym.conf"
    with open(target) as f:
        assert f.read() == f"# nobody's own, kept in dotfiles\n\n[{real}]\n" \
            "V=/mine\n"
    st = os.stat(target)
    assert (st.st_uid, st.st_gid, st.st_mode & 0o777) == (65534, 65534, 0o644)
    assert sorted(os.listdir(dots)) == ["varsym.conf"]
    assert vs(varsym, "list", m.dir, user="nobody", env=env).out == \
        "V=/mine\n"


@needs_real_root
def test_a_users_save_refuses_another_owners_file(varsymfs, varsym,
                                                  public_dir):
    """A user's own link to a file of another owner (root's here): --save
    refuses it, saying whose file it is, before any write fails on the
    way; the user's scope does not change."""
    m = varsymfs("")
    vs(varsym, "set", m.dir, "V=/mine", user="nobody")
    home = nobodys(os.path.join(public_dir, "home"))
    victim = roots_dir(os.path.join(public_dir, "roots"))
    inode = os.stat(victim).st_ino
    config = nobodys(os.path.join(home, ".config"), 0o700)
    nobodys_link(victim, os.path.join(config, "varsym.conf"))
    env = {**PATH, "HOME": home}
    p = vs(varsym, "set", "--save", m.dir, "V=/other", user="nobody",
           env=env, check=False)
    assert (p.returncode, p.err) == (2, (
        f"varsym: {victim}: will not write it: it belongs to uid 0, and "
        "--save writes only its writer's (uid 65534) files; nothing "
        "changed\n"))
    untouched(victim, inode)
    assert vs(varsym, "list", m.dir, user="nobody", env=env).out == \
        "V=/mine\n"


def said_at_mount(m):
    """What the mount said on standard error: the module's helper at once,
    the FUSE program once unmounted."""
    if m.impl == "fuse":
        m.stop()
    return m.said


CONF = """# varsym.conf as people write it
[{where}]
  A = /a
\t# an indented comment, and one with ;
; sysctl.conf's comment
1B=2
C=/c d   \t
X=1 # not a comment
A=/again
"""


def test_a_bad_line_costs_only_itself(varsymfs, public_dir, impl):
    """As sysctl.conf and systemd do: a bad line is reported, FILE:LINE:
    why, and skipped; the rest is applied and the mount is made."""
    conf = os.path.join(public_dir, "varsym.conf")
    where = os.path.join(public_dir, "m")
    os.mkdir(where)
    make_public(where)
    with open(conf, "w") as f:
        f.write(CONF.format(where=os.path.realpath(where)))
    m = varsymfs("", env={"VARSYM_CONF": conf}, helper=True, where=where)
    assert os.getxattr(m.dir, SYSTEM) == \
        b"C=/c d\0X=1 # not a comment\0A=/again\0"
    said = said_at_mount(m)
    for line in (f"{conf}:6: invalid variable name '1B' (line skipped)",
                 f"{conf}:8: warning: the value of 'X' holds ' #', which is "
                 "part of it: varsym.conf has no end-of-line comments",
                 f"{conf}:9: warning: 'A' is set on line 3 too: this line "
                 "wins"):
        assert line in said, said
    assert "not mounted" not in said


def test_list_and_explain_show_a_skipped_line(varsymfs, varsym, public_dir):
    """The mount keeps no record of its load: `varsym list -s` and `varsym
    explain` read the file again and show the lines a load skips for the
    mount (list on standard error, after the values on standard output;
    explain under each variant link of the mount)."""
    conf = os.path.join(public_dir, "varsym.conf")
    where = os.path.join(public_dir, "m")
    os.mkdir(where)
    make_public(where)
    with open(conf, "w") as f:
        f.write(f"[{os.path.realpath(where)}]\nA=/a\n1B=/b\n[/else]\n2C=x\n")
    env = {"VARSYM_CONF": conf}
    m = varsymfs("", env=env, helper=True, where=where)
    note = f"{conf}:3: invalid variable name '1B' (line skipped)"
    p = vs(varsym, "list", "-s", m.dir, env={**PATH, **env})
    assert (p.out, p.err) == ("A=/a\n", f"varsym: {note}\n")
    # the user scope is not the file's: nothing said
    assert vs(varsym, "list", m.dir, env={**PATH, **env}).err == ""
    link = os.path.join(m.dir, "a")
    os.symlink("${A}", link)
    p = vs(varsym, "explain", "-i", link, env={**PATH, **env}, check=False)
    assert f"    conf      {note}\n" in p.out, p.out
    assert "2C" not in p.out + p.err
    # fixed in the file: nothing to say any more
    with open(conf, "w") as f:
        f.write(f"[{os.path.realpath(where)}]\nA=/a\n")
    p = vs(varsym, "explain", "-i", link, env={**PATH, **env}, check=False)
    assert "conf " not in p.out and p.err == ""


def test_an_unreadable_file_mounts_nothing(varsymfs, public_dir):
    """A file that cannot be read at all (here: a directory) is not a line:
    the mount fails, and says why."""
    where = os.path.join(public_dir, "m")
    os.mkdir(where)
    make_public(where)
    err = varsymfs("", env={"VARSYM_CONF": public_dir}, helper=True,
                   where=where, expect_failure=True)
    assert f"{public_dir}: Is a directory" in err, err
    from conftest import mounted_at
    assert mounted_at(where) is None


def test_load_makes_the_system_scope_the_file(varsymfs, varsym, public_dir):
    m = varsymfs("")
    conf = os.path.join(public_dir, "c.conf")
    vs(varsym, "set", "-s", m.dir, "OLD=/o", "A=/x")
    with open(conf, "w") as f:
        f.write(f"[{os.path.realpath(m.dir)}/]\nA=/a\nB=/b\n")
    vs(varsym, "load", "--config", conf, m.dir)
    assert os.getxattr(m.dir, SYSTEM) == b"A=/a\0B=/b\0"
    with open(conf, "a") as f:
        f.write("A=/again\nC\n@uid=1\nD=/d\n")
    p = vs(varsym, "load", "--config", conf, m.dir, check=False)
    assert p.returncode == 3, p.err
    assert p.err == (
        f"varsym: {conf}:4: warning: 'A' is set on line 2 too: this line wins\n"
        f"varsym: {conf}:5: NAME=VALUE expected (line skipped)\n"
        f"varsym: {conf}:6: '@uid' is a built-in name: nobody sets it "
        "(line skipped)\n")
    assert os.getxattr(m.dir, SYSTEM) == b"B=/b\0A=/again\0D=/d\0"
    # a NUL byte spoils its own line only: the file is read to its end
    with open(conf, "wb") as f:
        f.write(f"[{os.path.realpath(m.dir)}]\nA=/x\0y\nB=/b\n".encode())
    p = vs(varsym, "load", "--config", conf, m.dir, check=False)
    assert (p.returncode, p.err) == \
        (3, f"varsym: {conf}:2: a NUL byte (line skipped)\n")
    assert os.getxattr(m.dir, SYSTEM) == b"B=/b\0"


@pytest.mark.kernel_dependent
@needs_real_root
def test_user_namespace_mount_keeps_its_scopes(varsymfs, varsym, probe,
                                               impl, public_dir):
    """Root of a user namespace administers its own mount's system scope,
    which nothing outside sees, and cannot change the scope of a mount made
    outside, which it sees."""
    if impl != "kernel":
        pytest.skip("a mount made in a user namespace: the module's")
    outer = varsymfs("")
    os.symlink("${V:-/dflt}", os.path.join(outer.dir, "v"))
    vs(varsym, "set", "-s", outer.dir, "V=/outer")
    inner = os.path.join(public_dir, "inner")
    os.mkdir(inner)
    make_public(inner)
    script = textwrap.dedent(f"""
        set -e
        mount -t varsymfs none {inner}
        ln -s '${{V:-/dflt}}' {inner}/v
        {varsym} set -s {inner} V=/inner
        echo "inner $({probe.path} readlink {inner}/v)"
        echo "outer $({probe.path} readlink {outer.dir}/v)"
        if {varsym} set -s {outer.dir} V=/mine 2>/dev/null; then
            echo "outer changed"
        else
            echo "outer refused"
        fi
        """)
    p = run(["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
             "--clear-groups", "--", "/usr/bin/unshare", "--user",
             "--map-root-user", "--mount", "--propagation", "private",
             "/bin/sh", "-c", script], env=PATH)
    assert p.out.splitlines() == ["inner ok /inner", "outer ok /outer",
                                  "outer refused"], p.err
    assert probe.readlink(os.path.join(outer.dir, "v"), env={}) == \
        "ok /outer"
    assert os.getxattr(outer.dir, SYSTEM) == b"V=/outer\0"


# ---- varsym explain: which source answered ------------------------------------

def test_explain_names_each_source(varsymfs, varsym):
    m = varsymfs("")
    link = os.path.join(m.dir, "p")
    os.symlink("/o/${@machine}/${A:-a}/${B:-b}/${C:-c}/${D:-d}", link)
    vs(varsym, "set", "-s", m.dir, "B=sb", "C=sc")
    vs(varsym, "set", m.dir, "C=uc")
    out = vs(varsym, "explain", "-i", "--env", "A=ea", link,
             check=False).out
    machine = os.uname().machine
    assert f"v p -> /o/{machine}/ea/sb/uc/d\n" in out
    for line in (f"@machine = {machine}   (built-in)",
                 "A = ea   (from the environment)",
                 "B = sb   (from the system scope)",
                 "C = uc   (from the user scope)",
                 "D = d   (unset or empty: the default)"):
        assert line in out, out
    out = vs(varsym, "explain", "--secure", link, check=False).out
    assert f"v p -> /o/{machine}/a/sb/sc/d\n" in out, out


@pytest.mark.kernel_dependent
def test_explain_a_live_process(varsymfs, varsym, probe, public_dir):
    """--pid: that process's exec-time environment, AT_SECURE and user
    scope, as the file system answers it."""
    m = varsymfs("")
    link = os.path.join(m.dir, "p")
    os.symlink("/o/${A:-a}/${B:-b}", link)
    vs(varsym, "set", "-s", m.dir, "B=sb")
    if not IN_USERNS:
        vs(varsym, "set", m.dir, "B=nobody-b", user="nobody")
    sleeper = subprocess.Popen(
        ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
         "--clear-groups", "--", "/bin/sleep", "60"] if not IN_USERNS else
        ["/bin/sleep", "60"], env={"A": "from-env"})
    try:
        wait_for(lambda: open(f"/proc/{sleeper.pid}/comm").read() ==
                 "sleep\n", "the sleeper to run sleep")
        want = "/o/from-env/" + ("sb" if IN_USERNS else "nobody-b")
        out = vs(varsym, "explain", "--pid", sleeper.pid, link,
                 check=False).out
        assert f"v p -> {want}\n" in out, out
        assert "A = from-env   (from the environment)" in out, out
        if not IN_USERNS:
            assert "B = nobody-b   (from the user scope)" in out, out
            # and it is what that user's processes get
            assert probe.readlink(link, env={"A": "from-env"},
                                  user="nobody") == f"ok {want}"
            # another user may not read it: nobody's pid, by nobody's
            # neighbour
            p = run(["/usr/bin/python3", "-c",
                     f"import os; os.getxattr({m.dir!r}, "
                     f"'system.varsym_user.0')"], env=PATH, user="nobody")
            assert "Operation not permitted" in p.err, p.err
    finally:
        sleeper.kill()
        sleeper.wait()
    p = vs(varsym, "explain", "--pid", "1", "-i", link, check=False)
    assert p.returncode == 2 and "--pid explains that process" in p.err


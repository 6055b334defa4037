# SPDX-License-Identifier: GPL-2.0-only
"""The varsym command: `explain` walks a path as namei(1) does and says why
each variant link leads where it does; `show` prints a link's raw text.

The tool reads the interface both implementations give (the extended
attributes system.varsym_template and system.varsym_options), so it is run
against each.  Every tree is built under the real path of public_dir, so
that the expected walks hold no symbolic link but the tests' own.
"""
import os
import shutil
import types

import pytest

import conftest
from conftest import exec_mode, sanitizer_of

pytestmark = [pytest.mark.spec6]

PATH = {"PATH": "/usr/bin:/bin"}
EXEC_LINE = "    exec      "


def run(argv, **kwargs):
    """conftest.run, without the FUSE program's "exec" detail lines, which
    the module has not: test_explain_shows_how_execs_are_told_apart checks
    them."""
    p = conftest.run(argv, **kwargs)
    if len(argv) > 1 and argv[1] == "explain":
        p.out = "".join(line for line in p.out.splitlines(keepends=True)
                        if not line.lstrip(" ").startswith(EXEC_LINE.lstrip()))
    return p
PERL = "${PERL_VERSION:-5.22.1}"


@pytest.fixture
def varsym(build):
    path = os.path.join(build, "varsym")
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run make")
    return path


@pytest.fixture
def root(public_dir):
    return os.path.realpath(public_dir)


def pad(level):
    return " " * (2 * level + 1)


def walk(path, level):
    """namei's lines for an absolute path made only of directories."""
    parts = [p for p in path.split("/") if p]
    return [pad(level) + "d /"] + [pad(level) + "d " + p for p in parts]


def detail(level, text):
    return pad(level) + "    " + text


@pytest.fixture
def perl(varsymfs, root):
    """docs/SPEC.md's example: /usr/lib/perl5 -> .varsym/perl-lib -> a template
    into opt/perl/VERSION/lib, all under root."""
    for version in ("5.22.1", "5.24.0"):
        os.makedirs(os.path.join(root, "opt/perl", version, "lib"))
    os.makedirs(os.path.join(root, "usr/lib"))
    m = varsymfs("")
    template = f"{root}/opt/perl/{PERL}/lib"
    lnk = os.path.join(m.dir, "perl-lib")
    os.symlink(template, lnk)
    perl5 = os.path.join(root, "usr/lib/perl5")
    os.symlink(lnk, perl5)
    return types.SimpleNamespace(mount=m, link=lnk, path=perl5,
                                 template=template)


def expected_perl(p, root, version, why):
    """The whole explanation of p.path resolving to VERSION."""
    return "\n".join(
        [f"f: {p.path}"] + walk(os.path.dirname(p.path), 0) +
        [f" l perl5 -> {p.link}"] + walk(p.mount.dir, 1) +
        [f"   v perl-lib -> {root}/opt/perl/{version}/lib",
         detail(1, f"template  {p.template}"),
         detail(1, f"PERL_VERSION = {version}   ({why})")] +
        walk(f"{root}/opt/perl/{version}/lib", 2)) + "\n"


def test_explain_with_env(varsym, perl, root):
    p = run([varsym, "explain", "--env", "PERL_VERSION=5.24.0", perl.path],
            env=PATH)
    assert (p.returncode, p.err) == (0, "")
    assert p.out == expected_perl(perl, root, "5.24.0",
                                  "from the environment")


def test_explain_shows_the_versions_there_for_one_that_is_not(varsym, perl,
                                                               root):
    """A link that names a version not installed: the shell says only "No
    such file or directory" of a path that ls shows.  explain shows where
    the walk stopped and what that directory holds instead, in version
    order, at most eight names."""
    p = run([varsym, "explain", "--env", "PERL_VERSION=5.30.0", perl.path],
            env=PATH)
    assert p.returncode == 1, p.out + p.err
    lines = p.out.splitlines()
    assert lines[-2:] == [pad(2) + "5.30.0 - ENOENT: No such file or "
                          "directory",
                          detail(2, "there     5.22.1, 5.24.0")], p.out
    for minor in range(25, 35):
        os.makedirs(os.path.join(root, "opt/perl", f"5.{minor}.0"))
    p = run([varsym, "explain", "--env", "PERL_VERSION=5.9", perl.path],
            env=PATH)
    assert p.out.splitlines()[-1] == detail(
        2, "there     5.22.1, 5.24.0, 5.25.0, 5.26.0, 5.27.0, 5.28.0, "
        "5.29.0, 5.30.0, ... (12 in all)"), p.out


def test_explain_ignore_environment_takes_the_default(varsym, perl, root):
    env = dict(PATH, PERL_VERSION="5.24.0")
    for opt in ("-i", "--ignore-environment"):
        p = run([varsym, "explain", opt, perl.path], env=env)
        assert (p.returncode, p.err) == (0, "")
        assert p.out == expected_perl(perl, root, "5.22.1",
                                      "unset or empty: the default")
    # --env on top of -i, the last one given wins, as with env(1)
    p = run([varsym, "explain", "-i", "--env", "PERL_VERSION=9",
             "-e", "PERL_VERSION=5.24.0", perl.path], env=env)
    assert p.returncode == 0
    assert p.out == expected_perl(perl, root, "5.24.0",
                                  "from the environment")
    # an empty value counts as unset
    p = run([varsym, "explain", "--env=PERL_VERSION=", perl.path], env=env)
    assert p.returncode == 0
    assert "   (unset or empty: the default)" in p.out


def test_explain_env_overrides_own(varsym, perl, root):
    p = run([varsym, "explain", "--env", "PERL_VERSION=5.24.0", perl.path],
            env=dict(PATH, PERL_VERSION="5.22.1"))
    assert p.returncode == 0
    assert p.out == expected_perl(perl, root, "5.24.0",
                                  "from the environment")


def test_explain_own_environment_agrees_with_readlink(varsym, perl, root,
                                                      probe):
    for env, version, why in (
            ({"PERL_VERSION": "5.24.0"}, "5.24.0", "from the environment"),
            ({}, "5.22.1", "unset or empty: the default")):
        p = run([varsym, "explain", perl.path], env=env)
        assert (p.returncode, p.err) == (0, "")
        assert "WARNING" not in p.out
        assert p.out == expected_perl(perl, root, version, why)
        assert probe.readlink(perl.link, env=env) == \
            f"ok {root}/opt/perl/{version}/lib"


def test_explain_secure_ignores_the_environment(varsym, perl, root):
    p = run([varsym, "explain", "--secure", perl.path],
            env=dict(PATH, PERL_VERSION="5.24.0"))
    assert p.returncode == 0
    assert p.out == expected_perl(
        perl, root, "5.22.1",
        "ignored: secure-exec (setuid) process: the default")


def test_explain_unset_without_default(varsym, varsymfs):
    m = varsymfs("")
    lnk = os.path.join(m.dir, "a")
    os.symlink("${A}", lnk)
    want = [f"f: {lnk}"] + walk(m.dir, 0) + [
        " v a",
        detail(0, "template  ${A}"),
        detail(0, "A   (unset or empty, no default)"),
        detail(0, "ENOENT: No such file or directory "
                  "(a variable is unset or empty, no default)")]
    for argv, env in ((["-i"], {"A": "/x"}), ([], {}),
                      (["--env", "A="], {"A": "/x"})):
        p = run([varsym, "explain"] + argv + [lnk], env=env)
        assert p.returncode == 1, p.out
        assert p.out.splitlines() == want
        assert "WARNING" not in p.out
    p = run([varsym, "explain", "--secure", "--env", "A=/x", lnk], env={})
    assert p.returncode == 1
    assert detail(0, "A   (ignored: secure-exec (setuid) process, "
                     "no default)") in p.out.splitlines()
    assert "EACCES: Permission denied" in p.out


def test_explain_nested_defaults(varsym, varsymfs, root):
    os.makedirs(os.path.join(root, "c/d"))
    m = varsymfs("")
    lnk = os.path.join(m.dir, "d")
    template = f"{root}/${{A:-${{B:-c}}}}/d"
    os.symlink(template, lnk)
    p = run([varsym, "explain", "-i", lnk], env={})
    assert p.returncode == 0
    lines = p.out.splitlines()
    v = lines.index(f" v d -> {root}/c/d")
    assert lines[v + 1:] == [
        detail(0, f"template  {template}"),
        detail(0, "B = c   (unset or empty: the default)"),
        detail(0, "A = c   (unset or empty: the default)")] + \
        walk(f"{root}/c/d", 1)
    p = run([varsym, "explain", "-i", "--env", "B=att", lnk], env={})
    assert p.returncode == 1
    assert detail(0, "B = att   (from the environment)") in p.out
    assert detail(0, "A = att   (unset or empty: the default)") in p.out
    # where the template chooses: what is there instead of att
    assert p.out.splitlines()[-2:] == [
        pad(1) + "att - ENOENT: No such file or directory",
        detail(1, f"there     c, {os.path.basename(m.dir)}")], p.out
    p = run([varsym, "explain", "-i", "--env", "A=c", lnk], env={})
    assert p.returncode == 0
    assert detail(0, "A = c   (from the environment)") in p.out
    assert "B = " not in p.out


def test_explain_shows_a_variable_named_twice_once(varsym, varsymfs, root):
    """A template may name a variable twice, as
    /opt/python/${V}/bin/python${V} does: explain shows it once; the same
    name with another default is another line."""
    os.makedirs(os.path.join(root, "v3.9/x3.9"))
    m = varsymfs("")
    lnk = os.path.join(m.dir, "py")
    template = f"{root}/v${{V:-3.11}}/x${{V:-3.11}}"
    os.symlink(template, lnk)
    p = run([varsym, "explain", "-i", "--env", "V=3.9", lnk], env={})
    assert p.returncode == 0, p.out + p.err
    lines = p.out.splitlines()
    v = lines.index(f" v py -> {root}/v3.9/x3.9")
    assert lines[v + 1:v + 3] == [
        detail(0, f"template  {template}"),
        detail(0, "V = 3.9   (from the environment)")]
    assert p.out.count("V = ") == 1
    os.unlink(lnk)
    os.symlink(f"{root}/v${{V:-3.9}}/x${{V:-3.11}}", lnk)
    p = run([varsym, "explain", "-i", lnk], env={})
    assert detail(0, "V = 3.9   (unset or empty: the default)") in p.out
    assert detail(0, "V = 3.11   (unset or empty: the default)") in p.out


def test_explain_literal_dollar(varsym, varsymfs, root):
    """"$$" is a literal "$": no variable is consulted."""
    os.makedirs(os.path.join(root, "${A}"))
    m = varsymfs("")
    lnk = os.path.join(m.dir, "n")
    os.symlink(f"{root}/$${{A}}", lnk)
    p = run([varsym, "explain", "--env", "A=x", lnk], env={})
    assert p.returncode == 0
    lines = p.out.splitlines()
    v = lines.index(f" v n -> {root}/${{A}}")
    assert lines[v + 1:] == [detail(0, f"template  {root}/$${{A}}")] + \
        walk(root, 1) + ["   d ${A}"]


@pytest.fixture
def seed(varsymfs, universes, root):
    return varsymfs(f"UNIVERSE,prefix={root}/,default=ucb")


def test_explain_seed(varsym, seed, root):
    options = f"var=UNIVERSE,prefix={root}/,default=ucb"
    path = seed.link + "/bin/prog"
    for argv, name, why in (
            (["--env", "UNIVERSE=att"], "att", "from the environment"),
            (["-i"], "ucb", "unset or empty: the default")):
        p = run([varsym, "explain"] + argv + [path], env=PATH)
        assert (p.returncode, p.err) == (0, "")
        assert p.out == "\n".join(
            [f"f: {path}"] + walk(seed.dir, 0) +
            [f" v resolve -> {root}/{name}",
             detail(0, f"options   {options}"),
             detail(0, f"UNIVERSE = {name}   ({why})")] +
            walk(f"{root}/{name}", 1) + [" d bin", " - prog"]) + "\n"


def test_explain_seed_refuses_dotdot(varsym, seed, root, probe):
    path = seed.link + "/bin"
    p = run([varsym, "explain", "--env", "UNIVERSE=../etc", path], env=PATH)
    assert p.returncode == 1
    assert p.out.splitlines()[-4:] == [
        " v resolve",
        detail(0, f"options   var=UNIVERSE,prefix={root}/,default=ucb"),
        detail(0, "UNIVERSE = ../etc   (refused: '..' under a prefix)"),
        detail(0, "EACCES: Permission denied "
                  "(a '..' component of a value under a prefix)")]
    # the tool's own environment gives the same, and so does readlink(2)
    p2 = run([varsym, "explain", path], env={"UNIVERSE": "../etc"})
    assert (p2.returncode, p2.out) == (1, p.out)
    assert probe.readlink(seed.link, env={"UNIVERSE": "../etc"}) == \
        "err EACCES"


def test_explain_seed_secure(varsym, seed, root):
    p = run([varsym, "explain", "--secure", "--env", "UNIVERSE=att",
             seed.link + "/bin/only-ucb"], env=PATH)
    assert p.returncode == 0
    assert detail(0, "UNIVERSE = ucb   (ignored: secure-exec (setuid) "
                     "process: the default)") in p.out.splitlines()
    assert p.out.splitlines()[-2:] == [" d bin", " - only-ucb"]


def test_explain_plain_paths(varsym, root):
    os.makedirs(os.path.join(root, "a/b"))
    open(os.path.join(root, "a/file"), "w").close()
    os.symlink("a/b", os.path.join(root, "rel"))
    os.symlink("loop2", os.path.join(root, "loop1"))
    os.symlink("loop1", os.path.join(root, "loop2"))
    os.symlink("missing", os.path.join(root, "dangling"))
    up = walk(root, 0)

    p = run([varsym, "explain", root + "/rel/../file"], env={})
    assert p.returncode == 0
    assert p.out.splitlines() == [f"f: {root}/rel/../file"] + up + [
        " l rel -> a/b", "   d a", "   d b", " d ..", " - file"]
    p = run([varsym, "explain", root + "/a/nothing/x"], env={})
    assert p.returncode == 1
    assert p.out.splitlines()[-1] == \
        " nothing - ENOENT: No such file or directory"
    p = run([varsym, "explain", root + "/a/file/"], env={})
    assert p.returncode == 1
    assert p.out.splitlines()[-1] == " file - ENOTDIR: Not a directory"
    p = run([varsym, "explain", root + "/dangling"], env={})
    assert p.returncode == 1
    assert p.out.splitlines()[-2:] == [
        " l dangling -> missing", "   missing - ENOENT: No such file or "
        "directory"]
    p = run([varsym, "explain", root + "/loop1"], env={})
    assert p.returncode == 1
    lines = p.out.splitlines()
    assert lines[-1].endswith(" - ELOOP: Too many levels of symbolic links")
    assert sum(" l loop" in line for line in lines) == 40
    # relative to the current directory
    p = run(["/bin/sh", "-c", f"cd {root} && exec {varsym} explain -i rel"],
            env={})
    assert p.returncode == 0
    assert p.out.splitlines() == ["f: rel", " l rel -> a/b", "   d a",
                                  "   d b"]


def test_show(varsym, varsymfs, seed, root, public_dir):
    m = varsymfs("")
    for name, template in (("perl-lib", f"/opt/perl/{PERL}/lib"),
                           ("cost", "/cost/$$5/${A:-${B:-/c}}/$x$"),
                           ("rel", "x/${B}")):
        lnk = os.path.join(m.dir, name)
        os.symlink(template, lnk)
        p = run([varsym, "show", lnk], env={})
        assert (p.returncode, p.out, p.err) == (0, template + "\n", "")
    p = run([varsym, "show", seed.link], env={"UNIVERSE": "att"})
    assert (p.returncode, p.out) == \
        (0, f"var=UNIVERSE,prefix={root}/,default=ucb\n")
    # an ordinary link, and a relative one to it: the variant link's text
    plain = os.path.join(public_dir, "plain")
    os.symlink(lnk, plain)
    os.symlink("plain", os.path.join(public_dir, "plain2"))
    for path in (plain, os.path.join(public_dir, "plain2")):
        p = run([varsym, "show", path], env={})
        assert (p.returncode, p.out, p.err) == (0, "x/${B}\n", ""), path
    regular = os.path.join(public_dir, "regular")
    open(regular, "w").close()
    os.symlink("regular", os.path.join(public_dir, "to-regular"))
    os.symlink("loop", os.path.join(public_dir, "loop"))
    for path in (regular, os.path.join(public_dir, "to-regular"),
                 os.path.join(public_dir, "missing"),
                 os.path.join(public_dir, "loop"), m.dir):
        p = run([varsym, "show", path], env={})
        assert p.returncode == 1, path
        assert p.out == "" and p.err.startswith("varsym: "), (path, p.err)


def test_usage(varsym, root):
    for argv in ([], ["explain"], ["explain", "-x", root],
                 ["explain", "--bogus", root], ["explain", "--env"],
                 ["explain", "--env", "NOEQUALS", root],
                 ["explain", "--env", "=v", root],
                 ["explain", root, root], ["show"], ["show", root, root],
                 ["frobnicate"]):
        p = run([varsym] + argv, env={})
        assert p.returncode == 2, argv
        assert p.out == "" and p.err.startswith("varsym: "), argv
    p = run([varsym, "--help"], env={})
    assert p.returncode == 0 and "Exit status" in p.out
    assert "explain" in p.out and "show" in p.out
    p = run([varsym, "--version"], env={})
    assert p.returncode == 0 and p.out.startswith("varsym version ")


def test_warning_when_readlink_disagrees(varsym, perl, root, public_dir):
    """A preloaded library changes the tool's environ after exec: the
    rules then give 5.24.0 while the file system (which reads the
    exec-time environment) gives the default.  The tool must say so and
    walk on with the file system's answer."""
    cc = shutil.which("cc", path="/usr/bin:/bin")
    if not cc:
        pytest.skip("no C compiler for the preloaded library")
    if sanitizer_of(varsym) == "AddressSanitizer":
        pytest.skip("AddressSanitizer must come first: no LD_PRELOAD")
    src = os.path.join(public_dir, "pre.c")
    lib = os.path.join(public_dir, "pre.so")
    with open(src, "w") as f:
        f.write("#include <stdlib.h>\n"
                "__attribute__((constructor)) static void f(void)\n"
                "{ setenv(\"PERL_VERSION\", \"5.24.0\", 1); }\n")
    run([cc, "-shared", "-fPIC", "-o", lib, src], env=PATH, check=True)
    p = run([varsym, "explain", perl.path], env={"LD_PRELOAD": lib})
    assert p.returncode == 0
    lines = p.out.splitlines()
    assert detail(1, "WARNING   readlink(2) gives  "
                     f"{root}/opt/perl/5.22.1/lib") in lines
    assert detail(1, "          the rules give     "
                     f"{root}/opt/perl/5.24.0/lib") in lines
    assert lines[-3:] == walk(f"{root}/opt/perl/5.22.1/lib", 2)[-3:]
    assert "varsym: warning" in p.err


def test_long_seed_options(varsym, varsymfs):
    """Long options text (near what one page of mount data carries) is
    shown and used whole."""
    prefix = "/" + ("x" * 99 + "/") * 19
    default = "d" * 1990
    m = varsymfs(f"UNIVERSE,prefix={prefix},default={default}")
    options = f"var=UNIVERSE,prefix={prefix},default={default}"
    assert len(options) > 3900
    p = run([varsym, "show", m.link], env={})
    assert (p.returncode, p.out) == (0, options + "\n")
    p = run([varsym, "explain", "-i", m.link], env={})
    assert p.returncode == 1
    lines = p.out.splitlines()
    assert lines[-5:] == [
        f" v resolve -> {prefix}{default}",
        detail(0, f"options   {options}"),
        detail(0, f"UNIVERSE = {default}   (unset or empty: the default)"),
        pad(1) + "d /",
        pad(1) + "x" * 99 + " - ENOENT: No such file or directory"]


def test_explain_shows_how_execs_are_told_apart(varsym, varsymfs, root):
    """A FUSE mount that cannot tell the walks inside an execve apart (no
    exec hooks: its links' system.varsym_exec says "syscall only") is
    explained once, under the first of its links the walk meets, in plain
    words: what breaks, what fixes it, and why.  The module, and a FUSE
    mount with its exec hooks or serving only its owner, need no such line
    (issue 33, item 9: not a jargon line under every link)."""
    m = varsymfs("")
    target = os.path.join(root, "t")
    os.mkdir(target)
    os.symlink(target, os.path.join(m.dir, "a"))
    os.symlink(os.path.join(m.dir, "a"), os.path.join(m.dir, "b"))
    p = conftest.run([varsym, "explain", os.path.join(m.dir, "b")], env=PATH)
    assert p.returncode == 0, p.out + p.err
    lines = [line for line in p.out.splitlines()
             if line.lstrip(" ").startswith("exec ")]
    mode = exec_mode(m)
    assert mode in ("kernel", "exec hooks", "syscall only", "owner only")
    if mode != "syscall only":
        assert lines == [], p.out
        return
    said = os.getxattr(os.path.join(m.dir, "a"), "system.varsym_exec",
                       follow_symlinks=False).decode()
    why = said[said.index("(") + 1:-1]
    assert lines == [
        detail(0, "exec      programs run through this mount get the "
               "default's target, as a setuid program would, whatever the "
               "caller's environment says: "
               "fixed by the kernel's BPF LSM or the kernel module "
               "(varsymfs(8))"),
        detail(0, f"exec      why: {why}")], p.out


# SPDX-License-Identifier: GPL-2.0-only
"""docs/SPEC.md sections 1 and 6: the seed mount and what its link gives."""
import os
import stat

import pytest

pytestmark = [pytest.mark.spec1]


def test_root_holds_exactly_one_link(varsymfs):
    m = varsymfs("UNIVERSE")
    assert sorted(os.listdir(m.dir)) == ["resolve"]
    st = os.lstat(m.dir)
    assert stat.S_ISDIR(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0o555
    assert stat.S_ISLNK(os.lstat(m.link).st_mode)


# (options, environment, expected readlink: "ok TARGET" or "err ERRNO")
RESULTS = [
    ("UNIVERSE", {"UNIVERSE": "/att"}, "ok /att"),
    ("var=UNIVERSE", {"UNIVERSE": "/att"}, "ok /att"),
    ("UNIVERSE", {}, "err ENOENT"),
    ("UNIVERSE", {"UNIVERSE": ""}, "err ENOENT"),
    ("UNIVERSE", {"OTHER": "/att"}, "err ENOENT"),
    ("UNIVERSE,default=/ucb", {}, "ok /ucb"),
    ("UNIVERSE,default=/ucb", {"UNIVERSE": ""}, "ok /ucb"),
    ("UNIVERSE,default=/ucb", {"UNIVERSE": "/att"}, "ok /att"),
    ("UNIVERSE,prefix=/universes/", {"UNIVERSE": "att"}, "ok /universes/att"),
    ("UNIVERSE,prefix=/universes/,default=ucb", {}, "ok /universes/ucb"),
    ("UNIVERSE,prefix=/universes/,default=ucb", {"UNIVERSE": "att"},
     "ok /universes/att"),
    ("UNIVERSE,prefix=/universes/", {"UNIVERSE": "../etc"}, "err EACCES"),
    ("UNIVERSE,prefix=/universes/", {"UNIVERSE": "att/../../etc"}, "err EACCES"),
    ("UNIVERSE,prefix=/universes/", {"UNIVERSE": ".."}, "err EACCES"),
    ("UNIVERSE,prefix=/universes/,default=ucb", {"UNIVERSE": "../etc"},
     "err EACCES"),
    ("UNIVERSE,prefix=/universes/", {"UNIVERSE": "..att"}, "ok /universes/..att"),
    ("UNIVERSE,prefix=/universes/.", {"UNIVERSE": "./etc"}, "err EACCES"),
    ("UNIVERSE", {"UNIVERSE": "../etc"}, "ok ../etc"),
    ("UNIVERSE", {"UNIVERSE": "relative/path"}, "ok relative/path"),
]


@pytest.mark.parametrize("options,env,expected", RESULTS,
                         ids=[f"{o}|{e}" for o, e, _ in RESULTS])
def test_results(varsymfs, probe, options, env, expected):
    m = varsymfs(options)
    assert probe.readlink(m.link, env=env) == expected


def test_first_entry_wins(varsymfs, probe):
    m = varsymfs("UNIVERSE")
    line = probe("exec", "UNIVERSE=/first", "UNIVERSE=/second", "--",
                 probe.path, "readlink", m.link)
    assert line == "ok /first"


def test_entries_without_equals_and_binary_bytes(varsymfs, probe):
    m = varsymfs("UNIVERSE")
    line = probe("exec", "UNIVERSE", "UNIVERSEX=/no", "\x01\x02junk",
                 "UNIVERSE=/yes", "--", probe.path, "readlink", m.link)
    assert line == "ok /yes"
    # a value with bytes that are not UTF-8 comes back byte for byte
    import subprocess
    out = subprocess.run([probe.path, "readlink", m.link],
                         env={b"UNIVERSE": b"/tmp/\xff\xfe"},
                         capture_output=True).stdout
    assert out == b"ok /tmp/\xff\xfe\n"


@pytest.mark.parametrize("prefix", ["", "/p/"])
def test_path_max(varsymfs, probe, prefix):
    """A result of PATH_MAX - 1 bytes resolves; one byte more is ENAMETOOLONG."""
    m = varsymfs("V" + (f",prefix={prefix}" if prefix else ""))
    fits = "/" + "x" * (4095 - len(prefix) - 1)
    assert len(prefix + fits) == 4095
    assert probe.readlink(m.link, env={"V": fits}) == "ok " + prefix + fits
    assert probe.readlink(m.link, env={"V": fits + "y"}) == "err ENAMETOOLONG"
    assert probe.readlink(m.link, env={"V": "z" * 100000}) == "err ENAMETOOLONG"


def test_default_too_long_with_prefix_is_refused_at_mount(varsymfs, impl):
    if impl == "kernel":
        pytest.skip("the kernel takes one page of mount(2) options, and "
                    "fsconfig(2) values of 256 bytes: the limit is out of reach")
    err = varsymfs("V,prefix=/" + "p" * 3000 + ",default=" + "d" * 1200,
                   expect_failure=True)
    if impl == "fuse":
        assert "together are longer than PATH_MAX - 1 bytes" in err


def test_long_options(varsymfs, probe):
    """A prefix and a default of 2000 bytes each: mounted, shown whole."""
    prefix, default = "/" + "p" * 1999, "d" * 2000
    m = varsymfs(f"V,prefix={prefix},default={default}")
    assert probe.readlink(m.link, env={}) == "ok " + prefix + default
    assert os.getxattr(m.link, "system.varsym_options",
                       follow_symlinks=False).decode() == \
        f"var=V,prefix={prefix},default={default}"


def test_variable_after_a_megabyte(varsymfs, probe):
    m = varsymfs("UNIVERSE")
    env = {f"FILLER{i}": "f" * 100000 for i in range(11)}
    env["UNIVERSE"] = "/found"
    assert sum(len(k) + len(v) + 2 for k, v in env.items()) > 1 << 20
    assert probe.readlink(m.link, env=env) == "ok /found"


def test_lstat_size(varsymfs, probe, impl):
    """docs/SPEC.md section 6: the kernel gives each caller its own target's length (0 when
    it does not resolve); FUSE always 0, since the kernel keeps one size per
    FUSE inode for all callers.  Alternating callers, so that a size kept
    from the previous one would show."""
    m = varsymfs("UNIVERSE")
    for value in ("/att", "/a/much/longer/universe", "/att", None):
        env = {"UNIVERSE": value} if value else {}
        size = int(probe("lstat", m.link, env=env).split()[1])
        want = len(value) if impl == "kernel" and value else 0
        assert size == want, (value, size)


def test_directory_cannot_change(varsymfs, probe):
    """Even root cannot add, remove or rename entries in the seed directory."""
    m = varsymfs("UNIVERSE")
    target = os.path.join(m.dir, "new")
    for action in (lambda: os.mkdir(target),
                   lambda: os.symlink("/x", target),
                   lambda: os.unlink(m.link),
                   lambda: os.rename(m.link, target),
                   lambda: os.link(m.link, target),
                   lambda: os.mknod(target, 0o600 | stat.S_IFIFO),
                   lambda: open(target, "w")):
        with pytest.raises(PermissionError):
            action()
    with pytest.raises(PermissionError):
        os.chmod(m.dir, 0o777)
    assert sorted(os.listdir(m.dir)) == ["resolve"]


# SPDX-License-Identifier: GPL-2.0-only
"""The shipped examples as systemd reads them.  That they mount and make
their links is in_guest.py's job (mount(8), systemd-tmpfiles, and
systemd-modules-load with the kernel module)."""
import os
import shutil

from conftest import REPO, sh

EXAMPLES = os.path.join(REPO, "examples")
UNIT = os.path.join(EXAMPLES, "systemd", "universe.mount")


def test_mount_unit_verifies(built_source, tmp_path):
    """systemd-analyze verify, offline, under the name systemd wants: the
    escaped mount point.  Its Documentation= page must be found, so the
    man pages are installed (DESTDIR) and put on MANPATH."""
    name = sh(["systemd-escape", "-p", "--suffix=mount", "/.universe"]).out.strip()
    assert name == "\\x2euniverse.mount"
    with open(UNIT) as f:
        assert name in f.read(), "the example says which name to give it"
    unit = tmp_path / "units" / name
    unit.parent.mkdir()
    shutil.copy(UNIT, unit)
    dest = tmp_path / "dest"
    sh(["make", "-C", built_source, "install", f"DESTDIR={dest}"])
    p = sh(["systemd-analyze", "verify", str(unit)], check=False,
           env={"PATH": "/usr/bin:/bin", "MANPATH": f"{dest}/usr/local/share/man"})
    assert p.returncode == 0 and p.err == "", f"{p.cmd}:\n{p.err}"


def test_mount_unit_is_the_documented_one():
    """varsymfs(5) shows the same [Mount] section."""
    with open(UNIT) as f:
        unit = f.read().split("[Mount]")[1].split("[")[0].strip()
    with open(os.path.join(REPO, "man", "varsymfs.5")) as f:
        page = f.read().replace("\\-", "-")
    assert "[Mount]\n" + unit + "\n" in page


def test_tmpfiles_example_is_the_documented_one():
    """README.md and varsymfs(5) show the very lines of the shipped file."""
    conf = os.path.join(EXAMPLES, "tmpfiles.d", "varsym.conf")
    with open(conf) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert lines and all(line.startswith("L /.varsym/") for line in lines)
    for doc in ("README.md", "man/varsymfs.5"):
        with open(os.path.join(REPO, doc)) as f:
            text = f.read().replace("\\-", "-")
        for line in lines:
            assert line in text, f"{doc} lacks: {line}"


def test_modules_load_example_names_the_module():
    with open(os.path.join(EXAMPLES, "modules-load.d", "varsymfs.conf")) as f:
        lines = [line.strip() for line in f if line.strip() and not line.startswith("#")]
    assert lines == ["varsymfs"]

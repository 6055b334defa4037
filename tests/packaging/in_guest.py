# SPDX-License-Identifier: GPL-2.0-only
"""Inside a guest (test_dkms.py runs this file through scripts/vm-run
--no-module, while the module is installed by DKMS on the host, whose
/lib/modules the guest sees): varsymfs set up as a system sets it up.

- the DKMS module is loaded by `mount -t varsymfs` through its fs-varsymfs
  alias, or by systemd-modules-load from the shipped modules-load.d file;
- every fstab line of the docs and examples mounts with mount(8), the
  shipped systemd unit's What/Where/Type/Options mount, the shipped
  tmpfiles.d file makes its links;
- `make install` into /usr/local (a tmpfs here: the guest's root is the
  host's, read-only) puts varsymfs where mount.fuse3 finds it;
- part of the conformance suite runs against the DKMS module.

Not collected by a plain `pytest tests/packaging` (its name does not start
with test_): it only makes sense inside such a guest.
"""
import os
import re

import pytest

from conftest import (REPO, Failed, fstab_lines, mount_point, mounted_at,
                      render_man, run, sh, umount, wait_for)

KVER = os.environ.get("VARSYMFS_KERNEL", "")
SYS_MODULE = "/sys/module/varsymfs"
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}

pytestmark = pytest.mark.skipif(not os.environ.get("VARSYMFS_GUEST"),
                                reason="runs inside scripts/vm-run only")


def loaded():
    return os.path.exists(SYS_MODULE)


def unload():
    if loaded():
        sh(["rmmod", "varsymfs"])
    assert not loaded()


def mount(argv):
    """mount(8) as boot does it: an empty environment, so mount.fuse3's
    shell searches only its default PATH for the FUSE program."""
    return run(["/usr/bin/mount"] + argv, env={})


@pytest.fixture(scope="module")
def source(request):
    src = request.config.getoption("--source")
    assert src and os.path.exists(os.path.join(src, "build", "varsymfs")), \
        "--source must be a built copy of the tree"
    return src


SBIN = "/usr/sbin"     # /sbin, where mount(8) runs helpers from


@pytest.fixture(scope="module")
def installed(source):
    """`make install` for real: PREFIX=/usr/local, on a tmpfs; and the
    mount helper in /sbin, here a writable copy of the host's (the guest's
    root is the host's, read-only), bound over it."""
    sh(["mount", "-t", "tmpfs", "-o", "mode=755", "tmpfs", "/usr/local"])
    copy = "/run/sbin-copy"
    sh(["cp", "-a", SBIN + "/.", copy])
    sh(["mount", "--bind", copy, SBIN])
    try:
        before = sorted(os.listdir(SBIN))
        sh(["make", "-C", source, "install"])
        yield "/usr/local"
        sh(["make", "-C", source, "uninstall"])
        left = [os.path.join(d, f) for d, _, files in os.walk("/usr/local") for f in files]
        assert not left, f"make uninstall left {left}"
        assert sorted(os.listdir(SBIN)) == before, "make uninstall left /sbin as it was not"
    finally:
        # a daemon unmounted a moment ago may still be running from there
        wait_for(lambda: not running_from("/usr/local/"), "daemons to exit")
        sh(["umount", "/usr/local"])
        sh(["umount", SBIN])
        sh(["rm", "-rf", copy])


def running_from(prefix):
    """Programs of running processes that lie under prefix."""
    exes = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            exes.add(os.readlink(f"/proc/{pid}/exe"))
        except OSError:
            pass
    return {e for e in exes if e.startswith(prefix)}


@pytest.fixture
def where(tmp_path):
    d = mount_point(str(tmp_path))
    yield d
    umount(d)


def check_mount(where, fstype, options, probe):
    """What is mounted at where answers as its options say."""
    line = mounted_at(where)
    assert line, f"nothing mounted at {where}"
    assert line.split(" - ")[1].split()[0] == fstype
    if "UNIVERSE" in options:
        link = os.path.join(where, "resolve")
        assert probe.readlink(link, env={"UNIVERSE": "/att"}) == "ok /att"
        if "default=/ucb" in options:
            assert probe.readlink(link, env={}) == "ok /ucb"
    elif options.startswith("search"):
        # the caller's PATH, then the fallback (a NixOS path: not here)
        link = os.path.join(where, "sh")
        assert probe.readlink(link, env={"PATH": "/nonexistent:/usr/bin"}) == \
            "ok /usr/bin/sh"
        assert probe.readlink(link, env={}) == "err ENOENT"
    else:
        link = os.path.join(where, "bin")
        os.symlink("/opt/${UNIVERSE:-ucb}/bin", link)
        assert probe.readlink(link, env={"UNIVERSE": "att"}) == "ok /opt/att/bin"


# ---- the module, loaded the ways a system loads it ---------------------------

def test_module_is_not_loaded_at_boot():
    assert KVER == os.uname().release
    assert not loaded()


def test_modprobe_finds_the_dkms_module():
    p = sh(["modinfo", "-n", "varsymfs"])
    assert re.fullmatch(rf"/lib/modules/{re.escape(KVER)}/updates/dkms/varsymfs\.ko(\.xz)?\n",
                        p.out), p.out
    # what the kernel's request_module("fs-varsymfs") makes modprobe load
    p = sh(["modprobe", "--show-depends", "fs-varsymfs"])
    last = p.out.strip().splitlines()[-1].strip()
    assert last == "insmod " + sh(["modinfo", "-n", "varsymfs"]).out.strip()


def test_mount_loads_the_module_by_its_alias(where, probe):
    unload()
    p = run(["mount", "-t", "varsymfs", "-o", "UNIVERSE,default=/ucb", "none", where],
            env=ENV)
    assert p.returncode == 0, f"{p.cmd}: {p.err}"
    assert loaded()
    check_mount(where, "varsymfs", "UNIVERSE,default=/ucb", probe)
    umount(where)
    unload()


def test_modules_load_d_file_loads_it():
    unload()
    conf = os.path.join(REPO, "examples", "modules-load.d", "varsymfs.conf")
    sh(["/lib/systemd/systemd-modules-load", conf])
    assert loaded()


# ---- mounting as people do --------------------------------------------------

def doc_fstab_lines():
    """Every fstab line for varsymfs in the docs and the examples."""
    texts = {}
    for f in ("README.md", "examples/fstab"):
        with open(os.path.join(REPO, f)) as fh:
            texts[f] = fh.read()
    for page in ("varsymfs.5", "varsymfs.8"):
        texts["man/" + page] = render_man(os.path.join(REPO, "man", page))
    return [(f, line) for f, text in texts.items() for line in fstab_lines(text)]


FSTAB = doc_fstab_lines()


def test_the_docs_have_fstab_lines_of_both_kinds():
    kinds = {(f, line[2]) for f, line in FSTAB}
    for f in ("README.md", "examples/fstab", "man/varsymfs.5"):
        assert {(f, "varsymfs"), (f, "fuse.varsymfs")} <= kinds, f


@pytest.mark.parametrize("doc,line", FSTAB, ids=[f"{f}:{' '.join(l)}" for f, l in FSTAB])
def test_fstab_line(doc, line, where, probe, request, tmp_path):
    spec, _, fstype, options = line
    if fstype == "fuse.varsymfs":
        request.getfixturevalue("installed")
    fstab = tmp_path / "fstab"
    fstab.write_text(f"{spec} {where} {fstype} {options} 0 0\n")
    p = mount(["-T", str(fstab), where])
    assert p.returncode == 0, f"{doc}: {' '.join(line)}: {p.err}"
    check_mount(where, fstype, options, probe)


FSTAB_WORDS = ["defaults,noauto,nofail,_netdev,x-systemd.automount",
               "UNIVERSE,defaults,nofail,x-systemd.device-timeout=5,default=/ucb"]


@pytest.mark.parametrize("fstype", ["varsymfs", "fuse.varsymfs"])
@pytest.mark.parametrize("options", FSTAB_WORDS)
def test_fstab_only_words_are_no_variables(fstype, options, where, probe, request, tmp_path):
    """Words that only fstab and systemd use, which varsymfs(5) lists as
    never being variables, do not stop either implementation mounting."""
    if fstype == "fuse.varsymfs":
        request.getfixturevalue("installed")
    fstab = tmp_path / "fstab"
    fstab.write_text(f"none {where} {fstype} {options} 0 0\n")
    p = mount(["-T", str(fstab), where])
    assert p.returncode == 0, f"{fstype} {options}: {p.err}"
    check_mount(where, fstype, options, probe)


def unit_settings():
    with open(os.path.join(REPO, "examples", "systemd", "universe.mount")) as f:
        text = f.read()
    section = text.split("[Mount]")[1].split("[")[0]
    return dict(re.findall(r"^(\w+)=(.*)$", section, re.M))


@pytest.mark.parametrize("fstype", ["as written", "fuse.varsymfs"])
def test_systemd_unit(fstype, where, probe, request):
    """What systemd does for the unit: mount -t Type -o Options What Where
    (Where is a scratch directory here)."""
    unit = unit_settings()
    assert unit["Where"] == "/.universe"
    if fstype == "as written":
        fstype = unit["Type"]
        assert fstype == "varsymfs"
    else:
        request.getfixturevalue("installed")
    p = mount(["-t", fstype, "-o", unit["Options"], unit["What"], where])
    assert p.returncode == 0, f"{p.cmd}: {p.err}"
    check_mount(where, fstype, unit["Options"], probe)


@pytest.mark.parametrize("fstype", ["varsymfs", "fuse.varsymfs"])
def test_tmpfiles_example_makes_its_links(fstype, tmp_path, probe, request):
    """The shipped tmpfiles.d file, as written, into a template-mode mount
    at ROOT/.varsym (systemd-tmpfiles --root=ROOT)."""
    if fstype == "fuse.varsymfs":
        request.getfixturevalue("installed")
    root = str(tmp_path)
    os.chmod(root, 0o755)
    where = os.path.join(root, ".varsym")
    os.mkdir(where)
    try:
        p = mount(["-t", fstype, "none", where])
        assert p.returncode == 0, f"{p.cmd}: {p.err}"
        conf = os.path.join(REPO, "examples", "tmpfiles.d", "varsym.conf")
        sh(["systemd-tmpfiles", f"--root={root}", "--create", conf])
        assert sorted(os.listdir(where)) == ["bin", "perl-lib"]
        perl = os.path.join(where, "perl-lib")
        assert probe.readlink(perl, env={"PERL_VERSION": "5.24.0"}) == "ok /opt/perl/5.24.0/lib"
        assert probe.readlink(perl, env={}) == "ok /opt/perl/5.22.1/lib"
        assert os.getxattr(perl, "system.varsym_template", follow_symlinks=False) == \
            b"/opt/perl/${PERL_VERSION:-5.22.1}/lib"
    finally:
        umount(where)


# ---- installed from source ----------------------------------------------------

def test_make_install_as_readme_says(installed, where, probe):
    user = {"PATH": "/usr/local/bin:/usr/bin:/bin"}
    p = sh(["varsym", "--version"], env=user)
    assert p.out.startswith("varsym version")
    for page in sorted(os.listdir(os.path.join(REPO, "man"))):
        name, section = page.rsplit(".", 1)
        p = sh(["man", "-w", section, name], env=user)
        assert p.out.strip() == f"/usr/local/share/man/man{section}/{name}.{section}"
    p = mount(["-t", "fuse.varsymfs", "-o", "UNIVERSE", "none", where])
    assert p.returncode == 0, f"{p.cmd}: {p.err}"
    check_mount(where, "fuse.varsymfs", "UNIVERSE", probe)
    # mount.fuse3 started the installed program
    assert running_from("/usr/local/") == {"/usr/local/sbin/varsymfs"}


def test_mount_8_runs_the_installed_helper(installed, where):
    """`mount -t varsymfs` from an empty environment, as at boot: mount(8)
    finds make install's /sbin/mount.varsymfs, which runs the installed
    varsym to load the configuration (and warns of a missing fallback=
    directory, which only the helper does)."""
    if not loaded():
        sh(["modprobe", "varsymfs"])
    p = mount(["-t", "varsymfs", "-o", "search,fallback=/no/such/dir", "none", where])
    assert p.returncode == 0, f"{p.cmd}: {p.err}"
    assert "mount.varsymfs: warning: fallback=/no/such/dir: no such directory" in p.err, p.err
    umount(where)
    assert sh(["/sbin/mount.varsymfs", "--version"]).out.startswith("mount.varsymfs version")


# ---- the conformance suite on the DKMS module ----------------------------------

def test_conformance_on_the_dkms_module(build):
    """The kernel-only part of the suite (the RCU-walk fast path, its
    counters, remount) against the module modprobe loaded.  The rmmod test
    reloads build/kmod's copy: left out.  The whole suite ran on build/kmod's
    module, whose code test_dkms.py found identical to this one."""
    unload()
    sh(["modprobe", "varsymfs"])
    p = run(["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider",
             "tests/conformance/test_kernel.py",
             "--deselect",
             "tests/conformance/test_kernel.py::test_rmmod_refused_while_mounted_then_unloads",
             "--impl=kernel", f"--build={build}"],
            env=dict(os.environ), timeout=900)
    if p.returncode != 0:
        raise Failed(f"{p.cmd}\n{p.out[-6000:]}\n{p.err[-2000:]}")
    assert re.search(r"\d+ passed", p.out)
    assert sh(["modinfo", "-n", "varsymfs"]).out.startswith(f"/lib/modules/{KVER}/updates/dkms/")

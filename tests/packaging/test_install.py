# SPDX-License-Identifier: GPL-2.0-only
"""make install / uninstall / install-dkms, staged under DESTDIR as packagers
do, from a fresh copy of the tree built with plain `make` as README.md says.
(in_guest.py runs the same `make install` for real, into /usr/local.)"""
import os
import re

import pytest

from conftest import REPO, VERSION, sh

DOCS = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(REPO, "docs"))
                              if f.endswith(".md"))
# examples/use-cases/ holds docs/USE-CASES.md's recipes, which run from a
# source tree with its build/ (the conformance suite runs them): not shipped
EXAMPLES = sorted(os.path.join(d, f)[len(REPO) + 1:]
                  for d, _, files in os.walk(os.path.join(REPO, "examples"))
                  for f in files
                  if not d.startswith(os.path.join(REPO, "examples", "use-cases")))


PAGES = sorted(os.listdir(os.path.join(REPO, "man")))


def helper_dir(prefix):
    """Where mount(8) runs mount.TYPE helpers from: /sbin, whatever the
    prefix (Debian's /usr/sbin is the same directory, and its packages'
    place)."""
    return "/usr/sbin" if prefix == "/usr" else "/sbin"


def installed(prefix):
    """Every file make install must put under prefix, and its mode: every
    page of man/ too."""
    files = {
        f"{prefix}/sbin/varsymfs": 0o755,
        f"{helper_dir(prefix)}/mount.varsymfs": 0o755,
        f"{prefix}/bin/varsym": 0o755,
    }
    for page in PAGES:
        files[f"{prefix}/share/man/man{page[-1]}/{page}"] = 0o644
    for f in DOCS + EXAMPLES:
        files[f"{prefix}/share/doc/varsymfs/{f}"] = 0o644
    return files


def files_under(root):
    found = {}
    for d, _, names in os.walk(root):
        for n in names:
            path = os.path.join(d, n)
            found["/" + os.path.relpath(path, root)] = os.stat(path).st_mode & 0o7777
    return found


@pytest.mark.parametrize("prefix", [None, "/usr", "/opt/varsymfs"])
def test_install_puts_exactly_these_files(built_source, tmp_path, prefix):
    args = [] if prefix is None else [f"PREFIX={prefix}"]
    sh(["make", "-C", built_source, "install", f"DESTDIR={tmp_path}"] + args)
    assert files_under(tmp_path) == installed(prefix or "/usr/local")


def test_no_module_from_make_install(built_source, tmp_path):
    """The module is DKMS's to build and install, for each kernel."""
    sh(["make", "-C", built_source, "install", f"DESTDIR={tmp_path}"])
    assert not [f for f in files_under(tmp_path) if ".ko" in f or "/lib/modules" in f]


def test_uninstall_removes_exactly_what_install_put(built_source, tmp_path):
    theirs = ["/usr/local/sbin/other", "/usr/local/share/man/man5/other.5",
              "/usr/local/share/doc/other/README", "/sbin/mount.other"]
    for f in theirs:
        os.makedirs(os.path.dirname(f"{tmp_path}{f}"), exist_ok=True)
        open(f"{tmp_path}{f}", "w").close()
    sh(["make", "-C", built_source, "install", f"DESTDIR={tmp_path}"])
    sh(["make", "-C", built_source, "uninstall", f"DESTDIR={tmp_path}"])
    assert sorted(files_under(tmp_path)) == sorted(theirs)
    assert not os.path.exists(f"{tmp_path}/usr/local/share/doc/varsymfs")
    # twice is harmless
    sh(["make", "-C", built_source, "uninstall", f"DESTDIR={tmp_path}"])


def test_installed_programs_run(built_source, tmp_path):
    sh(["make", "-C", built_source, "install", f"DESTDIR={tmp_path}"])
    p = sh([f"{tmp_path}/usr/local/sbin/varsymfs", "--version"])
    assert f"varsymfs version {VERSION}" in p.out
    p = sh([f"{tmp_path}/usr/local/bin/varsym", "--version"])
    assert p.out == f"varsym version {VERSION}\n"
    p = sh([f"{tmp_path}/sbin/mount.varsymfs", "--version"])
    assert p.out == f"mount.varsymfs version {VERSION}\n"


@pytest.mark.parametrize("prefix", ["/usr/local", "/usr"])
def test_installed_helper_runs_the_installed_varsym(built_source, tmp_path,
                                                    prefix):
    """mount(8) may run the helper with any PATH (none at boot): it names
    the varsym command make install put under PREFIX."""
    sh(["make", "-C", built_source, "install", f"DESTDIR={tmp_path}",
        f"PREFIX={prefix}"])
    with open(f"{tmp_path}{helper_dir(prefix)}/mount.varsymfs") as f:
        lines = f.read().splitlines()
    assert f"varsym=${{VARSYM:-{prefix}/bin/varsym}}" in lines
    assert f"version={VERSION}" in lines


def test_man_finds_installed_pages(built_source, tmp_path):
    sh(["make", "-C", built_source, "install", f"DESTDIR={tmp_path}"])
    mandir = f"{tmp_path}/usr/local/share/man"
    for page in PAGES:
        name, section = page.rsplit(".", 1)
        p = sh(["man", "-M", mandir, "-w", section, name], env={"PATH": "/usr/bin:/bin"})
        assert p.out.strip() == f"{mandir}/man{section}/{name}.{section}"


def test_sbin_is_on_the_mount_helpers_default_path():
    """mount(8) runs mount.fuse3 with an empty environment; its shell then
    searches its default PATH, which must hold both install locations."""
    p = sh(["/usr/bin/env", "-i", "/bin/sh", "-c", 'echo "$PATH"'], env={})
    path = p.out.strip().split(":")
    assert "/usr/local/sbin" in path and "/usr/sbin" in path, path


def test_install_dkms_puts_the_module_sources(built_source, tmp_path):
    sh(["make", "-C", built_source, "install-dkms", f"DESTDIR={tmp_path}"])
    src = f"/usr/src/varsymfs-{VERSION}"
    want = {f"{src}/dkms.conf", f"{src}/Kbuild"}
    for d in ("core", "kmod"):
        want |= {f"{src}/{d}/{f}" for f in os.listdir(os.path.join(REPO, d))
                 if re.search(r"\.[ch]$", f)}
    assert set(files_under(tmp_path)) == want
    sh(["make", "-C", built_source, "uninstall-dkms", f"DESTDIR={tmp_path}"])
    assert files_under(tmp_path) == {}


def test_versions_agree():
    """One version everywhere: Makefile, dkms.conf, debian/changelog."""
    with open(os.path.join(REPO, "dkms.conf")) as f:
        dkms = re.search(r'^PACKAGE_VERSION="([^"]+)"', f.read(), re.M).group(1)
    p = sh(["dpkg-parsechangelog", "-l", os.path.join(REPO, "debian", "changelog"),
            "-S", "Version"])
    assert dkms == VERSION == p.out.strip()

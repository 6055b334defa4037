# SPDX-License-Identifier: GPL-2.0-only
"""The man pages: they render without a warning, and every option the code
accepts is documented in the page that belongs to it."""
import os
import re

import pytest

from conftest import REPO, VERSION, render_man, sh

MAN = os.path.join(REPO, "man")
PAGES = sorted(os.listdir(MAN))


def page(name):
    return os.path.join(MAN, name)


@pytest.fixture(scope="module")
def text():
    """Each page rendered as plain text."""
    return {name: render_man(page(name)) for name in PAGES}


def documented(text, word):
    """word appears whole: not inside a longer option or name (a word
    ending in = is followed by its value)."""
    end = "" if word.endswith("=") else r"(?![\w-])"
    return re.search(r"(?<![\w-])" + re.escape(word) + end, text)


@pytest.mark.parametrize("name", PAGES)
def test_renders_without_warnings(name):
    # man(1) as a reader runs it (preprocessors from the page's first line)
    p = sh(["man", "--warnings", "-E", "UTF-8", "-l", page(name)],
           env={"PATH": "/usr/bin:/bin", "MANWIDTH": "80", "LC_ALL": "C.UTF-8"})
    assert p.err == "", f"{p.cmd}:\n{p.err}"
    assert p.out.strip()
    # groff itself, every warning on
    p = sh(["groff", "-man", "-t", "-ww", "-z", page(name)])
    assert p.err == "", f"{p.cmd}:\n{p.err}"


@pytest.mark.parametrize("name", PAGES)
def test_name_line_for_whatis(name):
    """lexgrog reads the NAME line as mandb(8) will for whatis/apropos."""
    p = sh(["lexgrog", page(name)])
    want = name.rsplit(".", 1)[0]
    assert re.search(rf': "{re.escape(want)} - \S', p.out), p.out


@pytest.mark.parametrize("name", PAGES)
def test_standard_sections_and_version(name):
    with open(page(name)) as f:
        roff = f.read()
    th = re.search(r'^\.TH (\S+) (\d) \S+ "varsymfs ([^"]+)"', roff, re.M)
    assert th, "no .TH line"
    assert th.group(1) == name.rsplit(".", 1)[0].upper()
    assert th.group(2) == name[-1]
    assert th.group(3) == VERSION, "the pages' version is the project's (dkms.conf)"
    sections = re.findall(r"^\.SH (.+)$", roff, re.M)
    for want in ("NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"):
        assert want in sections
    if name[-1] in "18":             # commands; section 5 is file formats
        for want in ("OPTIONS", "EXIT STATUS", "EXAMPLES"):
            assert want in sections


def c_string_array(name):
    """The strings of `... name[] = { "a", "b", ... };` in core/options.c."""
    with open(os.path.join(REPO, "core", "options.c")) as f:
        source = f.read()
    body = re.search(rf"\b{name}\[\]\s*=\s*\{{(.*?)\}};", source, re.S)
    assert body, f"no {name}[] in core/options.c"
    words = re.findall(r'"([^"]+)"', re.sub(r"/\*.*?\*/", "", body.group(1), flags=re.S))
    assert words
    return words


def test_mount_option_keywords_documented(text):
    """Every valued keyword of the shared parser, in varsymfs(5) and in
    the FUSE program's page."""
    for keyword in c_string_array("valued"):
        for name in ("varsymfs.5", "varsymfs.8"):
            assert documented(text[name], keyword + "="), \
                f"{keyword}= is not in {name}"


def test_foreign_words_documented(text):
    """The words that are never a variable are listed in varsymfs(5)."""
    words = c_string_array("mount_only_options") + \
        c_string_array("foreign_options")
    missing = [w for w in words if not documented(text["varsymfs.5"], w)]
    assert not missing, f"not in varsymfs.5: {missing}"
    assert documented(text["varsymfs.5"], "x-")


def help_options(program):
    p = sh([program, "--help"])
    return p.out


def test_fuse_program_options_documented(text, build):
    """Everything `varsymfs --help` offers is in varsymfs(8)."""
    out = help_options(os.path.join(build, "varsymfs"))
    long = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*=?)", out))
    short = set(re.findall(r"(?<![\w-])(-[a-zA-Z])\b", out))
    fuse_o = set(re.findall(r"-o ([a-z_]+)", out))
    assert {"--help", "--version"} <= long
    # the benchmark's variants are built into build/bench/varsymfs only
    assert not {"--naive", "--constant="} & long
    assert {"-f", "-d", "-s", "-o", "-h", "-V"} <= short
    for opt in sorted(long | short | fuse_o):
        assert documented(text["varsymfs.8"], opt), f"{opt} is not in varsymfs.8"


def test_varsym_options_documented(text, build):
    """Everything `varsym --help` offers is in varsym(1), exit codes too."""
    out = help_options(os.path.join(build, "varsym"))
    long = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", out))
    short = set(re.findall(r"(?<![\w-])(-[a-zA-Z])\b", out))
    assert {"--help", "--version", "--env", "--secure",
            "--ignore-environment"} <= long
    for opt in sorted(long | short | {"-V", "explain", "show"}):
        assert documented(text["varsym.1"], opt), f"{opt} is not in varsym.1"
    codes = re.findall(r"^\s+(\d)\s", out.split("Exit status:")[1], re.M)
    assert codes == ["0", "1", "2", "3"]
    exit_status = text["varsym.1"].split("EXIT STATUS")[1].split("EXAMPLES")[0]
    for code in codes:
        assert re.search(rf"^\s+{code}\s", exit_status, re.M), code


def test_mount_helper_options_documented(text):
    """Everything `mount.varsymfs --help` offers is in mount.varsymfs(8),
    exit codes too."""
    out = help_options(os.path.join(REPO, "tools", "mount.varsymfs"))
    long = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", out))
    short = set(re.findall(r"(?<![\w-])(-[a-zA-Z])\b", out))
    assert {"--help", "--version"} <= long
    assert {"-o", "-N", "-f", "-n", "-s", "-v", "-h", "-V"} <= short
    for opt in sorted(long | short):
        assert documented(text["mount.varsymfs.8"], opt), \
            f"{opt} is not in mount.varsymfs.8"
    codes = re.findall(r"(\d+) (?:mounted|usage|not mounted)", out)
    assert codes == ["0", "1", "32"], codes
    exit_status = text["mount.varsymfs.8"].split("EXIT STATUS")[1]
    for code in codes:
        assert re.search(rf"^\s+{code}\s", exit_status, re.M), code


def test_every_page_is_shipped():
    """make install and the Debian package install every page of man/
    (the package takes make install's share/man whole)."""
    with open(os.path.join(REPO, "Makefile")) as f:
        makefile = f.read()
    with open(os.path.join(REPO, "debian", "varsymfs.install")) as f:
        assert "usr/share/man\n" in f.read()
    for name in PAGES:
        assert f"man/{name} $(DESTDIR)$(mandir)/man{name[-1]}/{name}" in \
            makefile, name


def test_see_also_pages_exist(text):
    """Each page named in SEE ALSO is ours or installed here."""
    ours = {n.replace(".", "(") + ")" for n in PAGES}
    for name, body in text.items():
        refs = re.findall(r"([\w.-]+\(\d\))", body.split("SEE ALSO")[1])
        for ref in refs:
            if ref in ours:
                continue
            title, section = ref[:-3], ref[-2]
            p = sh(["man", "-w", section, title], check=False,
                   env={"PATH": "/usr/bin:/bin"})
            # pages of the packages scripts/deps installs must be here
            if title in ("dkms", "systemd.mount", "tmpfiles.d", "modules-load.d",
                         "mount", "fstab"):
                assert p.returncode == 0, f"{name}: {ref} not found"

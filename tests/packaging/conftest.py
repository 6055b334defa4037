# SPDX-License-Identifier: GPL-2.0-only
"""The packaging tests' machinery: installing varsymfs as people do.

Run as root by `make check` (scripts/check), after `make all kmod`:

    /usr/bin/python3 -m pytest tests/packaging [--build=DIR] [--results=FILE]

test_*.py run on this machine; in_guest.py runs inside a QEMU guest, started
by test_dkms.py through scripts/vm-run.  Whatever a test installs on this
machine (DKMS modules, Debian packages) it removes again, and checks that
the machine is as it was.  Helpers come from the conformance suite's
conftest, so both suites run and mount things the same way.
"""
import fcntl
import hashlib
import importlib.util
import lzma
import os
import re
import shutil
import struct
import tempfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SBIN_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
# Everything DKMS and dpkg change is shared by the whole machine: one
# packaging run at a time (two `make check` at once would collide).
LOCK = "/run/lock/varsymfs-packaging.lock"


def _conformance():
    spec = importlib.util.spec_from_file_location(
        "conformance_conftest",
        os.path.join(REPO, "tests", "conformance", "conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_c = _conformance()
run, mounted_at, wait_for, Failed, Probe, Mount = (
    _c.run, _c.mounted_at, _c.wait_for, _c.Failed, _c.Probe, _c.Mount)


def pytest_addoption(parser):
    parser.addoption("--build", default=os.path.join(REPO, "build"),
                     help="directory holding varsymfs, varsym, vsprobe")
    parser.addoption("--results", default=None,
                     help="write pass/fail/skip counts to this JSON file")
    parser.addoption("--source", default=None,
                     help="(in_guest.py) a built copy of the source tree")


# the counts for scripts/check, and the markers, as the conformance suite's
pytest_terminal_summary = _c.pytest_terminal_summary
pytest_configure = _c.pytest_configure


def pytest_collection_modifyitems(items):
    """Every case here is a packaging case."""
    for item in items:
        item.add_marker(pytest.mark.packaging)


def per_kernel(kernels):
    """Parameters for a case run once per kernel (a release, or a tuple
    of release and root): the newest as it is, the others marked
    every_kernel, which make check leaves to make check-full."""
    def param(k, marks=()):
        return pytest.param(*(k if isinstance(k, tuple) else (k,)), marks=marks)
    return [param(k, () if i == len(kernels) - 1 else pytest.mark.every_kernel)
            for i, k in enumerate(kernels)]


def selected_kernels(request, kernels):
    """Of kernels, those that some case chosen in request's file (-m) takes
    as its "kernel" parameter: a fixture sets up no more than that."""
    chosen = {item.callspec.params.get("kernel")
              for item in request.session.items
              if item.module is request.module and hasattr(item, "callspec")}
    return [k for k in kernels if k in chosen]


# ---- facts about the tree ----------------------------------------------------

def project_version():
    """The one version: dkms.conf's PACKAGE_VERSION (the Makefile's too)."""
    with open(os.path.join(REPO, "dkms.conf")) as f:
        return re.search(r'^PACKAGE_VERSION="(\S+)"$', f.read(), re.M).group(1)


VERSION = project_version()


def listed_kernels():
    """The lines of kernels.list (or $KERNELS_LIST), as scripts/kernels
    reads them: one dict each."""
    env = {"PATH": SBIN_PATH}
    if os.environ.get("KERNELS_LIST"):
        env["KERNELS_LIST"] = os.environ["KERNELS_LIST"]
    p = run([os.path.join(REPO, "scripts", "kernels"), "list"], env=env, check=True)
    fields = ("name", "release", "suite", "version", "root", "meta", "cc")
    return [dict(zip(fields, line.split())) for line in p.out.splitlines()]


def kernels():
    """The kernels of the list installed on this machine, headers and all
    (scripts/deps kmod): DKMS builds for them here."""
    return [k["release"] for k in listed_kernels() if k["root"] == "host" and
            os.path.exists(f"/usr/src/linux-headers-{k['release']}/Module.symvers")]


def root_kernels():
    """(release, root) of the kernels of the list built in a root of their
    own (scripts/in-root): DKMS builds for them there."""
    return [(k["release"], k["root"]) for k in listed_kernels() if k["root"] != "host"]


def in_root(root, argv, **kw):
    """sh() inside build/roots/ROOT, with the repository at its own path."""
    return sh([os.path.join(REPO, "scripts", "in-root"), root, "--"] + argv, **kw)


def root_path(root, path):
    """Where the host sees PATH of build/roots/ROOT."""
    return os.path.join(REPO, "build", "roots", root) + path


def dkms_status():
    """What dkms knows of varsymfs: empty if nothing."""
    return sh(["dkms", "status", "varsymfs"]).out.strip()


def modules_state():
    """Every file DKMS may touch under /lib/modules, and depmod's index."""
    state = {}
    for k in kernels():
        top = f"/lib/modules/{k}"
        files = sorted(os.path.join(d, f) for d, _, names in os.walk(top) for f in names)
        with open(f"{top}/modules.dep") as f:
            state[k] = (files, f.read())
    return state


def sh(argv, **kw):
    """run() with a PATH, checked: most packaging commands must succeed."""
    kw.setdefault("env", {"PATH": SBIN_PATH, "LC_ALL": "C.UTF-8"})
    kw.setdefault("check", True)
    kw.setdefault("timeout", 600)
    return run(argv, **kw)


def source_files():
    """The source tree as a fresh clone would have it: what git tracks or
    would track (new files not ignored); without git, all but build/ and
    .git/ (as scripts/build-deb does)."""
    p = run(["git", "-c", "safe.directory=*", "-C", REPO, "ls-files", "-z",
             "--cached", "--others", "--exclude-standard"], env={"PATH": SBIN_PATH})
    if p.returncode == 0:
        return [f for f in p.out.split("\0")
                if f and os.path.exists(os.path.join(REPO, f))]
    found = []
    for d, dirs, files in os.walk(REPO):
        if d == REPO:
            dirs[:] = [x for x in dirs if x not in ("build", ".git")]
        found += [os.path.relpath(os.path.join(d, f), REPO) for f in files]
    return found


def copy_source(dest):
    for f in source_files():
        os.makedirs(os.path.dirname(os.path.join(dest, f)), exist_ok=True)
        shutil.copy2(os.path.join(REPO, f), os.path.join(dest, f))


# ---- the roots of the kernels built in one (scripts/in-root) ------------------

def root_state(root, kernel):
    """What DKMS may change in a root: the files of the kernel's modules
    directory, what /usr/src and /var/lib/dkms hold (its key aside)."""
    mods = root_path(root, f"/usr/lib/modules/{kernel}")
    files = sorted(os.path.relpath(os.path.join(d, f), mods)
                   for d, _, names in os.walk(mods) for f in names)
    listed = {d: sorted(x for x in os.listdir(root_path(root, d)) if not x.startswith("mok."))
              for d in ("/usr/src", "/var/lib/dkms") if os.path.isdir(root_path(root, d))}
    return files, listed


@pytest.fixture
def root_with_dkms(machine_lock):
    """ROOT_KERNELS' roots with dkms installed (once: the roots are a cache),
    and the dkms signing key removed again if this test made it."""
    roots = []

    def ready(root):
        sh([os.path.join(REPO, "scripts", "in-root"), root, "--ensure", "dkms"])
        keys = [root_path(root, f"/var/lib/dkms/mok.{k}") for k in ("key", "pub")]
        roots.append([k for k in keys if not os.path.exists(k)])
        return root
    yield ready
    for made in roots:
        for k in made:
            if os.path.exists(k):
                os.unlink(k)


def dkms_module_path(root, kernel):
    """The module dkms installed for kernel in root.  The root has the
    kernel's headers but not its modules, so dkms leaves depmod alone and
    modinfo cannot find it by name: the file, where dkms puts it."""
    found = [p for p in (f"/usr/lib/modules/{kernel}/updates/dkms/varsymfs.ko",
                         f"/usr/lib/modules/{kernel}/updates/dkms/varsymfs.ko.xz")
             if os.path.exists(root_path(root, p))]
    assert len(found) == 1, found
    return found[0]


# ---- fixtures ---------------------------------------------------------------

@pytest.fixture(scope="session")
def build(request):
    return os.path.abspath(request.config.getoption("--build"))


@pytest.fixture(scope="session")
def probe(build):
    return Probe(os.path.join(build, "vsprobe"))


@pytest.fixture(scope="session")
def scratch(build):
    """build/pkgtest/: this run's files, kept for a look after a failure.
    The guest sees it too (the repository is shared with it)."""
    d = os.path.join(build, "pkgtest")
    if not os.environ.get("VARSYMFS_GUEST"):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    return d


@pytest.fixture(scope="session")
def built_source(scratch):
    """A fresh copy of the tree, built as README.md says: `make`."""
    src = os.path.join(scratch, "src")
    copy_source(src)
    sh(["make", "-C", src, "-j2"])
    return src


@pytest.fixture(scope="session")
def machine_lock():
    """Held while this run may change the machine (DKMS, dpkg)."""
    with open(LOCK, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def dkms_keys(machine_lock):
    """dkms signs what it builds with /var/lib/dkms/mok.key, which it makes
    on its first build: if this run made it, this run removes it."""
    keys = ["/var/lib/dkms/mok.key", "/var/lib/dkms/mok.pub"]
    before = [k for k in keys if os.path.exists(k)]
    yield
    for k in keys:
        if k not in before and os.path.exists(k):
            os.unlink(k)


@pytest.fixture
def public_dir():
    """A temporary directory every user may enter (tmp_path is 0700)."""
    d = tempfile.mkdtemp(prefix="varsym-pkg-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def mount_point(parent):
    where = tempfile.mkdtemp(prefix="mnt-", dir=parent)
    os.chmod(where, 0o755)
    return where


def umount(where):
    """Unmounts where if mounted; a failure is the test's failure."""
    if mounted_at(where):
        p = run(["umount", where], env={"PATH": SBIN_PATH})
        if p.returncode != 0:
            run(["umount", "-l", where], env={"PATH": SBIN_PATH})
            raise Failed(f"umount {where} failed: {p.err}")


def fstab_lines(text):
    """The fstab lines in a text whose type is varsymfs or fuse.varsymfs,
    commented out, inline or not: (spec, file, type, options)."""
    return re.findall(r"(?<![^\s`])#?(none)[ \t]+(/\S+)[ \t]+((?:fuse\.)?varsymfs)[ \t]+"
                      r"(\S+)[ \t]+0[ \t]+0(?![\w.])", text)


def render_man(page):
    """A man page as plain text: no hyphenation, no bold or underline."""
    p = sh(["groff", "-man", "-t", "-Tascii", "-P-cbou", "-rHY=0",
            "-rLL=200n", page])
    return p.out


# ---- comparing kernel modules -----------------------------------------------

SHF_ALLOC = 0x2
SHT_NOBITS = 8


def _elf_sections(data):
    """(name, type, flags, contents) of each section of an ELF64 LE file."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    shoff = struct.unpack_from("<Q", data, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
               for i in range(shnum)]
    names_at = headers[shstrndx][4]
    sections = []
    for name, kind, flags, _, offset, size, *_ in headers:
        end = data.index(b"\0", names_at + name)
        contents = b"" if kind == SHT_NOBITS else data[offset:offset + size]
        sections.append((data[names_at + name:end].decode(), kind, flags, contents))
    return sections


def module_image(path):
    """What a module puts into the kernel: the contents of every section that
    is loaded (SHF_ALLOC) and every relocation applied to them, by symbol
    name.  Debug information, the symbol table's order, the build id (a
    hash of all that) and the signature appended by dkms are left out: they
    change nothing that runs."""
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        data = lzma.decompress(data)
    image = {name: (kind, len(contents), hashlib.sha256(contents).hexdigest())
             for name, kind, flags, contents in _elf_sections(data)
             if flags & SHF_ALLOC and name != ".note.gnu.build-id"}
    with tempfile.NamedTemporaryFile(suffix=".ko") as f:
        f.write(data)
        f.flush()
        relocs = sh(["readelf", "-rW", f.name]).out
    section = None
    for line in relocs.splitlines():
        m = re.match(r"Relocation section '([^']+)'", line)
        if m:
            section = m.group(1)
            continue
        fields = line.split()
        # offset, info (a symbol index: dropped), type, value, name + addend
        if section and section.removeprefix(".rela") in image and \
                len(fields) >= 4 and re.fullmatch(r"[0-9a-f]{16}", fields[0]):
            image.setdefault(section, []).append(
                (fields[0], fields[2], " ".join(fields[4:])))
    return image

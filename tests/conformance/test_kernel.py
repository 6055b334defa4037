# SPDX-License-Identifier: GPL-2.0-only
"""What only the kernel module has: module life cycle, the RCU-walk fast path,
remount.  Run inside a guest (scripts/vm-run loads the module)."""
import errno
import os
import re
import subprocess
import tempfile
import time

import pytest

from conftest import mounted_at, needs_real_root, run

pytestmark = [pytest.mark.spec6, pytest.mark.kernel_dependent,
              pytest.mark.usefixtures("kernel_only"), needs_real_root]
SBIN = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
STATS = "/sys/module/varsymfs/parameters/stats"


@pytest.fixture
def kernel_only(impl):
    if impl != "kernel":
        pytest.skip("kernel module only")


def module_path():
    version = os.environ.get("VARSYMFS_KERNEL") or os.uname().release
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "build", "kmod", version, "varsymfs.ko")


def stats():
    with open(STATS) as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def test_rmmod_refused_while_mounted_then_unloads(varsymfs, public_dir):
    ko = module_path()
    assert os.path.exists(ko), ko
    m = varsymfs("UNIVERSE")
    p = run(["rmmod", "varsymfs"], env=SBIN)
    assert p.returncode != 0 and "in use" in p.err
    m.stop()
    try:
        run(["rmmod", "varsymfs"], env=SBIN, check=True)
        assert not os.path.exists("/sys/module/varsymfs")
    finally:
        if not os.path.exists("/sys/module/varsymfs"):
            run(["insmod", ko], env=SBIN, check=True)
    assert os.path.exists(STATS)


# Leaks.  The guest boots with slub_debug=U (scripts/vm-run), so slub keeps
# the allocating function of every live object, in debugfs.
DEBUGFS = "/sys/kernel/debug"
SLAB = DEBUGFS + "/slab"


@pytest.fixture
def slab_traces():
    mounted = False
    if not os.path.isdir(SLAB):
        mounted = run(["mount", "-t", "debugfs", "none", DEBUGFS],
                      env=SBIN).returncode == 0
    try:
        if not os.path.exists(SLAB + "/kmalloc-64/alloc_traces"):
            pytest.skip("no slab alloc_traces (slub_debug=U is off)")
        yield
    finally:
        if mounted:
            run(["umount", DEBUGFS], env=SBIN, check=True)


def kallsyms():
    """{name: address} of the loaded module's functions."""
    found = {}
    with open("/proc/kallsyms") as f:
        for line in f:
            fields = line.split()
            if fields[-1] == "[varsymfs]" and fields[1] in "tT":
                found[fields[2]] = int(fields[0], 16)
    assert found and min(found.values()) > 0, "no addresses in kallsyms"
    return found


def live_objects(symbols):
    """{allocating address: live objects} over every slab cache, for call
    sites in the module (shown as function+offset while it is loaded, as a
    bare address once it is gone)."""
    found = {}
    site = re.compile(r"\s*(\d+) (?:0x([0-9a-f]+)|"
                      r"(\w+)\+0x([0-9a-f]+)/0x[0-9a-f]+ \[varsymfs\])\s")
    for cache in os.listdir(SLAB):
        try:
            with open(f"{SLAB}/{cache}/alloc_traces") as f:
                text = f.read()
        except OSError as e:
            if e.errno in (errno.ENOENT, errno.EINVAL):
                continue  # a cache without traces
            raise
        for m in filter(None, map(site.match, text.splitlines())):
            count, raw, name, offset = m.groups()
            addr = int(raw, 16) if raw else symbols[name] + int(offset, 16)
            found[addr] = found.get(addr, 0) + int(count)
    return found


def named(symbols, objects):
    """{function+offset: count} for messages."""
    def name(addr):
        func = max((a, f) for f, a in symbols.items() if a <= addr)
        return f"{func[1]}+{addr - func[0]:#x}"
    return {name(a): n for a, n in objects.items()}


def test_nothing_left_allocated(varsymfs, probe, slab_traces):
    """After both modes were used and unmounted, the module's only new live
    objects are cached answers (bounded by the table): the exec hook's
    watches are all gone; after rmmod, nothing.

    Addresses, not names, are compared with a count taken before: stack
    addresses in the freed init code of modules loaded earlier can fall
    where this module now is, and would be named after its functions."""
    symbols = kallsyms()
    low, high = min(symbols.values()), max(symbols.values()) + 4096
    ours = lambda objects: {a: n for a, n in objects.items()
                            if low <= a < high}
    before = ours(live_objects(symbols))

    seed = varsymfs("UNIVERSE,default=/dflt")
    for i in range(50):
        want = f"ok /u{i}" if i % 5 else "ok /dflt"
        env = {"UNIVERSE": f"/u{i}"} if i % 5 else {}
        assert probe.readlink(seed.link, env=env) == want
    assert probe("stat-loop", "300", seed.link, env={"UNIVERSE": "/tmp"}) \
        == "ok 300"
    seed.stop()
    tm = varsymfs("")
    for i in range(40):
        os.symlink(f"/opt/${{V{i % 4}:-d}}/{i}", os.path.join(tm.dir, f"l{i}"))
    for i in range(0, 40, 4):
        os.rename(os.path.join(tm.dir, f"l{i}"),
                  os.path.join(tm.dir, f"l{i + 1}"))
    for i in range(2, 40, 4):
        os.unlink(os.path.join(tm.dir, f"l{i}"))
    with pytest.raises(OSError):
        os.symlink("${", os.path.join(tm.dir, "bad"))
    for name in os.listdir(tm.dir):
        link = os.path.join(tm.dir, name)
        os.getxattr(link, "system.varsym_template", follow_symlinks=False)
        assert probe.readlink(link, env={"V1": "x"}).startswith("ok /opt/")
    os.symlink("${T:-/nonexistent}", os.path.join(tm.dir, "t"))
    assert probe("stat-loop", "300", os.path.join(tm.dir, "t"),
                 env={"T": "/tmp"}) == "ok 300"
    tm.stop()

    def within(*names):
        ranges = []
        for name in filter(symbols.__contains__, names):
            start = symbols[name]
            end = min([a for a in symbols.values() if a > start] + [high])
            ranges.append((start, end))
        return lambda a: any(start <= a < end for start, end in ranges)

    # a watch is allocated in exec_begins(), wherever the compiler put it
    in_put = within("varsymfs_cache_put")
    in_watch = within("exec_begins")
    watches = lambda objects: sum(n for a, n in objects.items()
                                  if in_watch(a))
    # every exec's watch ends when the exec returns; its memory comes back
    # after kfree_rcu's batch, which can take seconds under TCG
    deadline = time.monotonic() + 30
    while True:
        after = ours(live_objects(symbols))
        if watches(after) <= watches(before) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert watches(after) <= watches(before), named(symbols, after)
    grown = {a: n - before.get(a, 0) for a, n in after.items()
             if n > before.get(a, 0)}
    answers = sum(n for a, n in after.items() if in_put(a))
    print(f"\nthe module's live objects: {named(symbols, before)} before, "
          f"{named(symbols, after)} after umount")
    # the answers the workload cached: the count does see the module
    # (fewer than before is fine: the answers earlier tests replaced were
    # still waiting for kfree_rcu's batch)
    assert answers > 0, (before, after)
    assert all(map(in_put, grown)), named(symbols, grown)
    assert answers <= 4096 + sum(n for a, n in before.items() if in_put(a))

    ko = module_path()
    try:
        run(["rmmod", "varsymfs"], env=SBIN, check=True)
        # kfree_rcu() batches its frees for up to a few seconds, and
        # rcu_barrier() at exit does not wait for them (nor need to: kfree
        # runs no code of the module)
        start = time.monotonic()
        deadline = start + 30
        while True:
            gone = ours(live_objects(symbols))
            left = {hex(a): n for a, n in gone.items()
                    if in_put(a) or n > before.get(a, 0)}
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        print(f"after rmmod: {sum(gone.values())} objects left at its "
              f"addresses after {time.monotonic() - start:.1f} s")
        assert not left, named(symbols, {int(a, 16): n
                                         for a, n in left.items()})
    finally:
        if not os.path.exists("/sys/module/varsymfs"):
            run(["insmod", ko], env=SBIN, check=True)


def test_filesystem_alias_for_autoload():
    p = run(["modinfo", "-F", "alias", module_path()], env=SBIN, check=True)
    assert "fs-varsymfs" in p.out.split()


@pytest.mark.parametrize("mode", ["seed", "template"])
def test_follows_answer_in_the_rcu_walk(varsymfs, universes, probe,
                                       public_dir, mode):
    """stat(2) through the link: at least 99 % answered without leaving
    the RCU walk while the environment is resident.

    The probe chroots into the test's tmpfs directory: the guest's root is
    9p, whose dentries leave the RCU walk on their own."""
    inside = lambda p: "/" + os.path.relpath(p, public_dir)
    if mode == "seed":
        m = varsymfs("UNIVERSE")
        link = m.link
    else:
        m = varsymfs("")
        link = os.path.join(m.dir, "u")
        os.symlink("${UNIVERSE:-/none}", link)
    path = os.path.join(inside(link), "bin", "only-att")
    env = {"UNIVERSE": inside(universes["att"]), "FILLER": "x" * 4096}
    loop = lambda n: probe("--chroot", public_dir, "stat-loop", str(n), path,
                           env=env)
    assert loop(10) == "ok 10"  # fault the environment in
    before = stats()
    assert loop(2000) == "ok 2000"
    after = stats()
    rcu = after["rcu"] - before["rcu"]
    echild = after["echild"] - before["echild"]
    assert rcu >= 0.99 * 2000, (before, after)
    assert echild <= 0.01 * 2000, (before, after)


def test_readlink_is_answered_in_ref_walk(varsymfs, probe):
    m = varsymfs("UNIVERSE")
    before = stats()
    assert probe.readlink(m.link, env={"UNIVERSE": "/att"}) == "ok /att"
    assert stats()["ref"] > before["ref"]


def test_stats_reset():
    with open(STATS, "w") as f:
        f.write("0\n")
    assert stats()["rcu"] < 100


@pytest.mark.parametrize("value", ["1\n", "reset\n", "\n"])
def test_stats_refuses_anything_but_0(value):
    with pytest.raises(OSError) as e:
        with open(STATS, "w") as f:
            f.write(value)
    assert e.value.errno == errno.EINVAL


def test_remount_keeps_options(varsymfs, probe):
    m = varsymfs("UNIVERSE,default=/ucb")
    run(["mount", "-o", "remount,ro", m.dir], env=SBIN, check=True)
    assert " ro," in mounted_at(m.dir) or " ro " in mounted_at(m.dir)
    assert probe.readlink(m.link, env={}) == "ok /ucb"
    p = run(["mount", "-o", "remount,default=/other", m.dir], env=SBIN)
    assert p.returncode != 0
    assert probe.readlink(m.link, env={}) == "ok /ucb"


@pytest.mark.attack
def test_nobody_autoloading_binfmt_misc_keeps_the_execve_rule(
        varsymfs, public_dir):
    """docs/SECURITY.md, "unprivileged module autoload": any user can make
    the kernel load binfmt_misc (a rootless mount of it fails, after the
    load).  When the module watched execve from the list of binary
    formats, that load put binfmt_misc ahead of it, and before Linux 6.8
    every program's own path on the machine then resolved as secure.  The
    exec hook is on security_bprm_check(), which no format comes before: a
    program's own path keeps following execve's envp, for root as for
    nobody."""
    target = os.path.join(public_dir, "x")
    os.mkdir(target)
    run(["unshare", "-Urm", "mount", "-t", "binfmt_misc", "none", target],
        env=SBIN, user="nobody")
    for name in ("att", "ucb"):
        os.makedirs(os.path.join(public_dir, name))
        prog = os.path.join(public_dir, name, "prog")
        with open(prog, "w") as f:
            f.write(f"#!/bin/sh\necho {name}\n")
        os.chmod(prog, 0o755)
        os.chmod(os.path.join(public_dir, name), 0o755)
    m = varsymfs(f"UNIVERSE,default={public_dir}/ucb")
    for user in (None, "nobody"):
        p = run(["/usr/bin/env", f"UNIVERSE={public_dir}/att",
                 m.link + "/prog"], env={}, user=user)
        assert p.out == "att\n", (user, p.out, p.err)


class ExecLoop:
    """A shell running /bin/true until stop(), which waits for it: every
    exec must have run, and at least one before stop()."""

    def __init__(self, scratch):
        self.stop_file = os.path.join(scratch, "stop-execs")
        self.p = subprocess.Popen(
            ["/bin/sh", "-c", 'n=0; while [ ! -e "$0" ]; do /bin/true || '
             'exit 1; n=$((n + 1)); [ $n != 1 ] || echo started; done; '
             'echo done', self.stop_file],
            stdout=subprocess.PIPE, env=SBIN)
        # under way: its first exec ran
        assert self.p.stdout.readline() == b"started\n"

    def stop(self):
        open(self.stop_file, "w").close()
        try:
            out, _ = self.p.communicate(timeout=300)
            assert out.endswith(b"done\n") and self.p.returncode == 0
        finally:
            if self.p.poll() is None:
                self.p.kill()
                self.p.wait()
            os.unlink(self.stop_file)


def reload_module(before=None):
    """Unloads varsymfs, runs before(), loads it again; skips if in use."""
    if run(["rmmod", "varsymfs"], env=SBIN).returncode:
        pytest.skip("varsymfs is in use: cannot load it again")
    try:
        if before:
            before()
    finally:
        run(["insmod", module_path()], env=SBIN, check=True)


def faults_build():
    """build/kmod/RELEASE/faults/varsymfs.ko: the tests' build (make kmod)."""
    return module_path().replace("/varsymfs.ko", "/faults/varsymfs.ko")


@pytest.mark.threads
def test_execs_during_mount_and_umount(varsymfs, public_dir):
    """docs/SECURITY.md: any user can make the module attach its exec hooks
    (a rootless mount).  They are attached at the first mount and detached
    after the last umount, while execs run on the other CPU (each of which
    may be anywhere in its execve then): every exec goes on, and the kernel
    logs no problem (vm-run fails the guest on any).  The tests' build
    detaches at the umount rather than DETACH_DELAY later, the same code
    (test_no_exec_hook_while_nothing_is_mounted waits for the delay)."""
    faulty = faults_build()
    if not os.path.exists(faulty):
        pytest.skip(f"no {faulty} (make kmod)")
    failed = dmesg().count("cannot attach")
    if run(["rmmod", "varsymfs"], env=SBIN).returncode:
        pytest.skip("varsymfs is in use: cannot load the tests' build")
    try:
        run(["insmod", faulty, "detach_at_once=1"], env=SBIN, check=True)
        for _ in range(3):
            assert unhooked_within()
            execs = ExecLoop(public_dir)
            try:
                m = varsymfs("UNIVERSE")
                time.sleep(0.2)
                m.stop()
                # execs run while the hooks go
                assert unhooked_within()
            finally:
                execs.stop()
    finally:
        run(["rmmod", "varsymfs"], env=SBIN)
        run(["insmod", module_path()], env=SBIN, check=True)
    assert run(["/bin/true"]).returncode == 0
    assert dmesg().count("cannot attach") == failed


TRACING = "/sys/kernel/tracing"
HOOKED = ("prepare_exec_creds", "security_bprm_check",
          "security_bprm_committing_creds", "abort_creds")


def hooked_functions():
    """The functions of HOOKED that some ftrace_ops is attached to."""
    if not os.path.exists(TRACING + "/enabled_functions"):
        run(["mount", "-t", "tracefs", "none", TRACING], env=SBIN)
    if not os.path.exists(TRACING + "/enabled_functions"):
        pytest.skip("no tracefs: cannot list the attached functions")
    with open(TRACING + "/enabled_functions") as f:
        names = {line.split()[0] for line in f if line.strip()}
    return sorted(n for n in HOOKED if n in names)


# kmod/exec.c detaches the hooks this long after the last umount
DETACH_DELAY = 5


def unhooked_within(timeout=3 * DETACH_DELAY):
    """Whether no exec hook is attached within timeout seconds."""
    deadline = time.monotonic() + timeout
    while hooked_functions():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def ftrace_off():
    """Switches the function tracer off once the hooks a mount left are
    gone (they refuse it while attached); the errno, or 0."""
    deadline = time.monotonic() + 3 * DETACH_DELAY
    while True:
        err = write_sysctl(FTRACE_ENABLED, "0")
        if err != errno.EBUSY or time.monotonic() > deadline:
            return err
        time.sleep(0.2)


def test_no_exec_hook_while_nothing_is_mounted(public_dir):
    """Issue 32: a loaded module costs execs nothing until it is mounted.
    Its hooks are attached at the first mount (here two, in two mount
    namespaces) and gone DETACH_DELAY seconds after the last umount (a
    mount within that time keeps them: a user's mount and umount in a loop
    patches the kernel's text once per period at most)."""
    if mounted_at_type("varsymfs"):
        pytest.skip("a varsymfs mount exists already")
    reload_module()
    assert hooked_functions() == [], "hooked with nothing mounted, after insmod"
    where = [tempfile.mkdtemp(dir=public_dir) for _ in range(2)]
    run(["mount", "-t", "varsymfs", "-o", "UNIVERSE", "none", where[0]],
        env=SBIN, check=True)
    # the second, in a mount namespace of its own, outlives the first
    other = subprocess.Popen(["unshare", "-m", "--propagation", "private",
                              "sh", "-c", "mount -t varsymfs none $0 && "
                              "echo mounted && read x", where[1]],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env=SBIN)
    try:
        assert other.stdout.readline() == b"mounted\n"
        assert hooked_functions() == sorted(HOOKED)
        run(["umount", where[0]], env=SBIN, check=True)
        assert hooked_functions() == sorted(HOOKED), \
            "unhooked while a mount in another namespace exists"
    finally:
        other.communicate(b"\n", timeout=60)
        if mounted_at(where[0]):
            run(["umount", where[0]], env=SBIN)
    # a mount before the delay is over keeps them, with no patching
    run(["mount", "-t", "varsymfs", "-o", "UNIVERSE", "none", where[0]],
        env=SBIN, check=True)
    assert hooked_functions() == sorted(HOOKED)
    run(["umount", where[0]], env=SBIN, check=True)
    assert unhooked_within(), \
        f"still hooked {3 * DETACH_DELAY} s after the last umount"


def mounted_at_type(fstype):
    with open("/proc/self/mountinfo") as f:
        return any(line.split(" - ")[1].split()[0] == fstype for line in f)


MISC = "/proc/sys/fs/binfmt_misc"


def dmesg():
    return run(["dmesg"], env=SBIN, check=True).out


def compile_euid_reporter(path, label):
    """A program that prints `LABEL euid=N` (as the fake loader does)."""
    src = path + ".c"
    with open(src, "w") as f:
        f.write('#include <stdio.h>\n#include <unistd.h>\n'
                f'int main(void) {{ printf("{label} euid=%d\\n", '
                '(int)geteuid()); return 0; }\n')
    run(["gcc", "-static", "-o", path, src], env=SBIN, check=True)
    os.chmod(path, 0o755)


def interp_universes(public_dir):
    """Directories good and evil, each with an interp saying which it is."""
    dirs = []
    for name, label in (("good", "real"), ("evil", "FAKE")):
        d = os.path.join(public_dir, name)
        os.mkdir(d)
        os.chmod(d, 0o755)
        compile_euid_reporter(os.path.join(d, "interp"), label)
        dirs.append(d)
    return dirs


def load_misc():
    run(["modprobe", "binfmt_misc"], env=SBIN, check=True)
    run(["mount", "-t", "binfmt_misc", "none", MISC], env=SBIN, check=True)


def unload_misc():
    if mounted_at(MISC) is not None:
        run(["umount", MISC], env=SBIN, check=True)
    if os.path.exists("/sys/module/binfmt_misc") and \
            run(["rmmod", "binfmt_misc"], env=SBIN).returncode:
        pytest.skip("binfmt_misc is in use: cannot load it again")


@pytest.fixture(params=["after", "before", "reloaded"])
def misc_loaded(request, public_dir):
    """binfmt_misc, mounted, loaded after varsymfs, before it, or unloaded
    and loaded again while execs run; put back as it was afterwards.
    Yields the list of entries to remove."""
    was_loaded = os.path.exists("/sys/module/binfmt_misc")
    was_mounted = mounted_at(MISC) is not None
    if run(["modinfo", "binfmt_misc"], env=SBIN).returncode and \
            not was_loaded:
        pytest.skip("no binfmt_misc module in this kernel")
    unload_misc()
    if request.param == "before":
        reload_module(load_misc)
    else:
        load_misc()
    if request.param == "reloaded":
        execs = ExecLoop(public_dir)
        try:
            unload_misc()
            load_misc()
        finally:
            execs.stop()
    entries = []
    yield entries
    for name in entries:
        with open(f"{MISC}/{name}", "w") as f:
            f.write("-1")
    unload_misc()
    if was_loaded:
        run(["modprobe", "binfmt_misc"], env=SBIN)
    if was_mounted:
        run(["mount", "-t", "binfmt_misc", "none", MISC], env=SBIN)


def test_binfmt_misc_changes_no_answer(varsymfs, build, public_dir,
                                       misc_loaded):
    """docs/SPEC.md section 5, issue 19: binfmt_misc loaded after the
    module, before it, or reloaded while execs run.  The user's interpreter
    never runs with a setuid file's credentials (the C flag takes them from
    the file), an ordinary file's interpreter follows execve's envp, and a
    program's own path follows it too: the answers of a module with no
    binfmt_misc at all."""
    good, evil = interp_universes(public_dir)
    m = varsymfs(f"INTERP,default={good}")
    with open(f"{MISC}/register", "w") as f:
        f.write(f":vstest:E::vstest::{m.link}/interp:C")
    misc_loaded.append("vstest")
    setuid = os.path.join(public_dir, "s.vstest")
    plain = os.path.join(public_dir, "p.vstest")
    for path, mode in ((setuid, 0o4755), (plain, 0o755)):
        with open(path, "w") as f:
            f.write("data\n")
        os.chown(path, 0, 0)
        os.chmod(path, mode)
    env = {"INTERP": evil}
    for _ in range(3):
        p = run([setuid], env=env, user="nobody")
        assert p.out == "real euid=0\n", (p.out, p.err)
        p = run([plain], env=env, user="nobody")
        assert p.out == "FAKE euid=65534\n", (p.out, p.err)
        p = run([m.link + "/interp"], env=env, user="nobody")
        assert p.out == "FAKE euid=65534\n", (p.out, p.err)


def test_a_chain_of_scripts_follows_envp_at_each_interpreter(
        varsymfs, public_dir):
    """A chain of four #! scripts: each file of the execve is recorded
    once (the watch holds six, docs/SEMANTICS.md), and the last script's
    interpreter follows execve's envp.  When the module watched from the
    list of formats, binfmt_misc loaded after it made each file count
    twice, and the interpreter resolved as secure."""
    good, evil = interp_universes(public_dir)
    m = varsymfs(f"INTERP,default={good}")
    interp = m.link + "/interp"
    for name in ("d", "c", "b", "a"):
        path = os.path.join(public_dir, name)
        with open(path, "w") as f:
            f.write(f"#!{interp}\n")
        os.chmod(path, 0o755)
        interp = path
    p = run([interp], env={"INTERP": evil}, user="nobody")
    assert p.out == "FAKE euid=65534\n", (p.out, p.err)


FTRACE_ENABLED = "/proc/sys/kernel/ftrace_enabled"


def write_sysctl(path, value):
    """Writes value to path; the errno on failure, or 0."""
    try:
        with open(path, "w") as f:
            f.write(value)
    except OSError as e:
        return e.errno
    return 0


def exec_answers(m, public_dir, build, roots):
    """(setuid program's output, program's own path's output) for nobody
    with LOADER and INTERP set to the evil universe."""
    from test_secure import gcc_program
    exe = gcc_program(public_dir, m.link + "/ld.so", "suid-prog")
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    setuid = run(["/usr/bin/env", f"LOADER={roots['evil']}", exe], env={},
                 user="nobody")
    own = run(["/usr/bin/env", f"LOADER={roots['evil']}", m.link + "/ld.so"],
              env={}, user="nobody")
    return setuid.out, own.out + own.err


@pytest.mark.attack
def test_the_exec_hook_cannot_be_switched_off_while_mounted(
        varsymfs, build, public_dir):
    """docs/SECURITY.md: root's global switch of the function tracer
    (sysctl kernel.ftrace_enabled=0) would silence the exec hooks in the
    middle of an exec without telling the module: its watch would have
    seen no file, and an interpreter's walk would pass for the program's
    own.  While a varsymfs mount exists the hooks are PERMANENT and the
    switch is refused (EBUSY; 7.x kernels refuse it outright); the setuid
    program's loader stays the real one.  With the module loaded and
    nothing mounted (the hooks go DETACH_DELAY seconds after the last
    umount), nothing is attached, and the switch works."""
    from attack import loader_universes
    if not os.path.exists(FTRACE_ENABLED):
        pytest.skip("no function tracer in this kernel")
    if mounted_at_type("varsymfs"):
        pytest.skip("a varsymfs mount exists already")
    roots = loader_universes(public_dir, build)
    m = varsymfs(f"LOADER,default={roots['good']}")
    err = write_sysctl(FTRACE_ENABLED, "0")
    if err == errno.EOPNOTSUPP:
        pytest.skip("this kernel refuses ftrace_enabled=0 outright")
    try:
        assert err == errno.EBUSY, os.strerror(err) if err else \
            "ftrace_enabled=0 taken while mounted"
        with open(FTRACE_ENABLED) as f:
            assert f.read().strip() == "1"
        setuid, own = exec_answers(m, public_dir, build, roots)
        assert setuid == "real euid=0\n", setuid
        assert "FAKE" in own, own     # the program's own path: envp
        m.stop()
        assert ftrace_off() == 0, \
            "ftrace_enabled=0 refused with nothing mounted"
    finally:
        assert write_sysctl(FTRACE_ENABLED, "1") == 0


@pytest.mark.attack
def test_no_exec_hook_fails_closed(varsymfs, build, public_dir):
    """Where the hooks cannot be attached at the first mount (here:
    mounted while ftrace_enabled=0, which refuses PERMANENT ops), the
    module says so and every walk inside an execve resolves as secure
    until the last umount: the setuid program's loader is the real one.
    Before 6.8 the program's own path is walked inside execve too, and
    gets the default (the execve rule is lost, never the loader rule);
    from 6.8 it is walked before, and the system call alone tells it, as
    on any kernel.  The next mount, with the tracer on, attaches them."""
    from attack import loader_universes
    if not os.path.exists(FTRACE_ENABLED):
        pytest.skip("no function tracer in this kernel")
    if mounted_at_type("varsymfs"):
        pytest.skip("a varsymfs mount exists already")
    roots = loader_universes(public_dir, build)
    log = dmesg()
    err = ftrace_off()
    if err == errno.EOPNOTSUPP:
        pytest.skip("this kernel refuses ftrace_enabled=0 outright: "
                    "no way to make the hooks fail to attach")
    assert err == 0, os.strerror(err)
    try:
        m = varsymfs(f"LOADER,default={roots['good']}")
    finally:
        assert write_sysctl(FTRACE_ENABLED, "1") == 0
    assert "cannot attach to prepare_exec_creds" in dmesg()[len(log):]
    assert hooked_functions() == []
    setuid, own = exec_answers(m, public_dir, build, roots)
    assert setuid == "real euid=0\n", setuid
    release = tuple(map(int, re.findall(r"\d+", os.uname().release)[:2]))
    if release < (6, 8):
        # the default's loader, run as a program: it prints its usage
        assert "FAKE" not in own, own
    else:
        assert "FAKE" in own, own
    m.stop()
    # mounted again with the tracer on, the hooks attach
    m = varsymfs(f"LOADER,default={roots['good']}")
    assert hooked_functions() == sorted(HOOKED)
    assert dmesg()[len(log):].count("cannot attach") == 1
    setuid, own = exec_answers(m, public_dir, build, roots)
    assert setuid == "real euid=0\n" and "FAKE" in own, (setuid, own)


@pytest.mark.attack
def test_exec_in_flight_at_module_load_keeps_the_real_loader(
        build, public_dir, stall):
    """docs/SECURITY.md: any user can load the module and mount it, and a
    setuid program's execve may be anywhere when the first mount attaches
    the exec hooks.  Here nobody's exec of a setuid-root program passes
    security_bprm_check() with no module loaded, and its loader's walk
    (PT_INTERP, through nobody's own slow FUSE link) reaches a varsymfs
    mount made while it waited.  Before 6.8 a walk inside execve with no
    watch was taken for the program's own path: LOADER in nobody's envp
    chose the loader that ran as root (FAKE-LOADER euid=0 on 6.1).  Now
    every exec's watch is made at its start (prepare_exec_creds), and a
    walk inside an execve without one is doubt.  The slow link in PT_INTERP is the test's
    way to hold the exec there for seconds; on a real setuid program the
    window is the time between its two exec steps, which a user can only
    widen (evicting its pages from the cache, for one).  The slow link
    answers once the mount is made (stallfs's "release")."""
    from attack import Bg
    from attack import gcc_program, loader_universes
    roots = loader_universes(public_dir, build)
    vmnt = os.path.join(public_dir, "vm")
    os.mkdir(vmnt)
    # at most 60 s: room for insmod and mount under TCG on a loaded
    # machine; "release" ends the wait as soon as they are done
    st = stall(slow=[f"go:{vmnt}/resolve/ld.so:60000"])
    exe = gcc_program(public_dir, os.path.join(st.dir, "go"), "suid-prog")
    os.chown(exe, 0, 0)
    os.chmod(exe, 0o4755)
    if run(["rmmod", "varsymfs"], env=SBIN).returncode:
        pytest.skip("varsymfs is in use: cannot load it again")
    prog = None
    try:
        prog = Bg(["/usr/bin/env", f"LOADER={roots['evil']}", exe],
                  env={}, user="nobody")
        # the exec waits in the slow LOOKUP of its loader's path
        assert st.bg.wait_line(lambda s: s == "slow go", 15), \
            st.bg.describe()
        run(["insmod", module_path()], env=SBIN, check=True)
        run(["mount", "-t", "varsymfs", "-o",
             f"LOADER,default={roots['good']}", "none", vmnt],
            env=SBIN, check=True)
        st.tell("release")
        assert prog.wait(60) is not None, prog.describe()
        assert prog.text() == "real euid=0", prog.describe()
    finally:
        if prog and prog.p.poll() is None:
            prog.end()
        if mounted_at(vmnt):
            run(["umount", vmnt], env=SBIN)
        if not os.path.exists("/sys/module/varsymfs"):
            run(["insmod", module_path()], env=SBIN, check=True)


@pytest.mark.attack
@pytest.mark.threads
def test_detach_while_marked_execs_end(public_dir):
    """Security round 5, item 5: the hooks' detach ends every watch while
    the watches' own tasks end them too (their task work, at the end of
    each exec).  Before, end_all_watches() ended a watch after dropping its
    bucket's lock, with no reference: a task ending the same watch in that
    window freed it first, and both put the task and freed the watch.  Any
    user drives the detach with a rootless mount and umount in a loop.

    The tests' build detaches at the last umount, not DETACH_DELAY later,
    so that it happens at each of five umounts here (each attach and
    detach patches the kernel's text: seconds under TCG), while four loops
    exec a script whose interpreter is found through the mount, with the
    caller's UNIVERSE (marked execs: a detach kills those it finds).  No
    guest has shown the double free (the window is a few instructions
    wide); what holds is that every detach leaves no watch and no object
    behind: the module unloads (each watch holds a module reference), and
    slub_debug and vm-run find no corruption in the kernel log."""
    rounds = 5
    faulty = faults_build()
    if not os.path.exists(faulty):
        pytest.skip(f"no {faulty} (make kmod)")
    if mounted_at_type("varsymfs"):
        pytest.skip("a varsymfs mount exists already")
    where = os.path.join(public_dir, "detach")
    os.mkdir(where)
    os.chmod(where, 0o755)
    script = os.path.join(public_dir, "through-the-mount")
    with open(script, "w") as f:
        f.write(f"#!{where}/resolve/true\n")
    os.chmod(script, 0o755)
    stop = os.path.join(public_dir, "stop-execs")
    counts = [os.path.join(public_dir, f"ran-{i}") for i in range(4)]
    if run(["rmmod", "varsymfs"], env=SBIN).returncode:
        pytest.skip("varsymfs is in use: cannot load the tests' build")
    loops = []
    try:
        run(["insmod", faulty, "detach_at_once=1"], env=SBIN, check=True)
        for count in counts:
            loops.append(subprocess.Popen(
                ["/bin/sh", "-c", 'n=0; while [ ! -e "$0" ]; do '
                 '"$1" && n=$((n + 1)); done; echo $n >"$2"',
                 stop, script, count],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                env={**SBIN, "UNIVERSE": "/usr/bin"}))
        for _ in range(rounds):
            run(["mount", "-t", "varsymfs", "-o", "UNIVERSE", "none", where],
                env=SBIN, check=True)
            time.sleep(0.05)
            if run(["umount", where], env=SBIN).returncode:
                run(["umount", "-l", where], env=SBIN, check=True)
    finally:
        open(stop, "w").close()
        for p in loops:
            try:
                p.wait(timeout=60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if mounted_at(where):
            run(["umount", "-l", where], env=SBIN)
        assert unhooked_within(), "hooked after the last umount"
        # every watch gone: nothing holds the module
        deadline = time.monotonic() + 10
        while run(["rmmod", "varsymfs"], env=SBIN).returncode:
            assert time.monotonic() < deadline, "the tests' build stays in use"
            time.sleep(0.2)
        run(["insmod", module_path()], env=SBIN, check=True)
    ran = sum(int(open(c).read() or 0) for c in counts if os.path.exists(c))
    print(f"{rounds} mounts and detaches; {ran} execs through the mount ran")
    assert ran > 0, "no exec through the mount ran"
    assert not re.search(r"BUG|double free|Poison overwritten", dmesg())

"""collectors/collect.sh, run for real on this machine.

The collector runs as root and as an unprivileged user; its archive must be a
well-formed snapshot (manifest.json in the agreed format, every listed file
present, no unsafe member names) that ``collectors.archive.load`` analyses
without a parse error. Redaction, MySQL collection, timeouts, missing commands
and the upload are exercised against real processes (MariaDB, a local HTTP
server), never mocks.
"""

from __future__ import annotations

import http.server
import io
import ipaddress
import json
import os
import re
import shutil
import socket
import subprocess
import tarfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import IN_CI, ROOT, port_open, service_unavailable

SCRIPT = ROOT / "collectors" / "collect.sh"
MANIFEST_KEYS = {"collector_version", "hostname", "time", "user", "privileged", "commands", "files"}
COMMAND_KEYS = {"name", "command", "file", "exit_code", "duration_s", "kind"}
FILE_KEYS = {"path", "kind"}
# The commands of one run: the 1-second samplers (mpstat, sar, iostat) make a
# run take about 4 s, so archives are built once per session and shared.
RUN_TIMEOUT = 180


def _readable_copy() -> Path:
    """The script in a directory every user can read. The clone may live where
    other users cannot (a 0700 home, ``mktemp -d``), and the unprivileged
    account must still open the script and have a working directory."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="casebook-collect-script-"))
    folder.chmod(0o755)
    copy = folder / SCRIPT.name
    shutil.copyfile(SCRIPT, copy)
    copy.chmod(0o755)
    return copy


def _run(args, *, env=None, user=None, cwd=None, timeout=RUN_TIMEOUT, shell="dash"):
    script = _readable_copy() if user else SCRIPT
    cmd = [shell, str(script), *args]
    if user:
        import pwd

        account = pwd.getpwnam(user)
        cmd = [
            "setpriv",
            f"--reuid={account.pw_uid}",
            f"--regid={account.pw_gid}",
            "--clear-groups",
            "--",
            *cmd,
        ]
        cwd = cwd or script.parent
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout, check=False
        )
    finally:
        if user:
            shutil.rmtree(script.parent, ignore_errors=True)


def _collect(out_dir: Path, *args, user=None, env=None, shell="dash") -> Path:
    archive = out_dir / "snapshot.tar.gz"
    proc = _run(["--quiet", "--output", str(archive), *args], user=user, env=env, shell=shell)
    assert proc.returncode == 0, f"collect.sh failed ({proc.returncode}): {proc.stderr}"
    assert proc.stdout.strip() == str(archive)
    return archive


def _members(archive: Path) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(archive) as tar:
        return {m.name: m for m in tar.getmembers()}


def _read(archive: Path, name: str) -> bytes:
    with tarfile.open(archive) as tar:
        f = tar.extractfile(name)
        assert f is not None, name
        return f.read()


def _manifest(archive: Path) -> dict:
    return json.loads(_read(archive, "manifest.json"))


def _all_bytes(archive: Path) -> bytes:
    with tarfile.open(archive) as tar:
        return b"\n".join(tar.extractfile(m).read() for m in tar.getmembers() if m.isfile())


def _load_host(archive: Path):
    from collectors.archive import load

    return load(archive, split=False).host


def _unprivileged_user() -> str:
    for name in ("nobody", "daemon"):
        if subprocess.run(["id", "-u", name], capture_output=True, check=False).returncode == 0:
            return name
    pytest.fail("no unprivileged account (nobody/daemon) on this machine")


def _need_root(what: str) -> None:
    if os.geteuid() != 0:
        service_unavailable(f"{what} needs root (this test runs as uid {os.geteuid()})")


def _shared_dir(tmp_path_factory, name: str) -> Path:
    # World-writable so that the unprivileged run can write its archive.
    d = tmp_path_factory.mktemp(name)
    d.chmod(0o777)
    return d


def _unprivileged_collect() -> Path:
    import pwd
    import tempfile

    user = _unprivileged_user()
    # pytest's own temp root is private to root: the unprivileged user gets a
    # directory of its own under the system temp dir.
    out = Path(tempfile.mkdtemp(prefix="casebook-collect-user-"))
    account = pwd.getpwnam(user)
    os.chown(out, account.pw_uid, account.pw_gid)
    env = {**os.environ, "TMPDIR": str(out), "HOME": str(out)}
    try:
        archive = _collect(out, user=user, env=env)
        # keep a root-owned copy: the tests read it after the directory goes
        copy = Path(tempfile.mkdtemp(prefix="casebook-collect-copy-")) / "snapshot.tar.gz"
        shutil.copy(archive, copy)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return copy


@pytest.fixture(scope="session")
def session_runs(tmp_path_factory, background_runs) -> dict[str, Future]:
    """The three shared archives (root, unprivileged, --redact) are built at
    the same time: each run mostly waits for its 1-second samplers. The
    whole runs under other shells and userlands (``background_runs``)
    start with them."""
    _need_root("the privileged, unprivileged and redacted collector runs")
    with ThreadPoolExecutor(max_workers=3) as pool:
        runs = {
            "root": pool.submit(_collect, _shared_dir(tmp_path_factory, "collect-root")),
            "unprivileged": pool.submit(_unprivileged_collect),
            "redacted": pool.submit(_collect, _shared_dir(tmp_path_factory, "collect-redact"), "--redact"),
        }
        yield runs
    if runs["unprivileged"].exception() is None:
        shutil.rmtree(runs["unprivileged"].result().parent, ignore_errors=True)


@pytest.fixture(scope="session")
def root_archive(session_runs) -> Path:
    _need_root("the privileged collector run")
    return session_runs["root"].result()


@pytest.fixture(scope="session")
def unprivileged_archive(session_runs) -> Path:
    _need_root("switching to an unprivileged user")
    return session_runs["unprivileged"].result()


@pytest.fixture(params=["root", "unprivileged"])
def archive(request) -> Path:
    return request.getfixturevalue(f"{request.param}_archive")


# ------------------------------------------------------------------ script


def test_syntax_with_sh_and_dash():
    for shell in ("sh", "dash"):
        if shutil.which(shell) is None:
            pytest.fail(f"{shell} is missing")
        proc = subprocess.run([shell, "-n", str(SCRIPT)], capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stderr


def test_shellcheck_clean():
    if shutil.which("shellcheck") is None:
        if IN_CI:
            pytest.fail("shellcheck is not installed (CI installs the Debian package)")
        pytest.skip("shellcheck is not installed")
    proc = subprocess.run(
        ["shellcheck", "-s", "sh", str(SCRIPT)], capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stdout


def test_help_documents_every_option():
    proc = _run(["--help"])
    assert proc.returncode == 0
    for option in re.findall(r"^\s+(--[a-z-]+)\)", SCRIPT.read_text(), flags=re.M):
        assert option in proc.stdout, f"{option} is not in --help"
    assert "manifest.json" in proc.stdout


def test_usage_errors_exit_2():
    assert _run(["--no-such-option"]).returncode == 2
    assert _run(["--output"]).returncode == 2
    assert _run(["--timeout", "soon"]).returncode == 2
    proc = _run(
        ["--upload", "http://127.0.0.1:9/"],
        env={k: v for k, v in os.environ.items() if k != "CASEBOOK_TOKEN"},
    )
    assert proc.returncode == 2 and "--token" in proc.stderr


# ----------------------------------------------------------------- archive


def test_manifest_format(archive):
    manifest = _manifest(archive)
    assert set(manifest) == MANIFEST_KEYS
    assert manifest["collector_version"] == "1.0"
    assert manifest["hostname"] == socket.gethostname() or manifest["hostname"].startswith(
        socket.gethostname()
    )
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", manifest["time"])
    assert isinstance(manifest["privileged"], bool)
    for entry in manifest["commands"]:
        assert set(entry) == COMMAND_KEYS, entry
        assert isinstance(entry["exit_code"], int)
        assert isinstance(entry["duration_s"], float | int) and entry["duration_s"] >= 0
        assert entry["file"] == f"commands/{entry['name']}.txt"
    for entry in manifest["files"]:
        assert set(entry) == FILE_KEYS, entry
    names = [c["name"] for c in manifest["commands"]]
    assert len(names) == len(set(names))
    # This machine has all of these installed; each ran and succeeded.
    ok = {c["name"] for c in manifest["commands"] if c["exit_code"] == 0}
    assert {"lscpu", "numactl_hardware", "numastat", "sysctl", "uname", "top", "df", "tc_qdisc"} <= ok
    paths = {f["path"] for f in manifest["files"]}
    assert {"proc/meminfo", "proc/cmdline", "proc/interrupts", "proc/softirqs", "proc/zoneinfo"} <= paths


def test_privileged_flag_and_user(root_archive, unprivileged_archive):
    root, user = _manifest(root_archive), _manifest(unprivileged_archive)
    assert root["privileged"] is True and root["user"] == "root"
    assert user["privileged"] is False and user["user"] == _unprivileged_user()


def test_every_listed_file_is_in_the_archive(archive):
    manifest = _manifest(archive)
    members = _members(archive)
    listed = [c["file"] for c in manifest["commands"]] + [f["path"] for f in manifest["files"]]
    for name in listed:
        assert name in members and members[name].isfile(), name
    # and nothing but directories, the listed files, the manifest and the log
    extra = {n for n, m in members.items() if m.isfile()} - set(listed) - {"manifest.json", "collector.log"}
    assert not extra


def test_member_names_are_safe(archive):
    for name, member in _members(archive).items():
        assert not name.startswith(("/", "./")), name
        assert ".." not in Path(name).parts, name
        assert member.isfile() or member.isdir(), f"{name} is neither a file nor a directory"


def test_archive_analyses_without_parse_errors(archive):
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    lscpu_cpus = int(re.search(r"^CPU\(s\):\s+(\d+)", subprocess.check_output(["lscpu"], text=True), re.M)[1])
    assert host.cpu is not None and host.cpu.cpus == lscpu_cpus
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    assert host.meminfo is not None
    assert host.meminfo.values["MemTotal"] == int(meminfo["MemTotal"].split()[0])
    assert host.sysctl is not None and "vm.swappiness" in host.sysctl.values
    nodes = sorted(int(p.name[4:]) for p in Path("/sys/devices/system/node").glob("node[0-9]*"))
    assert host.numa is not None and sorted(host.numa.nodes) == nodes
    assert host.interrupts is not None and host.softirqs is not None
    assert host.cpu_usage is not None
    # parsers-mem: free, vmstat, lscpu -p and dmidecode -t memory are collected and read
    assert host.meminfo.origin == "proc" and "BuffCache" in host.meminfo.values
    assert host.vmstat is not None and len(host.vmstat.samples) == 3
    kinds = {a["kind"] for a in host.artifacts}
    assert {"free_kb", "vmstat", "dmidecode_memory"} <= kinds
    # issue 27's host tuning rules: /proc/vmstat, the KSM files and the block schedulers of this
    # machine are collected and read (it has no cpufreq: a guest, so no governor either way)
    assert host.proc_vmstat is not None and "pgfault" in host.proc_vmstat.values
    if Path("/sys/kernel/mm/ksm/run").exists():
        ksm_run = int(Path("/sys/kernel/mm/ksm/run").read_text())
        assert host.ksm is not None and host.ksm.values["run"] == ksm_run
    schedulers = sorted(p.parent.parent.name for p in Path("/sys/block").glob("*/queue/scheduler"))
    if schedulers:
        assert host.io_schedulers is not None and sorted(host.io_schedulers.active) == schedulers
    if not Path("/sys/devices/system/cpu/cpu0/cpufreq").exists() and not shutil.which("cpupower"):
        assert "scaling_governor" not in kinds and "cpupower" not in kinds
    assert sum(1 for a in host.artifacts if a["kind"] == "lscpu") >= 2


def test_unprivileged_run_records_exit_codes(unprivileged_archive):
    manifest = _manifest(unprivileged_archive)
    log = _read(unprivileged_archive, "collector.log").decode()
    assert "privileged: false" in log
    # virsh, when installed, cannot reach a system libvirtd as nobody; the
    # failure is recorded rather than hidden.
    virsh = [c for c in manifest["commands"] if c["name"].startswith("virsh")]
    if shutil.which("virsh"):
        assert virsh and all(isinstance(c["exit_code"], int) for c in virsh)


def _busybox_collect(tmp_path: Path) -> Path:
    busybox = shutil.which("busybox")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in [*CORE, "timeout", "hostname"]:
        (bindir / tool).symlink_to(busybox)
    # the probed commands (lscpu, numactl ...) still come from the system
    env = {"PATH": f"{bindir}:/usr/sbin:/usr/bin:/sbin:/bin", "TMPDIR": str(tmp_path)}
    return _collect(tmp_path, "--redact", env=env, shell=str(bindir / "sh"))


def _stdin_collect(tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess]:
    archive = tmp_path / "remote.tar.gz"
    with SCRIPT.open("rb") as script, archive.open("wb") as out:
        proc = subprocess.run(
            ["dash", "-s", "--", "--output", "-"],
            stdin=script,
            stdout=out,
            stderr=subprocess.PIPE,
            timeout=RUN_TIMEOUT,
            check=False,
        )
    return archive, proc


UTS_NAME = "cbredact-db07.example.net"


def _uts_collect(tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess]:
    archive = tmp_path / "snapshot.tar.gz"
    proc = subprocess.run(
        [
            "unshare",
            "-u",
            "sh",
            "-c",
            f'hostname {UTS_NAME} && exec dash "$0" --quiet --redact --redact-name peer-db08 '
            f"--output {archive}",
            str(SCRIPT),
        ],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT,
        check=False,
    )
    return archive, proc


def _ping_collect(tmp_path: Path) -> Path:
    bindir = _fake_bin(tmp_path, [*CORE, "timeout", "ping"], {})
    env = {"PATH": str(bindir), "TMPDIR": str(tmp_path)}
    return _collect(tmp_path, "--ping", "127.0.0.1", "--ping", "-f", env=env)


@pytest.fixture(scope="session")
def background_runs(tmp_path_factory) -> dict[str, Future]:
    """The whole collector runs under bash, posh, busybox, from standard
    input, in a private UTS namespace and with --ping, started at the same
    time (with the shared archives of ``session_runs``): each waits seconds
    for its samplers and pings and uses about one second of CPU, so one after
    the other they took most of this file's time. A run whose tool is missing
    is not started; its test skips or fails on the missing tool first."""
    with ThreadPoolExecutor(max_workers=6) as pool:
        runs: dict[str, Future] = {}

        def start(name: str, needs: str | None, fn, *args, **kwargs) -> None:
            if needs is None or shutil.which(needs):
                runs[name] = pool.submit(fn, tmp_path_factory.mktemp(f"collect-{name}"), *args, **kwargs)

        start("bash", "bash", _collect, shell="bash")  # noqa: S604 (the shell that runs the script)
        start("posh", "posh", _collect, shell="posh")  # noqa: S604 (the shell that runs the script)
        start("busybox", "busybox", _busybox_collect)
        start("stdin", None, _stdin_collect)
        if os.geteuid() == 0:
            start("uts", "unshare", _uts_collect)
        start("ping", "ping", _ping_collect)
        yield runs


def test_runs_with_bash_too(background_runs):
    if shutil.which("bash") is None:
        pytest.fail("bash is missing")
    archive = background_runs["bash"].result()
    assert "manifest.json" in _members(archive)


def _need_tool(tool: str, package: str) -> str:
    path = shutil.which(tool)
    if path is None:
        if IN_CI:
            pytest.fail(f"{tool} is not installed (CI installs the Debian package {package})")
        pytest.skip(f"{tool} is not installed (Debian package {package})")
    return path


def test_runs_under_posh_a_strict_posix_shell(background_runs):
    """posh rejects what POSIX does not define (local, arrays, [[ ]], ...)."""
    _need_tool("posh", "posh")
    archive = background_runs["posh"].result()
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert host.cpu is not None and host.meminfo is not None


def test_runs_on_a_busybox_userland(background_runs):
    """Minimal systems: busybox's sh, awk, sed, tar, date (no %N), timeout
    (``_busybox_collect``)."""
    _need_tool("busybox", "busybox")
    archive = background_runs["busybox"].result()
    manifest = _manifest(archive)
    assert manifest["hostname"] == "host-1"
    assert {"lscpu", "sysctl", "top"} <= {c["name"] for c in manifest["commands"] if c["exit_code"] == 0}
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert host.cpu is not None and host.sysctl is not None


def test_script_on_stdin_archive_on_stdout(background_runs):
    """``ssh HOST sh -s -- --output - <collect.sh >HOST.tar.gz``: the script is
    read from standard input while it runs, so no command may read stdin, and
    standard output carries nothing but the archive (``_stdin_collect``)."""
    archive, proc = background_runs["stdin"].result()
    assert proc.returncode == 0, proc.stderr
    manifest = _manifest(archive)
    ok = {c["name"] for c in manifest["commands"] if c["exit_code"] == 0}
    assert {"lscpu", "sysctl", "top", "mpstat", "df"} <= ok
    assert "proc/zoneinfo" in {f["path"] for f in manifest["files"]}
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert _run(["--output", "-", "--upload", "http://127.0.0.1:9/", "--token", "t"]).returncode == 2


def test_ping_measures_round_trips(background_runs):
    _need_tool("ping", "iputils-ping")
    archive = background_runs["ping"].result()  # --ping 127.0.0.1 --ping -f
    manifest = _manifest(archive)
    ping = next(c for c in manifest["commands"] if c["kind"] == "ping")
    assert ping["command"] == "ping -c 20 -i 0.2 127.0.0.1" and ping["exit_code"] == 0
    assert "skipped ping target -f" in _read(archive, "collector.log").decode()  # no option injection
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    (result,) = host.pings
    assert result.target == "127.0.0.1" and result.transmitted == 20 and result.received == 20
    assert result.rtt_avg_ms is not None and result.rtt_avg_ms < 5


# ----------------------------------------------------------------- redaction


def _local_addresses() -> set[str]:
    out = subprocess.run(["ip", "-o", "addr", "show"], capture_output=True, text=True, check=False).stdout
    found = set()
    for m in re.finditer(r"\binet6?\s+([0-9a-fA-F:.]+)/", out):
        ip = ipaddress.ip_address(m[1])
        if not (ip.is_loopback or ip.is_unspecified):
            found.add(str(ip))
    return found


def _names_in(blob: str, name: str) -> list[str]:
    """Occurrences of ``name`` as a host name (not inside vm.swappiness or kvm)."""
    pattern = rf"(?<![\w.-]){re.escape(name)}(?![\w-])(?!\.[A-Za-z0-9])"
    return [blob[max(0, m.start() - 40) : m.end() + 40] for m in re.finditer(pattern, blob)]


@pytest.fixture(scope="session")
def redacted_archive(session_runs) -> Path:
    _need_root("the redaction run (it reads the root-only files too)")
    return session_runs["redacted"].result()


def test_redact_removes_hostname_and_addresses(redacted_archive):
    blob = _all_bytes(redacted_archive).decode("utf-8", "replace")
    hostnames = {socket.gethostname(), socket.gethostname().split(".")[0], os.uname().nodename}
    for name in hostnames:
        assert not _names_in(blob, name), (name, _names_in(blob, name)[:5])
    addresses = _local_addresses()
    assert addresses, "this machine has no non-loopback address to test with"
    for addr in addresses:
        assert addr not in blob, addr
    assert "host-1" in blob
    assert _manifest(redacted_archive)["hostname"] == "host-1"


def test_redact_leaves_keys_intact_and_no_mapping(redacted_archive, root_archive):
    redacted, plain = _members(redacted_archive), _members(root_archive)
    # the same members, nothing added (the mapping stays out of the archive)
    assert {n for n, m in redacted.items() if m.isfile()} == {n for n, m in plain.items() if m.isfile()}
    uname = _read(redacted_archive, "commands/uname.txt").decode()
    sysctl = _read(redacted_archive, "commands/sysctl.txt").decode()
    assert "host-1" in uname
    assert "kernel.hostname = host-1" in sysctl
    # sysctl keys that merely start with a short host name stay intact
    assert "vm.swappiness" in sysctl
    assert sysctl.count("\n") == _read(root_archive, "commands/sysctl.txt").decode().count("\n")


DF_WITH_NFS = """\
Filesystem                1K-blocks     Used  Available Use% Mounted on
/dev/vda1                  41152812  9876543   29163721  26% /
192.0.2.10:/export/data  1073741824 52428800 1021313024   5% /data
[fd00::10]:/export/logs   104857600  1048576  103809024   1% /logs
10.20.30.40:/backup        10485760        0   10485760   0% /backup
127.0.0.1:/loop            10485760        0   10485760   0% /mnt/loop
"""

DOMAIN_WITH_ADDRESSES = """\
<domain type='kvm'>
  <name>db01</name>
  <vcpu placement='static'>4</vcpu>
  <memory unit='KiB'>8388608</memory>
  <devices>
    <disk type='network' device='disk'>
      <source protocol='rbd' name='volumes/db01-data'>
        <host name='192.0.2.10' port='6789'/>
        <host name='fd00::10' port='6789'/>
        <host name='198.51.100.7' port='6789'/>
      </source>
      <target dev='vdb' bus='virtio'/>
    </disk>
    <interface type='bridge'>
      <mac address='52:54:00:12:34:56'/>
    </interface>
    <graphics type='vnc' port='5900' listen='0.0.0.0'/>
  </devices>
</domain>
"""


def test_redact_replaces_addresses_consistently(tmp_path):
    """NFS servers in df and Ceph monitors in a domain XML: real places where
    other hosts' addresses appear. Each address gets one label in every file."""
    virsh = (
        'case "$*" in\n'
        '  version) printf "Using library: libvirt 9.0.0\\nRunning hypervisor: QEMU 7.2.0\\n" ;;\n'
        '  "list --all") printf " Id   Name   State\\n-------------------\\n 1    db01   running\\n" ;;\n'
        '  "list --all --name") echo db01 ;;\n'
        "  capabilities) exit 1 ;;\n"
        f"  dumpxml*) cat <<'XML'\n{DOMAIN_WITH_ADDRESSES}XML\n ;;\n"
        "esac\n"
    )
    df = f"cat <<'DF'\n{DF_WITH_NFS}DF\n"
    bindir = _fake_bin(tmp_path, [*CORE, "timeout"], {"virsh": virsh, "df": df})
    env = {"PATH": str(bindir), "TMPDIR": str(tmp_path)}
    archive = _collect(tmp_path, "--redact", env=env)
    df_out = _read(archive, "commands/df.txt").decode()
    xml = _read(archive, "commands/virsh_dumpxml_db01.txt").decode()
    blob = _all_bytes(archive).decode()
    for addr in ("192.0.2.10", "fd00::10", "10.20.30.40", "198.51.100.7"):
        assert addr not in blob, addr
    nfs = re.search(r"^(ip-\d+):/export/data", df_out, re.M)[1]
    nfs6 = re.search(r"^\[(ip-\d+)\]:/export/logs", df_out, re.M)[1]
    backup = re.search(r"^(ip-\d+):/backup", df_out, re.M)[1]
    mons = re.findall(r"<host name='(ip-\d+)'", xml)
    assert mons[:2] == [nfs, nfs6]  # the same address, the same label, across files
    assert len({nfs, nfs6, backup, mons[2]}) == 4
    # not addresses, or not identifying: kept
    assert "127.0.0.1:/loop" in df_out
    assert "listen='0.0.0.0'" in xml
    assert "52:54:00:12:34:56" in xml
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert any(fs.filesystem == f"{nfs}:/export/data" for fs in host.df.filesystems)
    assert host.domains and host.domains[0].name == "db01"


def test_redact_hostname_in_private_uts_namespace(background_runs):
    """A distinctive host name (set in a new UTS namespace) must vanish
    entirely (``_uts_collect``)."""
    _need_root("unshare -u")
    if "uts" not in background_runs:
        pytest.fail("unshare is missing")
    archive, proc = background_runs["uts"].result()
    if proc.returncode != 0 and "unshare" in proc.stderr:
        service_unavailable(f"cannot create a UTS namespace here: {proc.stderr.strip()}")
    assert proc.returncode == 0, proc.stderr
    blob = _all_bytes(archive).decode("utf-8", "replace")
    assert "cbredact" not in blob
    assert "Linux host-1 " in _read(archive, "commands/uname.txt").decode()
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]


def test_redacted_archive_still_analyses(redacted_archive):
    host = _load_host(redacted_archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert host.cpu is not None and host.meminfo is not None


# ------------------------------------------------------------ robustness


def _fake_bin(tmp_path: Path, tools: list[str], scripts: dict[str, str]) -> Path:
    """A PATH holding only ``tools`` (links to the real ones) and fake ``scripts``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in tools:
        real = shutil.which(tool)
        assert real, f"{tool} is needed by this test"
        (bindir / tool).symlink_to(real)
    for name, body in scripts.items():
        path = bindir / name
        path.write_text("#!/bin/sh\n" + body)
        path.chmod(0o755)
    return bindir


# What the collector itself needs: POSIX sh utilities and coreutils.
CORE = [
    "sh", "dash", "cat", "date", "mkdir", "rm", "mv", "ls", "tr", "sed", "awk", "head", "dirname",
    "id", "uname", "tar", "gzip", "find", "cut", "sleep", "mktemp",
]  # fmt: skip


def test_missing_commands_are_skipped(tmp_path):
    import time

    bindir = _fake_bin(tmp_path, CORE, {})
    env = {"PATH": str(bindir), "TMPDIR": str(tmp_path)}
    started = time.monotonic()
    archive = _collect(tmp_path, env=env)
    # No `timeout` here: the shell watchdog guards each file read, and must
    # let go as soon as the read ends (a stalled watchdog costs 30 s a file).
    assert time.monotonic() - started < 25
    manifest = _manifest(archive)
    # uname is coreutils, so the one command left
    assert [c["name"] for c in manifest["commands"]] == ["uname"]
    assert {f["path"] for f in manifest["files"]} >= {"proc/meminfo", "proc/cmdline"}
    log = _read(archive, "collector.log").decode()
    assert "skipped lscpu: lscpu not found" in log
    assert "skipped libvirt: virsh not found" in log
    assert "timeout mode: none" in log
    assert manifest["hostname"] == os.uname().nodename  # from uname -n when hostname is missing
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert host.meminfo is not None


@pytest.mark.parametrize("with_timeout_binary", [True, False], ids=["coreutils-timeout", "shell-watchdog"])
def test_hanging_command_is_cut_off(tmp_path, with_timeout_binary):
    tools = CORE + (["timeout"] if with_timeout_binary else [])
    bindir = _fake_bin(tmp_path, tools, {"lscpu": "echo partial\nexec sleep 60\n"})
    env = {"PATH": str(bindir), "TMPDIR": str(tmp_path)}
    proc = _run(["--quiet", "--timeout", "1", "--output", str(tmp_path / "a.tar.gz")], env=env, timeout=40)
    assert proc.returncode == 0, proc.stderr
    manifest = _manifest(tmp_path / "a.tar.gz")
    lscpu = next(c for c in manifest["commands"] if c["name"] == "lscpu")
    assert lscpu["exit_code"] != 0
    assert 0.9 <= lscpu["duration_s"] < 15
    assert _read(tmp_path / "a.tar.gz", "commands/lscpu.txt") == b"partial\n"


def test_json_escaping_of_odd_values(tmp_path):
    # A domain name with quotes, backslashes and a tab reaches the manifest.
    dom = 'we"ird\\dom\tname'
    virsh = (
        'case "$*" in\n'
        '  version) echo "Compiled against library: libvirt 9.0.0"; echo "Using library: libvirt 9.0.0";'
        ' echo "Running hypervisor: QEMU 7.2.0" ;;\n'
        '  "list --all") printf " Id   Name   State\\n----------------\\n"; '
        f"printf \" 1    %s   running\\n\" '{dom}' ;;\n"
        f"  \"list --all --name\") printf '%s\\n' '{dom}' ;;\n"
        "  capabilities) echo '<capabilities><host><cpu><arch>x86_64</arch></cpu></host></capabilities>' ;;\n"
        "  dumpxml*) echo \"<domain type='kvm'><name>x</name><vcpu>2</vcpu>"
        '<memory>1024</memory></domain>" ;;\n'
        "esac\n"
    )
    bindir = _fake_bin(tmp_path, [*CORE, "timeout"], {"virsh": virsh})
    env = {"PATH": str(bindir), "TMPDIR": str(tmp_path)}
    archive = _collect(tmp_path, env=env)
    manifest = _manifest(archive)  # json.loads succeeds: escaping is right
    dump = next(c for c in manifest["commands"] if c["kind"] == "libvirt_domain")
    assert dump["command"] == f"virsh dumpxml {dom}"
    assert dump["file"] == "commands/virsh_dumpxml_we_ird_dom_name.txt"


# --------------------------------------------------------------------- MySQL


@pytest.fixture(scope="session")
def mariadb() -> dict:
    if not port_open("127.0.0.1", 3306):
        service_unavailable("MariaDB is not listening on 127.0.0.1:3306")
    if shutil.which("mysql") is None and shutil.which("mariadb") is None:
        service_unavailable("no mysql/mariadb client installed")
    return {"host": "127.0.0.1", "port": 3306, "user": "root", "password": ""}


def _defaults_file(path: Path, creds: dict) -> Path:
    path.write_text(
        "[client]\n"
        f"user={creds['user']}\npassword={creds['password']}\nhost={creds['host']}\nport={creds['port']}\n"
    )
    path.chmod(0o600)
    return path


def _sql(creds: dict, query: str, *, fmt: str = "-B") -> str:
    client = shutil.which("mysql") or shutil.which("mariadb")
    with _tmp_defaults(creds) as f:
        return subprocess.run(
            [client, f"--defaults-file={f}", fmt, "-e", query], capture_output=True, text=True, check=True
        ).stdout


class _tmp_defaults:
    def __init__(self, creds):
        import tempfile

        self.dir = tempfile.TemporaryDirectory()
        self.path = _defaults_file(Path(self.dir.name) / "my.cnf", creds)

    def __enter__(self):
        return self.path

    def __exit__(self, *exc):
        self.dir.cleanup()


def _readable_error_log(creds: dict) -> str | None:
    """The server's error log file, if this machine can read it (not so when the
    server runs in another container or host, or logs to the journal)."""
    log_error = _sql(creds, "SELECT @@log_error").splitlines()[1]
    return log_error if log_error.startswith("/") and os.access(log_error, os.R_OK) else None


def test_mysql_with_defaults_file(tmp_path, mariadb):
    cnf = _defaults_file(tmp_path / "client.cnf", mariadb)
    # the database part only: no 1-second samplers (mpstat, sar, iostat)
    client = "mysql" if shutil.which("mysql") else "mariadb"
    bindir = _fake_bin(tmp_path, [*CORE, "timeout", "tail", client], {})
    env = {"PATH": str(bindir), "TMPDIR": str(tmp_path)}
    archive = _collect(tmp_path, "--mysql-defaults-file", str(cnf), env=env)
    manifest = _manifest(archive)
    by_name = {c["name"]: c for c in manifest["commands"]}
    assert by_name["mysql_variables"]["exit_code"] == 0
    assert by_name["mysql_variables"]["kind"] == "mysql_variables"
    assert by_name["mysql_version"]["exit_code"] == 0
    # collect.sh adds the error log exactly when it can read the server's file
    assert ("mysql_error_log" in by_name) == (_readable_error_log(mariadb) is not None)
    assert str(cnf) not in json.dumps(manifest)
    server_version = _sql(mariadb, "SELECT VERSION()").splitlines()[1]
    buffer_pool = _sql(mariadb, "SELECT @@innodb_buffer_pool_size").splitlines()[1]
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert host.database is not None
    assert host.database.version == server_version
    assert host.database.variables["innodb_buffer_pool_size"] == buffer_pool
    assert host.database.kind == "mariadb"


def test_mysql_error_log_keeps_the_last_start_up(tmp_path, mariadb):
    """A tail of 3 lines plus the server's last start-up section."""
    log_error = _readable_error_log(mariadb)
    if log_error is None:
        service_unavailable("MariaDB's error log is not a readable file on this machine (server elsewhere?)")
        return
    cnf = _defaults_file(tmp_path / "client.cnf", mariadb)
    client = "mysql" if shutil.which("mysql") else "mariadb"
    bindir = _fake_bin(tmp_path, [*CORE, "timeout", client], {})
    env = {"PATH": str(bindir), "TMPDIR": str(tmp_path)}
    archive = _collect(tmp_path, "--mysql-defaults-file", str(cnf), "--log-lines", "3", env=env)
    excerpt = _read(archive, "commands/mysql_error_log.txt").decode().splitlines()
    log = Path(log_error).read_text(errors="replace").splitlines()
    starts = [i for i, line in enumerate(log) if re.search(r"[Ss]tarting .*as process", line)]
    assert starts, "the server log has no start-up line"
    assert excerpt[0] == log[starts[-1]]
    assert len(excerpt) <= 303
    assert all(line in log for line in excerpt[-3:])
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert host.database is not None and host.database.events


def test_mysql_credentials_from_environment_never_on_a_command_line(tmp_path, mariadb):
    user, password = "casebook_collector", "Sentinel-Pw-7731"
    _sql(
        mariadb,
        f"CREATE USER IF NOT EXISTS '{user}'@'127.0.0.1' IDENTIFIED BY '{password}'; "
        f"ALTER USER '{user}'@'127.0.0.1' IDENTIFIED BY '{password}'; "
        f"GRANT SELECT ON *.* TO '{user}'@'127.0.0.1'",
    )
    try:
        _collect_with_env_credentials(tmp_path, mariadb, user, password)
    finally:
        _sql(mariadb, f"DROP USER IF EXISTS '{user}'@'127.0.0.1'")


def _collect_with_env_credentials(tmp_path, mariadb, user, password):
    # A ps watcher would be racy; instead every client invocation goes
    # through a wrapper that records its argv.
    argv_log = tmp_path / "argv.log"
    real = shutil.which("mysql") or shutil.which("mariadb")
    wrapper = f'printf "%s\\n" "$*" >> {argv_log}\nexec {real} "$@"\n'
    bindir = _fake_bin(tmp_path, [*CORE, "timeout", "tail"], {"mysql": wrapper})
    env = {
        "PATH": str(bindir),
        "TMPDIR": str(tmp_path),
        "MYSQL_HOST": "127.0.0.1",
        "MYSQL_TCP_PORT": "3306",
        "MYSQL_USER": user,
        "MYSQL_PWD": password,
    }
    archive = _collect(tmp_path, "--mysql", env=env)
    argv = argv_log.read_text()
    assert "SHOW GLOBAL VARIABLES" in argv
    assert password not in argv
    assert password.encode() not in _all_bytes(archive)
    variables = _read(archive, "commands/mysql_variables.txt").decode()
    assert "innodb_buffer_pool_size" in variables
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]
    assert host.database is not None and host.database.variables


def test_oceanbase_against_a_server_without_oceanbase(tmp_path, mariadb):
    """--oceanbase against MariaDB: the OceanBase statements fail there; each
    failure is recorded with its exit code and costs the analysis nothing."""
    cnf = _defaults_file(tmp_path / "ob.cnf", mariadb)
    bindir = _fake_bin(tmp_path, [*CORE, "timeout", "mysql" if shutil.which("mysql") else "mariadb"], {})
    env = {"PATH": str(bindir), "TMPDIR": str(tmp_path)}
    archive = _collect(tmp_path, "--ob-defaults-file", str(cnf), env=env)
    by_name = {c["name"]: c for c in _manifest(archive)["commands"]}
    for name in ("oceanbase_parameters", "sql_audit_plan_types", "odp_proxyconfig"):
        assert by_name[name]["kind"] == name
        assert by_name[name]["exit_code"] != 0
        assert " -t -e " in by_name[name]["command"]
    log = _read(archive, "collector.log").decode()
    assert "gv$sql_audit" in log  # the server's error is kept for the engineer
    host = _load_host(archive)
    assert host.errors == [], [f"{e.artifact}: {e.message}" for e in host.errors]


def test_oceanbase_result_format_reads_with_our_parsers(mariadb):
    """The collector asks OceanBase/ODP for the client's boxed table (-t).

    No OceanBase server is available here, so MariaDB produces result sets of
    the same shape (SHOW PARAMETERS, SHOW PROXYCONFIG, the gv$sql_audit
    count) through the same client and output option, and the parsers of
    those kinds must read them.
    """
    from collectors.parsers import load_all

    parsers = load_all()
    parameters = _sql(
        mariadb,
        "SELECT 'zone1' AS zone, 'observer' AS svr_type, '10.0.0.1' AS svr_ip, 2882 AS svr_port, "
        "'cpu_quota_concurrency' AS name, 'DOUBLE' AS data_type, '4' AS value, 'concurrency' AS info, "
        "'TENANT' AS section, 'TENANT' AS scope, 'DEFAULT' AS source, 'DYNAMIC_EFFECTIVE' AS edit_level "
        "UNION ALL SELECT 'zone1', 'observer', '10.0.0.1', 2882, 'net_thread_count', 'INT', '32', 'threads', "
        "'OBSERVER', 'CLUSTER', 'DEFAULT', 'STATIC_EFFECTIVE'",
        fmt="-t",
    )
    proxy = _sql(
        mariadb,
        "SELECT 'server_routing_mode' AS name, 'random' AS value, 'routing' AS info, 'false' AS need_reboot, "
        "'SYS' AS visible_level, '' AS `range`, 'LEVEL_GLOBAL' AS config_level",
        fmt="-t",
    )
    plans = _sql(
        mariadb,
        "SELECT 1 AS plan_type, 5300 AS cnt UNION ALL SELECT 2, 4700 UNION ALL SELECT 3, 12",
        fmt="-t",
    )
    ob = parsers["oceanbase_parameters"].func(parameters)
    assert ob.parameters == {"cpu_quota_concurrency": "4", "net_thread_count": "32"}
    assert parsers["odp_proxyconfig"].func(proxy).proxy_config["server_routing_mode"] == "random"
    assert parsers["sql_audit_plan_types"].func(plans).plan_type_counts == {1: 5300, 2: 4700, 3: 12}
    script = SCRIPT.read_text()
    for kind in ("oceanbase_parameters", "sql_audit_plan_types", "odp_proxyconfig"):
        assert re.search(rf"sql {kind} {kind} -t\b", script), kind


# -------------------------------------------------------------------- upload


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: list = []
    status = 202

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        type(self).requests.append((self.path, dict(self.headers), body))
        payload = {"id": 7, "url": "/snapshots/7/", "status": "queued"}
        if self.status != 202:
            payload = {"detail": "Invalid token."}
        data = json.dumps(payload).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


@pytest.fixture
def api_server():
    handler = type("Handler", (_Recorder,), {"requests": [], "status": 202})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, handler
    server.shutdown()
    server.server_close()


def _multipart_fields(headers: dict, body: bytes) -> dict[str, bytes]:
    from email.parser import BytesParser
    from email.policy import HTTP

    content_type = headers.get("Content-Type") or headers.get("content-type")
    msg = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + body)
    return {
        part.get_param("name", header="content-disposition"): part.get_payload(decode=True)
        for part in msg.iter_parts()
    }


def test_upload_posts_archive_and_prints_report_url(tmp_path, api_server):
    if shutil.which("curl") is None:
        pytest.fail("curl is missing")
    server, handler = api_server
    base = f"http://127.0.0.1:{server.server_address[1]}"
    archive = tmp_path / "up.tar.gz"
    # Only the collector's basics and curl: the upload is what is tested here.
    bindir = _fake_bin(tmp_path, [*CORE, "curl"], {})
    proc = _run(
        ["--quiet", "--output", str(archive), "--upload", base, "--label", "db-7", "--cluster", "kp-1"],
        env={"PATH": str(bindir), "TMPDIR": str(tmp_path), "CASEBOOK_TOKEN": "tok-123"},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [str(archive), f"{base}/snapshots/7/"]
    (path, headers, body) = handler.requests[0]
    assert path == "/api/v1/snapshots/"
    assert headers["Authorization"] == "Token tok-123"
    fields = _multipart_fields(headers, body)
    assert fields["file"] == archive.read_bytes()
    assert fields["label"] == b"db-7" and fields["cluster"] == b"kp-1"
    with tarfile.open(fileobj=io.BytesIO(fields["file"])) as tar:
        assert "manifest.json" in tar.getnames()


def test_upload_failure_keeps_archive_and_exits_1(tmp_path, api_server):
    server, handler = api_server
    handler.status = 401
    archive = tmp_path / "up.tar.gz"
    bindir = _fake_bin(tmp_path, [*CORE, "curl"], {})
    proc = _run(
        [
            "--quiet",
            "--output",
            str(archive),
            "--upload",
            f"http://127.0.0.1:{server.server_address[1]}/",
            "--token",
            "bad",
        ],
        env={"PATH": str(bindir), "TMPDIR": str(tmp_path)},
    )
    assert proc.returncode == 1
    assert "HTTP 401" in proc.stderr and "Invalid token" in proc.stderr
    assert archive.is_file()


def test_work_directory_is_removed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    bindir = _fake_bin(tmp_path, [*CORE, "timeout"], {})
    _collect(out, env={"PATH": str(bindir), "TMPDIR": str(out)})
    assert [p.name for p in out.iterdir()] == ["snapshot.tar.gz"]


@pytest.mark.parametrize("with_timeout_binary", [True, False], ids=["coreutils-timeout", "shell-watchdog"])
def test_interrupted_run_cleans_up(tmp_path, with_timeout_binary):
    """SIGTERM to the collector's process group (what ``kill -- -PGID`` or a
    job control stop does) mid-collection: no work directory and no partial
    archive left."""
    import signal
    import time

    out = tmp_path / "out"
    out.mkdir()
    tools = CORE + (["timeout"] if with_timeout_binary else [])
    bindir = _fake_bin(tmp_path, tools, {"lscpu": "exec sleep 30\n"})
    proc = subprocess.Popen(
        ["dash", str(SCRIPT), "--quiet", "--output", str(out / "a.tar.gz")],
        env={"PATH": str(bindir), "TMPDIR": str(out)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while not any(out.glob("casebook-collect.*/stage/commands/lscpu.txt")):
        assert time.monotonic() < deadline, "the collector never reached lscpu"
        time.sleep(0.05)
    started = time.monotonic()
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=20) == 143
    # at once, not when the 30 s command or its time limit would have ended
    assert time.monotonic() - started < 10
    assert list(out.iterdir()) == []


@pytest.mark.django_db(transaction=True)
def test_upload_to_the_real_api(tmp_path, live_server, django_user_model):
    """The contract end to end: collect.sh -> POST /api/v1/snapshots/ with the
    token -> the report URL printed; the server stored and analysed the archive."""
    from accounts.services import rotate_api_token
    from triage.models import Snapshot

    user = django_user_model.objects.create_user("collector-upload", password="unused-Pw-1")
    token = rotate_api_token(user=user).key
    bindir = _fake_bin(tmp_path, [*CORE, "timeout", "curl", "lscpu", "numactl", "sysctl"], {})
    archive = tmp_path / "up.tar.gz"
    proc = _run(
        ["--quiet", "--output", str(archive), "--upload", live_server.url, "--label", "collector-live"],
        env={"PATH": str(bindir), "TMPDIR": str(tmp_path), "CASEBOOK_TOKEN": token},
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == str(archive)
    snapshot = Snapshot.objects.get(owner=user)
    assert snapshot.label == "collector-live"
    assert lines[1] == live_server.url + snapshot.get_absolute_url()
    import hashlib

    assert snapshot.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert snapshot.kind == Snapshot.Kind.COLLECTOR
    from django.conf import settings

    if settings.CELERY_TASK_ALWAYS_EAGER:  # analysed within the request
        snapshot.refresh_from_db()
        assert snapshot.status == Snapshot.Status.DONE

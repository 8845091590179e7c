"""Upload -> ``done`` latency of the snapshot pipeline through a real worker.

Usage (PostgreSQL on 127.0.0.1:5432, redis-server on PATH)::

    .venv/bin/python bench/pipeline.py [--runs 50] [--write docs/performance.md]

It starts its own redis-server on a free port, a gunicorn web process and a
Celery worker (prefork, concurrency 1) against a fresh database
``casebook_bench_pipeline``, then uploads each input through the web form
``--runs`` times and measures from the start of the HTTP upload to the moment
the row is ``done`` (polled every 5 ms). After every run it scrapes ``/metrics``
(with a bearer token) and checks that ``casebook_uploads_total`` and the count of
``casebook_analysis_duration_seconds`` equal the uploads made and the analyses
finished so far. Every run uploads distinct bytes (a
trailing comment or an extra archive member), so deduplication never answers
from an earlier run.

Inputs: every file of ``tests/fixtures/seeds/*/before/`` (the rebuilt founding
snapshots) and a generated 2 MB collector-like archive.

The process harness (:class:`Stack`) is shared with
``tests/processes/test_pipeline_worker.py``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float, up: bool = True) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                if up:
                    return True
        except OSError:
            if not up:
                return True
        time.sleep(0.05)
    return False


@dataclass
class Proc:
    name: str
    popen: subprocess.Popen
    log: Path

    def text(self) -> str:
        try:
            return self.log.read_text(errors="replace")
        except FileNotFoundError:
            return ""


@dataclass
class Stack:
    """redis-server + gunicorn + Celery workers sharing one PostgreSQL database
    and one upload directory. Every process runs in its own session so it can
    be killed as a group (a prefork worker's children included) without
    touching any other process on the machine."""

    database_url: str
    workdir: Path
    secret_key: str
    redis_port: int = field(default_factory=free_port)
    procs: list[Proc] = field(default_factory=list)
    redis: Proc | None = None
    web_port: int | None = None
    # Tests close every connection after each request/task so the test database
    # can be dropped; the bench keeps them like production does.
    conn_max_age: int = 0

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def env(self, **extra: str) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("CASEBOOK_TEST_ANALYSIS_DELAY", "CI_WORKER_DELAY"):
            env.pop(key, None)
        env.update(
            {
                "DJANGO_SETTINGS_MODULE": "config.settings",
                "DATABASE_URL": self.database_url,
                "REDIS_URL": self.redis_url,
                "SECRET_KEY": self.secret_key,
                "CASEBOOK_DATA_DIR": str(self.workdir / "data"),
                "CASEBOOK_MANIFEST_STATIC": "0",
                "DEBUG": "0",
                "CONN_MAX_AGE": str(self.conn_max_age),
                "PYTHONUNBUFFERED": "1",
            }
        )
        env.update(extra)
        return env

    def _spawn(self, name: str, argv: list[str], env: dict[str, str]) -> Proc:
        log = self.workdir / f"{name}.log"
        fh = open(log, "ab")  # noqa: SIM115 - owned by the child process
        popen = subprocess.Popen(
            argv, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )
        fh.close()
        proc = Proc(name, popen, log)
        self.procs.append(proc)
        return proc

    # ------------------------------------------------------------------ redis
    def start_redis(self) -> None:
        binary = shutil.which("redis-server")
        if not binary:
            raise RuntimeError("redis-server is not installed")
        argv = [
            binary,
            "--port",
            str(self.redis_port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        self.redis = self._spawn(f"redis-{len(self.procs)}", argv, dict(os.environ))
        if not wait_port(self.redis_port, 10):
            raise RuntimeError(f"redis-server did not start:\n{self.redis.text()}")

    def stop_redis(self) -> None:
        if self.redis:
            self.terminate(self.redis)
            self.redis = None
        wait_port(self.redis_port, 10, up=False)

    # ----------------------------------------------------------------- worker
    def start_worker(
        self,
        name: str = "worker",
        *,
        beat: bool = False,
        wait: bool = True,
        concurrency: int = 1,
        queues: str = "",
        **env: str,
    ) -> Proc:
        argv = [PY, "-m", "celery", "-A", "config", "worker", "-l", "info", "--pool=prefork"]
        argv += [f"--concurrency={concurrency}"]
        argv += ["-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"]
        # ``queues``: "analysis", "beat" (heartbeat, sweeper) or "all"; default:
        # all with an embedded beat, else analyses only (as docker-compose runs them).
        queues = queues or ("all" if beat else "analysis")
        names = {"analysis": ["celery"], "beat": ["casebook-beat"], "all": ["celery", "casebook-beat"]}
        argv += ["-Q", ",".join(names[queues])]
        if beat:
            argv += ["-B", "--schedule", str(self.workdir / f"{name}-beat-schedule")]
        proc = self._spawn(name, argv, self.env(**env))
        if wait:
            self.wait_ready(proc)
        return proc

    def wait_ready(self, *procs: Proc, timeout: float = 60) -> None:
        """Wait for workers started with ``wait=False``: started together,
        their start-ups (a few seconds of imports each) overlap."""
        for proc in procs:
            self.wait_for_log(proc, "ready.", timeout)

    def wait_for_log(self, proc: Proc, needle: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if needle in proc.text():
                return
            if proc.popen.poll() is not None:
                break
            time.sleep(0.1)
        raise RuntimeError(f"{proc.name}: {needle!r} not seen in its log:\n{proc.text()[-4000:]}")

    # -------------------------------------------------------------------- web
    def start_web(self) -> str:
        self.web_port = free_port()
        argv = [
            PY,
            "-m",
            "gunicorn",
            "config.wsgi",
            "-b",
            f"127.0.0.1:{self.web_port}",
            "-w",
            "1",
            "--threads",
            "4",
        ]
        argv += ["--timeout", "60", "--graceful-timeout", "5", "--no-control-socket"]
        proc = self._spawn("web", argv, self.env())
        if not wait_port(self.web_port, 30):
            raise RuntimeError(f"gunicorn did not start:\n{proc.text()}")
        return self.base_url

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    # ------------------------------------------------------------- lifecycle
    @staticmethod
    def kill(proc: Proc) -> None:
        """SIGKILL the whole process group: no shutdown handler runs."""
        if proc.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.popen.pid, signal.SIGKILL)
        proc.popen.wait(timeout=10)

    @staticmethod
    def terminate(proc: Proc, timeout: float = 15, signum: int = signal.SIGTERM) -> None:
        if proc.popen.poll() is None:
            try:
                os.killpg(proc.popen.pid, signum)
                proc.popen.wait(timeout=timeout)
            except ProcessLookupError:
                pass
            except subprocess.TimeoutExpired:
                Stack.kill(proc)
        # A warm shutdown leaves no orphaned pool child behind either.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.popen.pid, signal.SIGKILL)

    def close(self, timeout: float = 15) -> None:
        """Warm shutdown of every process at once (SIGTERM to each process
        group, then wait up to ``timeout`` s for each to exit, SIGKILL those
        that do not); Redis last, so that the workers can still hand their
        unacknowledged tasks back to it while they shut down."""
        others = [proc for proc in reversed(self.procs) if proc is not self.redis]
        for proc in others:
            if proc.popen.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.popen.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for proc in others:
            self.terminate(proc, timeout=max(0.1, deadline - time.monotonic()))
        if self.redis:
            self.terminate(self.redis)

    def kill_all(self) -> None:
        """SIGKILL every process group at once, then reap them: the end of a
        test whose assertions are made. Even the quick shutdown (SIGQUIT) took
        2-3 s per real-process test (a Celery worker's cold shutdown); nothing
        is checked after it, and the database sees the killed processes'
        connections close at once."""
        for proc in self.procs:
            # Also when the group's leader is gone: an orphaned pool child.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.popen.pid, signal.SIGKILL)
        for proc in self.procs:
            proc.popen.wait(timeout=10)


# ---------------------------------------------------------------------- web client


class WebClient:
    """Drives the upload form like a browser: session cookie, CSRF token,
    multipart POST, follows nothing (the redirect names the snapshot)."""

    def __init__(self, base_url: str, session_key: str):
        import requests

        self.base = base_url
        self.http = requests.Session()
        self.http.cookies.set("sessionid", session_key, domain="127.0.0.1", path="/")
        self.token = None

    def csrf(self) -> str:
        if self.token is None:
            page = self.http.get(f"{self.base}/snapshots/new/", timeout=30)
            page.raise_for_status()
            match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
            if not match:
                raise RuntimeError("no CSRF token on the upload page")
            self.token = match.group(1)
        return self.token

    def upload(self, data: bytes, filename: str, *, label: str = "", cluster: str = "", transcript: str = ""):
        form = {
            "csrfmiddlewaretoken": self.csrf(),
            "label": label,
            "cluster": cluster,
            "transcript": transcript,
        }
        files = {"files": (filename, data, "application/octet-stream")} if data else None
        return self.http.post(
            f"{self.base}/snapshots/new/",
            data=form,
            files=files,
            allow_redirects=False,
            headers={"Referer": f"{self.base}/snapshots/new/"},
            timeout=60,
        )

    @staticmethod
    def snapshot_id(response) -> int:
        match = re.search(r"/snapshots/(\d+)/$", response.headers.get("Location", ""))
        if response.status_code not in (302, 303) or not match:
            raise RuntimeError(f"upload not accepted: {response.status_code} {response.text[:500]}")
        return int(match.group(1))


def session_key_for(user) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.cookies["sessionid"].value


# ------------------------------------------------------------------------- inputs


def collector_archive(target_bytes: int = 2 << 20, *, salt: str = "") -> bytes:
    """A collector-like .tar.gz of about ``target_bytes`` (compressed): a
    manifest, this machine's /proc and /sys files, command outputs, and enough
    /proc/<pid>-like status text to reach the size."""
    members: dict[str, bytes] = {}
    manifest = {"collector_version": "bench", "hostname": f"bench-host{salt}", "commands": []}
    for src, name in [
        ("/proc/meminfo", "proc/meminfo"),
        ("/proc/cpuinfo", "proc/cpuinfo"),
        ("/proc/interrupts", "proc/interrupts"),
        ("/proc/softirqs", "proc/softirqs"),
        ("/proc/zoneinfo", "proc/zoneinfo"),
        ("/proc/cmdline", "proc/cmdline"),
        ("/proc/version", "proc/version"),
        ("/proc/vmstat", "proc/vmstat"),
        ("/sys/devices/system/node/node0/meminfo", "sys/devices/system/node/node0/meminfo"),
        ("/sys/devices/system/node/node0/numastat", "sys/devices/system/node/node0/numastat"),
    ]:
        try:
            members[name] = Path(src).read_bytes()
        except OSError:
            continue
    for cmd, name in [
        (["lscpu"], "lscpu.txt"),
        (["sysctl", "-a"], "sysctl_a.txt"),
        (["numactl", "-H"], "numactl_H.txt"),
    ]:
        try:
            out = subprocess.run(cmd, capture_output=True, timeout=10, check=False).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        members[name] = out
        manifest["commands"].append(
            {"command": " ".join(cmd), "file": name, "exit_code": 0, "duration_ms": 1}
        )
    members["manifest.json"] = json.dumps(manifest).encode()

    # Filler: process-listing-like text with random ids, which compresses
    # about 2:1 like real logs. Chunks are added until the archive is big enough.
    import random
    import zlib

    rng = random.Random(f"casebook-bench{salt}")
    estimate = len(_tar_gz(members))
    i = 0
    while True:
        while estimate < target_bytes:
            lines = [
                f"{rng.randint(1, 99999):>7} root {rng.random() * 100:5.1f} {rng.random() * 10:4.1f} "
                f"{rng.randint(10**5, 10**8)} /usr/sbin/proc-{rng.getrandbits(64):016x} "
                f"--id {rng.getrandbits(96):024x}"
                for _ in range(4000)
            ]
            chunk = ("\n".join(lines) + "\n").encode()
            members[f"ps/ps_aux_{i}.txt"] = chunk
            estimate += len(zlib.compress(chunk, 6))
            i += 1
        data = _tar_gz(members)
        if len(data) >= target_bytes:
            return data
        estimate = len(data)


def _tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=6) as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(f"casebook-bench/{name}")
            info.size = len(data)
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def seed_inputs() -> list[Path]:
    return sorted(p for p in (ROOT / "tests" / "fixtures" / "seeds").glob("*/before/*") if p.is_file())


def distinct(data: bytes, filename: str, run: int) -> bytes:
    """Make run ``run`` of an input byte-distinct without changing its meaning:
    a trailing comment/blank line for text (XML comment for XML)."""
    if filename.endswith(".xml") or data.lstrip().startswith(b"<"):
        return data.rstrip() + f"\n<!-- bench run {run} -->\n".encode()
    return data.rstrip(b"\n") + b"\n" + b"\n" * (run + 1)


# -------------------------------------------------------------------------- bench


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def wait_done(snapshot_id: int, timeout: float = 60, poll: float = 0.005) -> str:
    from triage.models import Snapshot

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = Snapshot.objects.filter(pk=snapshot_id).values_list("status", flat=True).first()
        if status in ("done", "failed"):
            return status
        time.sleep(poll)
    return "timeout"


def run_bench(runs: int, database: str) -> dict:
    base_url = os.environ.get("BENCH_POSTGRES", "postgres://postgres@127.0.0.1:5432")
    database_url = f"{base_url}/{database}"
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    import psycopg

    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')

    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    # The web process inherits the token (Stack.env copies this environment).
    os.environ["CASEBOOK_METRICS_TOKEN"] = METRICS_TOKEN
    user = get_user_model().objects.create_user("bench", password="bench-password-123")
    workdir = Path(tempfile.mkdtemp(prefix="casebook-bench-"))
    stack = Stack(database_url=database_url, workdir=workdir, secret_key=settings.SECRET_KEY, conn_max_age=60)
    results: dict[str, dict] = {}
    try:
        stack.start_redis()
        stack.start_worker()
        client = WebClient(stack.start_web(), session_key_for(user))
        # Each founding snapshot is uploaded with its case as the cluster name,
        # so the hosts of one case are analysed together as they would be.
        inputs = [(p.parent.parent.name, p.read_bytes(), p.name) for p in seed_inputs()]
        scrapes: list[dict] = []
        archive_sizes = []
        # The first upload after start-up pays for imports and connections in
        # the web and worker processes; it is reported apart, not in the runs.
        t0 = time.perf_counter()
        warm = client.upload(b"$ uname -r\n6.1.0\n", "warm-up.txt", label="warm-up")
        cold_status = wait_done(WebClient.snapshot_id(warm))
        cold_start = time.perf_counter() - t0
        for run in range(runs):
            for case, data, filename in inputs:
                key = f"{case}/{filename}"
                _measure(client, results, key, distinct(data, filename, run), filename, cluster=case)
            archive = collector_archive(salt=f"-{run}")
            archive_sizes.append(len(archive))
            _measure(client, results, "collector-2MB.tar.gz", archive, "collector-2MB.tar.gz")
            scrapes.append(scrape_check(stack.base_url, results))
        summary = {
            "measured_at": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "runs": runs,
            "cpus": os.cpu_count(),
            "archive_bytes": int(statistics.mean(archive_sizes)) if archive_sizes else 0,
            "inputs": {},
        }
        everything = []
        for key, r in results.items():
            lat = r["latencies"]
            everything += lat
            summary["inputs"][key] = {
                "n": len(lat),
                "failed": r["failed"],
                "p50": percentile(lat, 0.5) if lat else None,
                "p95": percentile(lat, 0.95) if lat else None,
                "max": max(lat) if lat else None,
            }
        summary["all"] = {
            "n": len(everything),
            "p50": percentile(everything, 0.5),
            "p95": percentile(everything, 0.95),
            "max": max(everything),
        }
        summary["stages"] = stage_medians()
        summary["cold_start"] = {"seconds": cold_start, "status": cold_status}
        summary["metrics"] = {
            "scrapes": len(scrapes),
            "all_match": all(s["match"] for s in scrapes),
            "last": scrapes[-1] if scrapes else None,
            "scrape_p50": percentile([s["seconds"] for s in scrapes], 0.5) if scrapes else None,
        }
        summary["load_average_5min"] = round(os.getloadavg()[1], 1)
        return summary
    finally:
        stack.close()
        shutil.rmtree(workdir, ignore_errors=True)


METRICS_TOKEN = "bench-metrics-token"


def scrape_check(base_url: str, results: dict) -> dict:
    """Scrape /metrics and compare it with what the bench did: every upload
    (the warm-up included) counted once, every finished analysis in the
    duration histogram."""
    import requests
    from prometheus_client.parser import text_string_to_metric_families

    t0 = time.perf_counter()
    response = requests.get(
        f"{base_url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=30
    )
    seconds = time.perf_counter() - t0
    response.raise_for_status()
    values = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    uploads = 1 + sum(len(r["latencies"]) + r["failed"] for r in results.values())
    done = 1 + sum(len(r["latencies"]) for r in results.values())
    got_uploads = values[("casebook_uploads_total", ())]
    got_done = values[("casebook_analysis_duration_seconds_count", (("status", "done"),))]
    return {
        "uploads": uploads,
        "uploads_scraped": got_uploads,
        "done": done,
        "histogram_done": got_done,
        "match": got_uploads == uploads and got_done == done,
        "seconds": seconds,
    }


def stage_medians() -> dict[str, float]:
    """Where the time goes, from the rows' own timestamps (medians, seconds):
    waiting for a worker, the whole task, and its parse and rule phases."""
    from triage.models import Snapshot

    rows = list(
        Snapshot.objects.filter(status="done")
        .exclude(label="warm-up")
        .values_list("queued_at", "started_at", "finished_at", "parse_seconds", "rules_seconds")
    )
    if not rows:
        return {}
    return {
        "queue_wait": statistics.median((s - q).total_seconds() for q, s, _f, _p, _r in rows),
        "task": statistics.median((f - s).total_seconds() for _q, s, f, _p, _r in rows),
        "parse": statistics.median(p for *_x, p, _r in rows),
        "rules": statistics.median(r for *_x, r in rows),
    }


def _measure(
    client: WebClient, results: dict, key: str, data: bytes, filename: str, cluster: str = ""
) -> None:
    entry = results.setdefault(key, {"latencies": [], "failed": 0})
    t0 = time.perf_counter()
    response = client.upload(data, filename, label=Path(filename).stem, cluster=cluster)
    snapshot_id = WebClient.snapshot_id(response)
    status = wait_done(snapshot_id)
    elapsed = time.perf_counter() - t0
    if status == "done":
        entry["latencies"].append(elapsed)
    else:
        entry["failed"] += 1


def markdown(summary: dict) -> str:
    def ms(v):
        return "—" if v is None else f"{v * 1000:.0f} ms"

    lines = [
        "## Pipeline",
        "",
        "Upload -> `done` latency through the real stack: gunicorn web process, Redis,",
        "one Celery worker (prefork, concurrency 1), PostgreSQL (persistent connections, as in",
        "production), measured from the start of the",
        "HTTP upload of the web form to the snapshot row reaching `done` (polled every 5 ms).",
        f"{summary['runs']} runs of every input, each run byte-distinct so deduplication never",
        "short-cuts it. The founding snapshots are uploaded with their case as the cluster name, so",
        "each upload is analysed together with the latest snapshot of the case's other hosts.",
        f"Machine: {summary['cpus']} CPUs, shared with other jobs while measured "
        f"({summary.get('measured_at', 'date not recorded')}, 5-minute load average "
        f"{summary.get('load_average_5min', '?')} at the end).",
        "",
        f"Command: `.venv/bin/python bench/pipeline.py --runs {summary['runs']} --write docs/performance.md`",
        "",
        "| input | runs | failed | p50 | p95 | max |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, r in summary["inputs"].items():
        lines.append(
            f"| `{key}` | {r['n']} | {r['failed']} | {ms(r['p50'])} | {ms(r['p95'])} | {ms(r['max'])} |"
        )
    a = summary["all"]
    lines.append(
        f"| **all inputs** | {a['n']} | | **{ms(a['p50'])}** | **{ms(a['p95'])}** | {ms(a['max'])} |"
    )
    stages = summary.get("stages") or {}
    if stages:
        lines += [
            "",
            f"Medians per upload from the rows' timestamps: {ms(stages['queue_wait'])} from saving the "
            f"row to a worker starting the task, {ms(stages['task'])} in the task (parsing "
            f"{ms(stages['parse'])}, rules {ms(stages['rules'])}; the rest is similar cases, excerpts "
            "and the database writes). The remainder of the end-to-end figure is the HTTP upload, "
            "the durable write and the 5 ms polling.",
        ]
    cold = summary.get("cold_start")
    if cold:
        lines += [
            "",
            f"The first upload after the processes start (a one-line transcript, not counted above) took "
            f"{ms(cold['seconds'])}: imports and first connections in the web and worker processes.",
        ]
    scraped = summary.get("metrics") or {}
    if scraped.get("last"):
        last = scraped["last"]
        verdict = "matched" if scraped["all_match"] else "did NOT match"
        lines += [
            "",
            f"`/metrics` was scraped after each of the {scraped['scrapes']} runs (median "
            f"{ms(scraped['scrape_p50'])} per scrape) and {verdict} the bench every time: at the end "
            f"`casebook_uploads_total` {last['uploads_scraped']:.0f} for {last['uploads']} uploads, "
            f'`casebook_analysis_duration_seconds_count{{status="done"}}` {last["histogram_done"]:.0f} '
            f"for {last['done']} analyses done (the warm-up included).",
        ]
    lines += [
        "",
        f"The generated collector archive is {summary['archive_bytes'] / (1 << 20):.1f} MiB compressed "
        "(this machine's /proc and /sys files, lscpu, sysctl -a, plus process listings).",
        "Target: p50 <= 1 s, p95 <= 2 s.",
        "",
    ]
    return "\n".join(lines)


def write_section(path: Path, section: str, heading: str = "Pipeline") -> None:
    """Replace (or append) the "## <heading>" section, leaving the others alone."""
    text = path.read_text() if path.exists() else "# Performance\n\n"
    pattern = re.compile(rf"^## {re.escape(heading)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _m: section.rstrip("\n") + "\n\n", text)
    else:
        text = text.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"
    path.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--database", default="casebook_bench_pipeline")
    parser.add_argument("--write", type=Path, help="update the Pipeline section of this markdown file")
    args = parser.parse_args()
    summary = run_bench(args.runs, args.database)
    print(json.dumps(summary, indent=2))
    section = markdown(summary)
    print(section)
    if args.write:
        write_section(args.write, section)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

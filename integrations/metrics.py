"""``/metrics`` for Prometheus (prometheus_client).

Analyses run in Celery worker processes, uploads arrive in any of the web
processes and the sweeper runs in the beat worker, so counters kept in process
memory would each see a part. Everything about uploads and analyses is
therefore read from the database when Prometheus scrapes: exact whichever
process did the work, and the same answer from every web process. Events that
leave no row (the sweeper's re-queues) are counted in
``integrations.Counter``; queue depth is read from Redis (LLEN); the worker
heartbeat age from ``accounts.WorkerHeartbeat``. Only request latency is
measured where it happens, in the web process: with several gunicorn workers
set ``PROMETHEUS_MULTIPROC_DIR`` and prometheus_client's multiprocess mode
adds the processes up. The choice is explained in docs/integrations.md.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import time
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from django.http import HttpResponse, HttpResponseForbidden
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Histogram, generate_latest, multiprocess
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from accounts.services import last_worker_contact
from config import celery as broker
from triage.models import Snapshot, SnapshotArtifact

from .models import Counter, Delivery

# Seconds from a worker starting an analysis to its result.
ANALYSIS_BUCKETS = (0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300)
REQUEST_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10)
SWEEPER_REQUEUES = "sweeper_requeues"

_LOCAL = CollectorRegistry(auto_describe=True)
REQUEST_LATENCY = Histogram(
    "casebook_http_request_duration_seconds",
    "Time to answer an HTTP request, by method, URL name and status class.",
    ["method", "view", "status"],
    buckets=REQUEST_BUCKETS,
    registry=_LOCAL,
)


class RequestLatencyMiddleware:
    """Observes every request's duration. The label is the URL pattern's name
    (a bounded set), never the path."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        started = time.perf_counter()
        response = self.get_response(request)
        match = getattr(request, "resolver_match", None)
        view = (match.view_name if match else "") or "unmatched"
        REQUEST_LATENCY.labels(request.method, view, f"{response.status_code // 100}xx").observe(
            time.perf_counter() - started
        )
        return response


def queue_lengths() -> dict[str, int]:
    """Messages waiting in the analysis and beat queues (Redis LLEN), or {}
    without a broker."""
    return broker.queue_lengths([settings.CELERY_TASK_DEFAULT_QUEUE, settings.CASEBOOK_BEAT_QUEUE])


def _analysis_histogram() -> HistogramMetricFamily:
    duration = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    family = HistogramMetricFamily(
        "casebook_analysis_duration_seconds",
        "Seconds from a worker starting an analysis to the snapshot being done or failed "
        "(the last attempt of each snapshot).",
        labels=["status"],
    )
    finished = Snapshot.objects.filter(
        status__in=[Snapshot.Status.DONE, Snapshot.Status.FAILED],
        started_at__isnull=False,
        finished_at__isnull=False,
    ).annotate(duration=duration)
    aggregates = {
        f"le_{i}": Count("pk", filter=Q(duration__lte=timedelta(seconds=b)))
        for i, b in enumerate(ANALYSIS_BUCKETS)
    }
    rows: dict[str, Mapping[str, Any]] = {
        row["status"]: row
        for row in finished.values("status").annotate(n=Count("pk"), total=Sum("duration"), **aggregates)
    }
    for status in (Snapshot.Status.DONE, Snapshot.Status.FAILED):
        row = rows.get(status, {})
        n = row.get("n", 0)
        buckets = [(str(float(b)), row.get(f"le_{i}", 0)) for i, b in enumerate(ANALYSIS_BUCKETS)]
        buckets.append(("+Inf", n))
        total = row.get("total") or timedelta(0)
        family.add_metric([status], buckets, max(0.0, total.total_seconds()))
    return family


class CasebookCollector(Collector):
    """Reads the database (and Redis) at scrape time."""

    def collect(self):
        yield CounterMetricFamily(
            "casebook_uploads", "Snapshots uploaded (web, API, wizard).", value=Snapshot.objects.count()
        )
        yield CounterMetricFamily(
            "casebook_artifacts_added",
            "Artifacts added to existing snapshots.",
            value=SnapshotArtifact.objects.count(),
        )
        by_status = dict(
            Snapshot.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n")
        )
        family = GaugeMetricFamily("casebook_snapshots", "Snapshots by analysis status.", labels=["status"])
        for status in Snapshot.Status.values:
            family.add_metric([status], by_status.get(status, 0))
        yield family
        yield _analysis_histogram()

        lengths = queue_lengths()
        if lengths:
            family = GaugeMetricFamily(
                "casebook_queue_length", "Messages waiting in a Celery queue.", labels=["queue"]
            )
            for queue, n in lengths.items():
                family.add_metric([queue], n)
            yield family

        last = last_worker_contact()
        seen = GaugeMetricFamily(
            "casebook_worker_heartbeat_seen", "1 when a worker ever answered a heartbeat."
        )
        seen.add_metric([], 1 if last else 0)
        yield seen
        if last is not None:
            yield GaugeMetricFamily(
                "casebook_worker_heartbeat_age_seconds",
                "Seconds since a worker last answered a heartbeat.",
                value=max(0.0, (timezone.now() - last.completed_at).total_seconds()),
            )

        requeues = Counter.objects.filter(name=SWEEPER_REQUEUES).values_list("value", flat=True).first() or 0
        yield CounterMetricFamily(
            "casebook_sweeper_requeues", "Analyses the sweeper sent to the workers again.", value=requeues
        )
        deliveries = dict(
            Delivery.objects.values_list("status").annotate(n=Count("pk")).values_list("status", "n")
        )
        family = GaugeMetricFamily(
            "casebook_webhook_deliveries", "Webhook deliveries by status.", labels=["status"]
        )
        for status in Delivery.Status.values:
            family.add_metric([status], deliveries.get(status, 0))
        yield family


def registry() -> CollectorRegistry:
    """A fresh registry per scrape: request latency (this process, or every
    process in multiprocess mode) and the database-derived metrics."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        reg = CollectorRegistry()
        multiprocess.MultiProcessCollector(reg)
    else:
        reg = CollectorRegistry()
        reg.register(_LocalLatency())
    reg.register(CasebookCollector())
    return reg


class _LocalLatency(Collector):
    def collect(self):
        yield from REQUEST_LATENCY.collect()


def scrape_allowed(request) -> bool:
    """A bearer token equal to ``CASEBOOK_METRICS_TOKEN``, or a peer address
    in ``CASEBOOK_METRICS_ALLOW``."""
    token = settings.CASEBOOK_METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and header.startswith("Bearer ") and hmac.compare_digest(header[7:].strip(), token):
        return True
    try:
        peer = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    for network in settings.CASEBOOK_METRICS_ALLOW:
        try:
            if peer in ipaddress.ip_network(network, strict=False):
                return True
        except ValueError:
            continue
    return False


@login_not_required
@never_cache
@require_GET
def metrics_view(request):
    if not scrape_allowed(request):
        return HttpResponseForbidden(
            "metrics: token or allowed address required\n", content_type="text/plain"
        )
    return HttpResponse(generate_latest(registry()), content_type=CONTENT_TYPE_LATEST)

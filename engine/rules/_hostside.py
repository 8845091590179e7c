"""Helpers of the host-side rules of data stores (thp, vm_policy, irq,
placement): evidence for a data store and for a kernel setting, whichever
artifact showed it, and what makes a host-tuning rule matter."""

from __future__ import annotations

from typing import Any

from collectors.derived.host_tuning import latency_sensitive
from collectors.derived.workload import Datastore, Setting, datastores, service_warning, version_tuple
from collectors.facts import HostFacts
from engine.rules import Evidence, Phrase, evidence

STORE_NAMES = {
    "redis": "Redis",
    "mongodb": "MongoDB",
    "postgresql": "PostgreSQL",
    "oracle": "Oracle Database",
    "mysql": "MySQL/MariaDB",
    "elasticsearch": "Elasticsearch",
    "cassandra": "Cassandra",
}


def store_label(store: Datastore) -> str:
    name = STORE_NAMES.get(store.kind, store.kind)
    return f"{name} {store.version}" if store.version else name


def store_evidence(host: HostFacts, store: Datastore) -> Evidence:
    value = store.kind if store.version is None else f"{store.kind} {store.version}"
    return evidence(host, store.fact, value, store.parsed, line=store.line)


def setting_evidence(host: HostFacts, setting: Setting) -> Evidence:
    return evidence(host, setting.fact, setting.value, setting.parsed, line=setting.line)


def warning_evidence(host: HostFacts, warned: tuple[Any, Any], store: str, value: Any) -> Evidence:
    """Evidence of a data store's own warning (``service_warning``'s (log, warning)):
    the fact ``services[<store>].<code>``, on the warning's line of the log."""
    log, w = warned
    return evidence(host, f"services[{store}].{w.code}", value, log, line=w.line)


def redis_warning(host: HostFacts, code: str) -> tuple[Any, Any] | None:
    """Redis's own start-up warning ``code`` (``service_warning``'s (log,
    warning)); None when no Redis printed it."""
    warned = service_warning(host, code)
    return warned if warned is not None and warned[0].kind == "redis" else None


def stores_of(host: HostFacts, kinds: set[str] | None = None) -> list[Datastore]:
    return [s for s in datastores(host) if kinds is None or s.kind in kinds]


def at_least(store: Datastore, version: tuple[int, ...]) -> bool | None:
    """Whether the store's version is ``version`` or later (None: unknown)."""
    have = version_tuple(store.version)
    if have is None:
        return None
    return have >= version


def tuning_checks(host: HostFacts, check: str, shown: bool) -> tuple[str, ...]:
    """What a host-tuning rule decides on for ``host``: its fact check
    ``check`` when the snapshot ``shown`` the artifact, or when it lacks it on
    a host whose latency matters (``latency_sensitive``); else nothing."""
    return (check,) if shown or latency_sensitive(host) else ()


def latency_why(what: str | None) -> Phrase:
    """What makes a host-tuning rule matter on the host: its phrase "runs"
    with the latency-sensitive workload (``latency_sensitive``), else "nothing"."""
    return Phrase("runs", {"what": what}) if what else Phrase("nothing")

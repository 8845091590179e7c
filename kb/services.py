"""Writes to the knowledge base. Every case save goes through :func:`save_case`
so the search index and the denormalised signature rules stay in sync.

Founding cases and the measures catalogue are data files under ``kb/data``;
:func:`load_catalogue` and :func:`load_cases` load them idempotently
(``manage.py loadcases``). Case signatures are never typed by hand: they come
from running the engine on ``tests/fixtures/seeds/<slug>/before/``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Count, F
from django.utils import timezone
from django.utils.translation import gettext as _

from collectors.archive import load_snapshot
from collectors.derived.features import snapshot_features
from engine.run import ENGINE_VERSION, analyze
from kb import search, signals
from kb.access import can_edit_case, can_review_case
from kb.models import (
    Case,
    CaseMeasure,
    CaseReuse,
    CaseRevision,
    CaseRule,
    Measure,
    Metric,
    Reference,
    RuleIndexChange,
    RuleIndexState,
    Tag,
)

log = logging.getLogger(__name__)

DATA_DIR = Path(__file__).resolve().parent / "data"
MEASURES_PATH = DATA_DIR / "measures.yaml"
CASES_DIR = DATA_DIR / "cases"
FIXTURES_ROOT = Path(settings.BASE_DIR) / "tests" / "fixtures" / "seeds"
LANGUAGES = ("en", "zh")


# --- signatures -------------------------------------------------------------------------


@dataclass
class SignatureEngine:
    """What computing a signature needs from the analyser: a version and a run
    function ``paths -> (rule IDs, SnapshotFacts)``. Tests inject a fake one."""

    version: str
    run: Callable[[list[Path]], tuple[list[str], Any]]


def real_engine() -> SignatureEngine:
    """The rule engine over the archive loader: the rules that fire on a
    case's "before" fixtures."""

    def run(paths: list[Path]) -> tuple[list[str], Any]:
        snapshot = load_snapshot([str(p) for p in paths])
        result = analyze(snapshot)
        return sorted({f.rule for f in result.findings}), snapshot

    return SignatureEngine(version=str(ENGINE_VERSION), run=run)


def snapshot_paths(folder: Path) -> list[Path]:
    """Host paths of a fixture snapshot: every entry of the folder is one host
    (a transcript or artifact file, or a directory of that host's artifacts)."""
    return sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def fixture_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def compute_signature(
    *, slug: str, engine: SignatureEngine, fixtures_root: Path = FIXTURES_ROOT
) -> dict | None:
    """Run the engine on the case's "before" fixtures. None when they are absent."""
    folder = fixtures_root / slug / "before"
    if not folder.is_dir():
        return None
    rules, snapshot = engine.run(snapshot_paths(folder))
    return {
        "signature": {"rules": sorted(set(rules)), "features": snapshot_features(snapshot)},
        "version": engine.version,
        "source": f"tests/fixtures/seeds/{slug}/before@{fixture_digest(folder)}",
    }


def signature_is_current(case: Case, *, engine: SignatureEngine, fixtures_root: Path = FIXTURES_ROOT) -> bool:
    folder = fixtures_root / case.slug / "before"
    if not folder.is_dir():
        return True  # nothing to recompute from: keep what is stored
    return (
        bool(case.signature)
        and case.signature_engine_version == engine.version
        and case.signature_source.endswith("@" + fixture_digest(folder))
    )


# --- saving -------------------------------------------------------------------------------


def index_case(case: Case, *, term_stats: bool = True) -> None:
    """Re-tokenize a saved case and write the search backend; without
    ``term_stats`` the caller rebuilds the term statistics once for many cases."""
    old_tokens = set((case.search_title + " " + case.search_text).split())
    fields = search.case_index_fields(case)
    Case.objects.filter(pk=case.pk).update(
        search_title=fields.title,
        search_text=fields.body,
        search_dictionary_version=search.dictionary_version(),
    )
    case.search_title, case.search_text = fields.title, fields.body
    case.search_dictionary_version = search.dictionary_version()
    search.write_index(case.pk, case.state, fields)
    if term_stats:
        search.update_term_stats(old_tokens, set((fields.title + " " + fields.body).split()))


def sync_rule_rows(case: Case) -> None:
    wanted = set(case.signature_rules)
    have = set(case.rule_rows.values_list("rule", flat=True))
    removed, _ = case.rule_rows.filter(rule__in=have - wanted).delete()
    moved = case.rule_rows.exclude(slug=case.slug, state=case.state).update(slug=case.slug, state=case.state)
    added = CaseRule.objects.bulk_create(
        [CaseRule(case=case, rule=r, slug=case.slug, state=case.state) for r in sorted(wanted - have)]
    )
    if removed or moved or added:
        note_rule_change(slug=case.slug)


# How many rule changes are kept for processes to catch up with (kb.rule_index).
RULE_CHANGES_KEPT = 1000


def note_rule_change(*, slug: str) -> None:
    """Record that the rule rows of case group ``slug`` changed: the next
    generation of the rule index, in the caller's transaction. Writers queue
    on the one RuleIndexState row until they commit, so generations become
    visible in order and a reader that sees generation N has every change up
    to N (see ``kb.rule_index``)."""
    with transaction.atomic():
        if not RuleIndexState.objects.filter(pk=1).update(generation=F("generation") + 1):
            try:
                with transaction.atomic():
                    RuleIndexState.objects.create(pk=1, epoch=uuid.uuid4().hex, generation=1)
            except IntegrityError:  # created meanwhile by another writer
                RuleIndexState.objects.filter(pk=1).update(generation=F("generation") + 1)
        generation = RuleIndexState.objects.values_list("generation", flat=True).get(pk=1)
        RuleIndexChange.objects.create(generation=generation, slug=slug)
        RuleIndexChange.objects.filter(generation__lte=generation - RULE_CHANGES_KEPT).delete()


@transaction.atomic
def save_case(
    case: Case,
    *,
    tags: Iterable[str] | None = None,
    steps: list[dict] | None = None,
    metrics: list[dict] | None = None,
    references: list[dict] | None = None,
) -> Case:
    """Save a case and, when given, replace its tags, resolution steps
    (``{"measure": slug, "status", "outcome"}``), metrics and references."""
    newly_published = case.state == Case.State.PUBLISHED and case.published_at is None
    if newly_published:
        case.published_at = timezone.now()
    case.save()
    if newly_published:
        # Webhooks and e-mails of the case's team, after commit (integrations listens).
        signals.case_published.send(sender=Case, case=case)
    if tags is not None:
        case.tags.set([Tag.objects.get_or_create(name=name)[0] for name in tags])
    if steps is not None:
        measures = {m.slug: m for m in Measure.objects.filter(slug__in=[s["measure"] for s in steps])}
        missing = sorted({s["measure"] for s in steps} - set(measures))
        if missing:
            raise ValueError(f"case {case.slug}: unknown measures {missing}")
        case.steps.all().delete()
        CaseMeasure.objects.bulk_create(
            CaseMeasure(
                case=case,
                order=n,
                measure=measures[s["measure"]],
                status=s.get("status", CaseMeasure.Status.APPLIED),
                outcome=s.get("outcome", ""),
            )
            for n, s in enumerate(steps, start=1)
        )
    if metrics is not None:
        case.metrics.all().delete()
        Metric.objects.bulk_create(Metric(case=case, order=n, **m) for n, m in enumerate(metrics, start=1))
    if references is not None:
        case.references.all().delete()
        Reference.objects.bulk_create(Reference(case=case, **r) for r in references)
    sync_rule_rows(case)
    index_case(case)
    return case


@transaction.atomic
def delete_case(case: Case) -> None:
    case_id = case.pk
    old_tokens = set((case.search_title + " " + case.search_text).split())
    case.delete()
    note_rule_change(slug=case.slug)
    search.delete_index(case_id)
    search.update_term_stats(old_tokens, set())


# --- loading the data files ------------------------------------------------------------------


def _read_yaml(path: Path) -> Any:
    """A data file through libyaml (PyYAML's C loader): ten times faster than
    the pure-Python one, which every loadcases and test fixture paid."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader)


def load_catalogue(*, path: Path = MEASURES_PATH) -> dict[str, int]:
    """Create or update every measure of ``measures.yaml``."""
    entries = _read_yaml(path) or []
    created = updated = 0
    fields = ("title_en", "title_zh", "what_why_en", "what_why_zh", "config_kind", "commands", "rollback",
              "disruption", "remeasure", "rules")  # fmt: skip
    existing = {m.slug: m for m in Measure.objects.all()}
    for entry in entries:
        values = {f: entry.get(f, [] if f == "rules" else "") for f in fields}
        values = {k: (v.strip() if isinstance(v, str) else v) for k, v in values.items()}
        measure = existing.get(entry["slug"])
        if measure is None:
            Measure.objects.create(slug=entry["slug"], **values)
            created += 1
        elif any(getattr(measure, k) != v for k, v in values.items()):
            for k, v in values.items():
                setattr(measure, k, v)
            measure.save()
            updated += 1
    return {"created": created, "updated": updated, "total": len(entries)}


def _clean(text: Any) -> str:
    return " ".join(str(text or "").split())


def _case_values(data: dict, language: str) -> tuple[dict, dict]:
    """(model fields, related rows) of one language version of a case file."""
    texts = data[language]
    fields = {
        "title": _clean(texts["title"]),
        "symptom": _clean(texts["symptom"]),
        "cause": _clean(texts.get("cause")),
        "resolution_summary": _clean(texts.get("resolution_summary")),
        "environment_notes": _clean(texts.get("environment_notes")),
        "state": data.get("state", Case.State.PUBLISHED),
    }
    for key in ("platform", "hypervisor", "cpu_architecture", "cpu_model", "database", "database_version"):
        fields[key] = str(data.get(key) or "")
    related = {
        "tags": list(data.get("tags", [])),
        "steps": [
            {
                "measure": s["measure"],
                "status": s.get("status", "applied"),
                "outcome": _clean(s.get(f"outcome_{language}") or s.get("outcome_en", "")),
            }
            for s in data.get("resolution", [])
        ],
        "metrics": [
            {
                "name": m.get(f"name_{language}") or m["name_en"],
                "before": m.get("before"),
                "after": m.get("after"),
                "unit": str(m.get("unit", "")),
                "expected": str(m.get("expected", "")),
                "note": _clean(m.get("note", "")),
            }
            for m in data.get("metrics", [])
        ],
        "references": [
            {"key": r["key"], "title": r.get("title", ""), "url": r.get("url", "")}
            for r in data.get("references", [])
        ],
    }
    return fields, related


@dataclass
class LoadReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    signatures: dict[str, str] = field(default_factory=dict)  # slug -> "computed" / "kept" / "current"
    measures: dict[str, int] = field(default_factory=dict)


def load_cases(
    *,
    directory: Path = CASES_DIR,
    fixtures_root: Path = FIXTURES_ROOT,
    engine: SignatureEngine | None = None,
    use_real_engine: bool = True,
    force: bool = False,
) -> LoadReport:
    """Load every ``<slug>.yaml`` of ``directory`` in both languages.

    Unchanged cases are skipped. A signature is (re)computed when the fixtures
    exist and the stored one was made by another engine version or from other
    fixture files; without fixtures the stored signature is kept."""
    report = LoadReport()
    if engine is None and use_real_engine:
        engine = real_engine()
    reindex = search.dictionary_version()
    for path in sorted(directory.glob("*.yaml")):
        data = _read_yaml(path)
        slug = data["slug"]
        versions = {c.language: c for c in Case.objects.filter(slug=slug)}
        signature = None
        if engine is not None:
            stale = force or any(
                not signature_is_current(c, engine=engine, fixtures_root=fixtures_root)
                for c in versions.values()
            )
            if stale or len(versions) < len(LANGUAGES):
                signature = compute_signature(slug=slug, engine=engine, fixtures_root=fixtures_root)
        report.signatures[slug] = "computed" if signature else ("kept" if versions else "none")
        for language in LANGUAGES:
            fields, related = _case_values(data, language)
            digest = hashlib.sha256(
                json.dumps([fields, related], sort_keys=True, default=str).encode()
            ).hexdigest()
            case = versions.get(language)
            label = f"{slug}[{language}]"
            if (
                case is not None
                and case.source_digest == digest
                and signature is None
                and case.search_dictionary_version == reindex
                and not force
            ):
                report.unchanged.append(label)
                continue
            is_new = case is None
            case = case or Case(slug=slug, language=language)
            for key, value in fields.items():
                setattr(case, key, value)
            case.source_digest = digest
            if signature is not None:
                case.signature = signature["signature"]
                case.signature_engine_version = signature["version"]
                case.signature_source = signature["source"]
            save_case(case, **related)
            (report.created if is_new else report.updated).append(label)
    return report


@transaction.atomic
def load_all(**kwargs) -> LoadReport:
    measures = load_catalogue()
    report = load_cases(**kwargs)
    reindex_stale()
    report.measures = measures
    return report


def reindex_stale() -> int:
    """Re-index the cases tokenized by another dictionary, glossary or
    tokenizer version (every case, not only the founding ones)."""
    return _reindex(Case.objects.exclude(search_dictionary_version=search.dictionary_version()))


def reindex_all() -> int:
    """Rebuild the search index of every case (e.g. after a dictionary change)."""
    return _reindex(Case.objects.all())


def _reindex(cases) -> int:
    """Re-index ``cases`` a chunk at a time (never all of them in memory), then
    rebuild the term statistics once: per case they would cost an UPDATE per
    term, millions for a large knowledge base."""
    count = 0
    for case in cases.order_by("pk").prefetch_related("tags").iterator(chunk_size=500):
        index_case(case, term_stats=False)
        count += 1
    if count:
        search.rebuild_term_stats()
    return count


# --- review: draft -> in review -> published -------------------------------------------------

# The text of a case version that authors edit and revisions keep.
TEXT_FIELDS = ("title", "symptom", "cause", "resolution_summary", "environment_notes")


class ReviewError(ValueError):
    """A review step that cannot happen now; the message is for the user."""


def case_content(case: Case) -> dict[str, str]:
    return {name: getattr(case, name) or "" for name in TEXT_FIELDS}


def record_revision(*, case: Case, user, action: str, comment: str = "") -> CaseRevision:
    last = case.revisions.order_by("-number").values_list("number", flat=True).first() or 0
    return CaseRevision.objects.create(
        case=case, number=last + 1, user=user, action=action, comment=comment, content=case_content(case)
    )


def case_group(slug: str) -> dict[str, Case]:
    """Both language versions of a case, by language."""
    return {c.language: c for c in Case.objects.filter(slug=slug).select_for_update()}


@transaction.atomic
def edit_case(*, case: Case, user, changes: dict[str, str]) -> Case:
    """An author's or support's edit of a draft version's text; a pre-filled
    translation counts as translated once edited."""
    if not can_edit_case(user, case):
        raise PermissionDenied("only the author or support staff edit a draft")
    changed = False
    for name in TEXT_FIELDS:
        if name in changes and (changes[name] or "") != getattr(case, name):
            setattr(case, name, changes[name] or "")
            changed = True
    if not (changed or case.translation_pending):
        return case
    case.translation_pending = False
    save_case(case)
    record_revision(case=case, user=user, action=CaseRevision.Action.EDITED)
    return case


def submission_problems(versions: dict[str, Case]) -> list[str]:
    """Why a case group cannot be submitted yet (empty when it can)."""
    names = {"en": _("English"), "zh": _("Chinese")}
    problems = []
    for language in LANGUAGES:
        case = versions.get(language)
        if case is None:
            problems.append(_("The %(language)s version is missing.") % {"language": names[language]})
        elif case.translation_pending:
            problems.append(
                _("The %(language)s version was pre-filled from the other language: edit it first.")
                % {"language": names[language]}
            )
        elif not (case.title.strip() and case.symptom.strip() and case.cause.strip()):
            problems.append(
                _("The %(language)s version needs a title, a symptom and a cause.")
                % {"language": names[language]}
            )
    return problems


def _move_group(versions: dict[str, Case], *, user, state: str, action: str, comment: str = "") -> None:
    for case in versions.values():
        case.state = state
        if state == Case.State.PUBLISHED:
            case.reviewer = user
        save_case(case)
        record_revision(case=case, user=user, action=action, comment=comment)


@transaction.atomic
def submit_for_review(*, slug: str, user, comment: str = "") -> dict[str, Case]:
    """Draft -> in review, both language versions at once."""
    versions = case_group(slug)
    if not versions or not all(can_edit_case(user, c) for c in versions.values()):
        raise PermissionDenied("only the author or support staff submit a draft")
    problems = submission_problems(versions)
    if problems:
        raise ReviewError(" ".join(problems))
    _move_group(
        versions, user=user, state=Case.State.IN_REVIEW, action=CaseRevision.Action.SUBMITTED, comment=comment
    )
    signals.case_review_requested.send(sender=Case, slug=slug, user=user, comment=comment)
    return versions


@transaction.atomic
def review_case(*, slug: str, user, approve: bool, comment: str = "") -> dict[str, Case]:
    """A second person (support staff, not the author) approves the case,
    which publishes both language versions, or returns it to draft with
    comments (required)."""
    versions = case_group(slug)
    if not versions or not all(can_review_case(user, c) for c in versions.values()):
        raise PermissionDenied("only support staff other than the author review a case in review")
    comment = (comment or "").strip()
    if approve:
        _move_group(
            versions,
            user=user,
            state=Case.State.PUBLISHED,
            action=CaseRevision.Action.APPROVED,
            comment=comment,
        )
    else:
        if not comment:
            raise ReviewError(_("Say what needs to change when returning a case."))
        _move_group(
            versions, user=user, state=Case.State.DRAFT, action=CaseRevision.Action.RETURNED, comment=comment
        )
        signals.case_returned.send(sender=Case, slug=slug, user=user, comment=comment)
    return versions


# --- "this case helped" ---------------------------------------------------------------------


def record_reuse(*, slug: str, user, source: str, session=None) -> bool:
    """Mark a case group as having helped. Returns False when this session
    (or this searcher) had already marked it."""
    if source not in CaseReuse.Source.values:
        raise ValueError(f"unknown source {source!r}")
    if not Case.objects.filter(slug=slug).exists():
        raise Case.DoesNotExist(slug)
    try:
        with transaction.atomic():
            CaseReuse.objects.create(slug=slug, user=user, source=source, session=session)
    except IntegrityError:
        return False
    return True


def reuse_counts(slugs: Iterable[str]) -> dict[str, int]:
    """slug -> how many times the case was marked as having helped."""
    rows = CaseReuse.objects.filter(slug__in=set(slugs)).values("slug").annotate(n=Count("id"))
    return {row["slug"]: row["n"] for row in rows}

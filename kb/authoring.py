"""Writing cases directly: the "New case" page, ``POST /api/v1/cases/``,
``manage.py importcases`` / ``exportcases`` and the upload of Markdown, YAML
or a pasted write-up. Every way in creates a **draft** (both language
versions; the review workflow of ``kb.services`` publishes it).

The file format (docs/kb.md, "Writing and importing cases"): one Markdown
file per language version, YAML front matter for the structured fields and
``## Symptom`` / ``## Environment`` / ``## Cause`` / ``## Resolution``
sections for the prose; or a YAML file in the founding cases' format
(``kb/data/cases/*.yaml``: both languages in one file).

A snapshot given with a case (an existing one the author may see, an
uploaded file or the outputs in a pasted write-up) fills the environment and
the signature: the engine's rules and the environment features of its facts.
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _

from collectors.derived.features import snapshot_features
from kb import services, versions
from kb.access import can_create_case, readable_cases
from kb.models import Case, CaseMeasure, CaseRevision, Measure

LANGUAGES = services.LANGUAGES
# The environment fields a case states once for both languages.
ENV_FIELDS = ("platform", "hypervisor", "cpu_architecture", "cpu_model", "database", "database_version")
# Markdown section headings, in the order they are written, per language.
SECTIONS = {
    "symptom": ("Symptom", "症状"),
    "environment_notes": ("Environment", "环境"),
    "cause": ("Cause", "原因"),
    "resolution_summary": ("Resolution", "解决方法"),
}
MAX_FILE_BYTES = 512 * 1024
RESERVED_SLUGS = ("new", "import", "measures")


class CaseInputError(ValueError):
    """A case that cannot be created as given; the message is for the author."""


# --- what a snapshot says about a case ----------------------------------------------------


@dataclass
class SnapshotAnalysis:
    """The signature and environment a snapshot gives a new case."""

    rules: list[str]
    features: list[str]
    environment: dict[str, str]
    source: str  # where it came from: "snapshot 12", "upload numactl.txt"
    engine_version: str = ""
    prose: str = ""  # the words of a pasted write-up, outside its outputs

    @property
    def signature(self) -> dict:
        return {"rules": sorted(set(self.rules)), "features": list(self.features)}


def environment_of(facts: Any) -> dict[str, str]:
    """CPU, hypervisor and database of a SnapshotFacts: the first physical
    host's CPU (else any host's), KVM when a host shows libvirt, the first
    database found."""
    hosts = list(getattr(facts, "hosts", None) or [])
    ordered = [h for h in hosts if not h.is_guest] + [h for h in hosts if h.is_guest]
    env: dict[str, str] = {}
    for host in ordered:
        if host.cpu is not None and "cpu_architecture" not in env:
            env["cpu_architecture"] = (host.cpu.architecture or "")[:20]
            env["cpu_model"] = (host.cpu.model_name or "")[:120]
        if host.database is not None and host.database.kind and "database" not in env:
            env["database"] = host.database.kind.lower()[:40]
            env["database_version"] = (getattr(host.database, "version", "") or "")[:60]
        if host.domains or host.virsh_version or host.capabilities:
            env.setdefault("hypervisor", "KVM")
    return {k: v for k, v in env.items() if v}


def analyse_text(*, name: str, data: bytes) -> SnapshotAnalysis:
    """Run the engine on an uploaded file or a pasted write-up (stored in a
    temporary file the loader reads, then removed)."""
    if len(data) > MAX_FILE_BYTES:
        raise CaseInputError(_("The file is larger than %(size)d KiB.") % {"size": MAX_FILE_BYTES // 1024})
    engine = services.real_engine()
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name)[:80] or "snapshot.txt"
    with tempfile.TemporaryDirectory(prefix="casebook-case-") as tmp:
        path = Path(tmp) / safe
        path.write_bytes(data)
        rules, facts = engine.run([path])
    text = data.decode("utf-8", errors="replace")
    hosts = list(getattr(facts, "hosts", None) or [])
    prose = "\n".join(h.reading.prose(text) for h in hosts[:1]) if hosts else text
    return SnapshotAnalysis(
        rules=list(rules),
        features=snapshot_features(facts),
        environment=environment_of(facts),
        source=f"upload {safe}",
        engine_version=engine.version,
        prose=prose,
    )


@dataclass
class SnapshotSource:
    """Existing snapshots, which live in an app above the knowledge base
    (triage registers this in its ``ready()``): the ones a user may see, as
    (id, label) pairs newest first, and the analysis of one of them (None
    when the user may not see it or it is not analysed)."""

    choices: Callable[[Any], list[tuple[int, str]]]
    analysis: Callable[[Any, int], SnapshotAnalysis | None]


_snapshot_source: SnapshotSource | None = None


def register_snapshot_source(source: SnapshotSource) -> None:
    global _snapshot_source
    _snapshot_source = source


def snapshot_choices(user) -> list[tuple[int, str]]:
    return _snapshot_source.choices(user) if _snapshot_source is not None else []


def analyse_snapshot(*, user, snapshot_id: int) -> SnapshotAnalysis:
    found = _snapshot_source.analysis(user, snapshot_id) if _snapshot_source is not None else None
    if found is None:
        raise CaseInputError(_("That snapshot cannot be used: it is not visible to you or not analysed."))
    return found


# --- a case document: one language version with its structured fields ------------------------


@dataclass
class CaseDocument:
    """One language version of a case as written in a file or a form."""

    language: str
    title: str
    symptom: str
    cause: str = ""
    resolution_summary: str = ""
    environment_notes: str = ""
    slug: str = ""
    platform: str = Case.Platform.OTHER.value
    hypervisor: str = ""
    cpu_architecture: str = ""
    cpu_model: str = ""
    database: str = ""
    database_version: str = ""
    tags: list[str] = field(default_factory=list)
    references: list[dict] = field(default_factory=list)  # {"key", "title", "url"}
    metrics: list[dict] = field(
        default_factory=list
    )  # {"name", "before", "after", "unit", "expected", "note"}
    steps: list[dict] = field(default_factory=list)  # {"measure", "status", "outcome"}
    applies_to: dict = field(default_factory=dict)  # {"kernel"|"database"|"hypervisor": range}

    def texts(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in services.TEXT_FIELDS}

    def environment(self) -> dict[str, str]:
        return {name: getattr(self, name) for name in ENV_FIELDS}


FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.S)
HEADING = re.compile(r"^(#{1,2})[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def _section_name(heading: str) -> str | None:
    wanted = heading.strip().lower()
    for name, titles in SECTIONS.items():
        if wanted in (t.lower() for t in titles):
            return name
    return None


def _as_list(value: Any, what: str) -> list:
    if value in (None, ""):
        return []
    if not isinstance(value, list):
        raise CaseInputError(_("%(what)s must be a list.") % {"what": what})
    return value


def _number(value: Any) -> float | None:
    if value in (None, ""):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        raise CaseInputError(_("A metric's before and after must be numbers.")) from None


def _structured(meta: dict, language: str) -> dict:
    """The structured fields of front matter (or of a founding-format file)
    in CaseDocument's shape; ``outcome_<language>`` and ``name_<language>``
    of the founding format are read too."""
    out: dict[str, Any] = {"slug": str(meta.get("slug") or "")}
    for name in ENV_FIELDS:
        out[name] = str(meta.get(name) or "")
    out["platform"] = out["platform"] or Case.Platform.OTHER.value
    applies = meta.get("applies_to") or {}
    if not isinstance(applies, dict):
        raise CaseInputError(_("applies_to maps kernel, database or hypervisor to a version range."))
    out["applies_to"] = {str(k): str(v) for k, v in applies.items() if v}
    out["tags"] = [str(t) for t in _as_list(meta.get("tags"), "tags")]
    out["references"] = [
        {"key": str(r.get("key") or ""), "title": str(r.get("title") or ""), "url": str(r.get("url") or "")}
        for r in _as_list(meta.get("references"), "references")
        if isinstance(r, dict)
    ]
    out["metrics"] = [
        {
            "name": str(m.get("name") or m.get(f"name_{language}") or m.get("name_en") or ""),
            "before": _number(m.get("before")),
            "after": _number(m.get("after")),
            "unit": str(m.get("unit") or ""),
            "expected": str(m.get("expected") or ""),
            "note": str(m.get("note") or ""),
        }
        for m in _as_list(meta.get("metrics"), "metrics")
        if isinstance(m, dict)
    ]
    out["steps"] = [
        {
            "measure": str(s.get("measure") or ""),
            "status": str(s.get("status") or CaseMeasure.Status.APPLIED),
            "outcome": str(s.get("outcome") or s.get(f"outcome_{language}") or s.get("outcome_en") or ""),
        }
        for s in _as_list(meta.get("resolution"), "resolution")
        if isinstance(s, dict)
    ]
    return out


def parse_markdown(text: str) -> CaseDocument:
    """A Markdown case: front matter, ``# Title``, then the sections.

    >>> doc = parse_markdown("---\\nlanguage: en\\ntags: [thp]\\n---\\n# Slow\\n## Symptom\\nIt stalls.\\n")
    >>> (doc.title, doc.symptom, doc.tags)
    ('Slow', 'It stalls.', ['thp'])
    """
    match = FRONT_MATTER.match(text)
    if match is None:
        raise CaseInputError(_("A Markdown case starts with YAML front matter between two --- lines."))
    try:
        meta = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise CaseInputError(_("The front matter is not valid YAML: %(error)s") % {"error": exc}) from None
    if not isinstance(meta, dict):
        raise CaseInputError(_("The front matter must be a mapping of fields."))
    body = text[match.end() :]
    language = str(meta.get("language") or "en")
    if language not in LANGUAGES:
        raise CaseInputError(_("The language must be en or zh."))
    title = str(meta.get("title") or "")
    texts: dict[str, list[str]] = {}
    current: str | None = None
    for line in body.splitlines():
        heading = HEADING.match(line)
        if heading and heading.group(1) == "#" and not title:
            title = heading.group(2).strip()
            current = None
            continue
        if heading and heading.group(1) == "##":
            current = _section_name(heading.group(2))
            if current is None:
                raise CaseInputError(
                    _("Unknown section %(heading)s: use Symptom, Environment, Cause and Resolution.")
                    % {"heading": heading.group(2)}
                )
            texts.setdefault(current, [])
            continue
        if current is not None:
            texts[current].append(line)
    values: dict[str, Any] = {name: "\n".join(lines).strip() for name, lines in texts.items()}
    values.update(_structured(meta, language))
    return CaseDocument(language=language, title=title.strip(), **values)


def _front_matter(doc: CaseDocument) -> dict:
    meta: dict[str, Any] = {"slug": doc.slug, "language": doc.language}
    meta.update({name: getattr(doc, name) for name in ENV_FIELDS if getattr(doc, name)})
    if doc.tags:
        meta["tags"] = list(doc.tags)
    if doc.references:
        meta["references"] = [{k: v for k, v in r.items() if v} for r in doc.references]
    if doc.metrics:
        meta["metrics"] = [
            {
                k: (int(v) if isinstance(v, float) and v.is_integer() else v)
                for k, v in m.items()
                if v not in ("", None)
            }
            for m in doc.metrics
        ]
    if doc.steps:
        meta["resolution"] = [{k: v for k, v in s.items() if v} for s in doc.steps]
    if doc.applies_to:
        meta["applies_to"] = dict(doc.applies_to)
    return meta


def render_markdown(doc: CaseDocument) -> str:
    """The Markdown form of a case version; :func:`parse_markdown` reads it back."""
    meta = yaml.safe_dump(_front_matter(doc), allow_unicode=True, sort_keys=False, width=100).strip()
    parts = [f"---\n{meta}\n---\n", f"# {doc.title}\n"]
    zh = doc.language == "zh"
    for name, (heading_en, heading_zh) in SECTIONS.items():
        text = getattr(doc, name).strip()
        if text:
            parts.append(f"## {heading_zh if zh else heading_en}\n\n{text}\n")
    return "\n".join(parts)


def parse_yaml_case(text: str) -> list[CaseDocument]:
    """A case in the founding cases' format: both language versions."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CaseInputError(_("The file is not valid YAML: %(error)s") % {"error": exc}) from None
    if not isinstance(data, dict) or not any(isinstance(data.get(lang), dict) for lang in LANGUAGES):
        raise CaseInputError(_("A YAML case has an en: and a zh: section (the kb/data/cases format)."))
    docs = []
    for language in LANGUAGES:
        texts = data.get(language)
        if not isinstance(texts, dict):
            continue
        values: dict[str, Any] = {
            name: " ".join(str(texts.get(name) or "").split()) for name in services.TEXT_FIELDS
        }
        values.update(_structured(data, language))
        docs.append(CaseDocument(language=language, **values))
    return docs


def parse_file(name: str, data: bytes) -> list[CaseDocument]:
    """The case versions of an uploaded or imported file, by its extension."""
    if len(data) > MAX_FILE_BYTES:
        raise CaseInputError(_("The file is larger than %(size)d KiB.") % {"size": MAX_FILE_BYTES // 1024})
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CaseInputError(_("The file is not UTF-8 text.")) from None
    suffix = Path(name).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return parse_yaml_case(text)
    if suffix in (".md", ".markdown"):
        return [parse_markdown(text)]
    raise CaseInputError(_("Upload a Markdown (.md) or YAML (.yaml) file."))


def document_of(case: Case) -> CaseDocument:
    """A stored case version as a CaseDocument (what exportcases writes)."""
    return CaseDocument(
        language=case.language,
        slug=case.slug,
        **{name: getattr(case, name) or "" for name in services.TEXT_FIELDS},
        **{name: getattr(case, name) or "" for name in ENV_FIELDS},
        tags=[t.name for t in case.tags.all()],
        references=[{"key": r.key, "title": r.title, "url": r.url} for r in case.references.all()],
        metrics=[
            {
                "name": m.name,
                "before": m.before,
                "after": m.after,
                "unit": m.unit,
                "expected": m.expected,
                "note": m.note,
            }
            for m in case.metrics.all()
        ],
        steps=[
            {"measure": s.measure.slug, "status": s.status, "outcome": s.outcome}
            for s in case.steps.select_related("measure")
        ],
        applies_to=dict(case.applies_to or {}),
    )


# --- creating drafts ---------------------------------------------------------------------------


def _check(doc: CaseDocument) -> None:
    if doc.language not in LANGUAGES:
        raise CaseInputError(_("The language must be en or zh."))
    if not doc.title.strip() or not doc.symptom.strip():
        raise CaseInputError(_("A case needs a title and a symptom."))
    if doc.platform not in Case.Platform.values:
        raise CaseInputError(
            _("Unknown platform %(platform)s (one of %(choices)s).")
            % {"platform": doc.platform, "choices": ", ".join(Case.Platform.values)}
        )
    limits = {"title": 250, "hypervisor": 80, "cpu_architecture": 20, "cpu_model": 120, "database": 40,
              "database_version": 60, "slug": 100}  # fmt: skip
    for name, size in limits.items():
        if len(getattr(doc, name) or "") > size:
            raise CaseInputError(
                _("%(field)s is longer than %(size)d characters.") % {"field": name, "size": size}
            )
    slugs = [s["measure"] for s in doc.steps]
    unknown = sorted(set(slugs) - set(Measure.objects.filter(slug__in=slugs).values_list("slug", flat=True)))
    if unknown:
        raise CaseInputError(_("Unknown measures: %(slugs)s.") % {"slugs": ", ".join(unknown)})
    statuses = set(CaseMeasure.Status.values)
    if any(s["status"] not in statuses for s in doc.steps):
        raise CaseInputError(_("A step's status is applied, recommended or rejected."))
    if any(not r.get("key") for r in doc.references):
        raise CaseInputError(_("Every reference needs a key."))
    if any(not m.get("name") for m in doc.metrics):
        raise CaseInputError(_("Every metric needs a name."))
    for kind, spec in doc.applies_to.items():
        if kind not in versions.KINDS or not versions.valid_range(spec):
            raise CaseInputError(
                _("Version range %(kind)s: %(spec)s is not read (use e.g. >=3.5, <3.10).")
                % {"kind": kind, "spec": spec}
            )


def _free_slug(wanted: str, title: str) -> str:
    base = slugify(wanted or title)[:90].strip("-") or "case"
    if base in RESERVED_SLUGS:  # the case pages' own paths
        base = f"{base}-case"
    if wanted and Case.objects.filter(slug=base).exists():
        raise CaseInputError(_("A case with the slug %(slug)s exists already.") % {"slug": base})
    slug, n = base, 2
    while Case.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug


@transaction.atomic
def do_create_case(
    *,
    user,
    documents: Iterable[CaseDocument],
    analysis: SnapshotAnalysis | None = None,
) -> dict[str, Case]:
    """Create a draft case from one or both language versions. A missing
    version is pre-filled from the given one (``translation_pending``: the
    author translates it before submitting for review, as for a promoted
    session). The structured fields come from the first version; a snapshot
    analysis fills the signature and the environment fields left empty."""
    if user is not None and not can_create_case(user):
        raise PermissionDenied("only team members and support staff write cases")
    docs = {d.language: d for d in documents}
    if not docs:
        raise CaseInputError(_("A case needs a title and a symptom."))
    for doc in docs.values():
        _check(doc)
    first = next(iter(docs.values()))
    slug = _free_slug(first.slug, first.title)
    environment = first.environment()
    if analysis is not None:
        for name, value in analysis.environment.items():
            if not environment.get(name):
                environment[name] = value
    author = user if getattr(user, "is_authenticated", False) else None
    created: dict[str, Case] = {}
    for language in LANGUAGES:
        doc = docs.get(language, first)
        case = Case(
            slug=slug,
            language=language,
            state=Case.State.DRAFT,
            author=author,
            translation_pending=language not in docs,
            applies_to=dict(first.applies_to),
            **doc.texts(),
            **environment,
        )
        if analysis is not None:
            case.signature = analysis.signature
            case.signature_engine_version = analysis.engine_version[:40]
            case.signature_source = analysis.source[:200]
        services.save_case(
            case,
            tags=first.tags,
            steps=doc.steps if language in docs else first.steps,
            metrics=doc.metrics if language in docs else first.metrics,
            references=first.references,
        )
        services.record_revision(case=case, user=author, action=CaseRevision.Action.CREATED)
        created[language] = case
    return created


def do_import_files(*, user, files: Iterable[tuple[str, bytes]]) -> list[dict[str, Case]]:
    """Import Markdown and YAML files as drafts; Markdown versions sharing a
    slug (``<slug>.en.md`` and ``<slug>.zh.md``) form one case. All or
    nothing: a file that cannot be read stops the import."""
    groups: dict[str, list[CaseDocument]] = {}
    order: list[str] = []
    for name, data in files:
        try:
            docs = parse_file(name, data)
        except CaseInputError as exc:
            raise CaseInputError(f"{Path(name).name}: {exc}") from None
        key = docs[0].slug or f"\0{name}"
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].extend(docs)
    with transaction.atomic():
        return [do_create_case(user=user, documents=groups[key]) for key in order]


def do_create_from_writeup(
    *, user, language: str, title: str, text: str, cause: str = "", resolution_summary: str = ""
) -> dict[str, Case]:
    """A pasted write-up: the engine reads the outputs in it (the signature and
    environment), its prose becomes the symptom; the author fills the cause
    and the resolution, now or when editing the draft."""
    analysis = analyse_text(name="write-up.txt", data=text.encode("utf-8"))
    symptom = analysis.prose.strip() or text.strip()
    doc = CaseDocument(
        language=language, title=title, symptom=symptom, cause=cause, resolution_summary=resolution_summary
    )
    return do_create_case(user=user, documents=[doc], analysis=analysis)


def do_export_cases(*, directory: Path, slugs: Iterable[str] | None = None, user=None) -> list[Path]:
    """Write each version of the chosen cases (every case without ``slugs``)
    as ``<slug>.<language>.md``: the format :func:`do_import_files` reads."""
    cases = Case.objects.all() if user is None else readable_cases(user)
    if slugs:
        wanted = list(slugs)
        cases = cases.filter(slug__in=wanted)
        missing = sorted(set(wanted) - set(cases.values_list("slug", flat=True)))
        if missing:
            raise CaseInputError(_("No such case: %(slugs)s.") % {"slugs": ", ".join(missing)})
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for case in cases.order_by("slug", "language").prefetch_related("tags", "references", "metrics"):
        path = directory / f"{case.slug}.{case.language}.md"
        path.write_text(render_markdown(document_of(case)), encoding="utf-8")
        written.append(path)
    return written

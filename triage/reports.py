"""Ticket-ready Markdown report of one snapshot.

Pasted into a Jira-style tracker, the report must stand on its own: what was
analysed, each finding with its evidence (artifact and line), the measures
that address it, and the similar past cases with why they match. Example
(English)::

    # Snapshot report: zstack-9
    - Status: done · Engine: 1.4.0 · Kind: Collector archive
    ## Findings (2)
    ### [CRITICAL] `kvm.vcpus_unpinned` — 32 vCPUs are not pinned
    ...

The report's language is chosen per request (``?lang=`` or Accept-Language),
independently of the UI language of whoever opens it later in the ticket: its
labels are gettext strings rendered under ``translation.override`` of that
language (the compiled catalogue is committed), its content (findings, cases,
measures) in the same language through ``config.language``.

The layout lives in ``templates/triage/report.txt`` (autoescape off): this
module only prepares its context (data and already-escaped pieces such as
links), and the markup writer supplies the template's pieces (``w.h2``,
``w.li``...) and the escaping filters of ``triage.templatetags.report_markup``.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from django.template.loader import render_to_string
from django.urls import NoReverseMatch, reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext_lazy

from collectors.derived.topology import cpu_node_map
from collectors.facts import HostFacts
from config.language import content_language, in_language, ui_language
from engine.rules import rule_title
from kb.models import Measure
from kb.similarity import QUALIFYING_SEVERITIES, case_digest, explain, format_score
from triage.fleetview import split_acknowledged
from triage.models import Finding, Snapshot
from triage.selectors import sounds_like_cases

# A host's role as the report and the report page name it.
ROLES = {"physical": gettext_lazy("physical host"), "guest": gettext_lazy("virtual machine")}
SEVERITY_LABELS = {
    "critical": gettext_lazy("CRITICAL"),
    "warning": gettext_lazy("WARNING"),
    "info": gettext_lazy("INFO"),
}
# The status as the report writes it: its value in English ("status: queued").
STATUS_LABELS = {
    "queued": pgettext_lazy("report status", "queued"),
    "analyzing": pgettext_lazy("report status", "analyzing"),
    "done": pgettext_lazy("report status", "done"),
    "failed": pgettext_lazy("report status", "failed"),
}
MAX_EVIDENCE = 8
TOP = 3  # findings named at the top of the report


def report_language(value: str | None) -> str:
    """``zh`` for any Chinese language tag (``zh-hans``, ``zh-CN``, ``zh``), else ``en``."""
    return content_language(value)


def _md_inline(text: Any) -> str:
    """One line of table-safe, inline Markdown text."""
    s = "" if text is None else str(text)
    s = s.replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    return s.strip()


def _code(text: Any) -> str:
    s = _md_inline(text).replace("`", "'")
    return f"`{s}`" if s else "—"


def _command(text: Any) -> str:
    """A command as inline code that copies back exactly (pipes and quotes
    kept; a command with backticks gets a longer fence)."""
    s = " ".join(str(text or "").split("\n")).strip()
    if "`" not in s:
        return f"`{s}`"
    return f"`` {s} ``"


def _value(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(_value(v) for v in value) or "—"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_value(v)}" for k, v in value.items()) or "—"
    return str(value)


class Markdown:
    """How a report's structure is written in Markdown (``report.md``).
    :class:`JiraWiki` writes the same structure in Jira wiki markup: the
    renderers below only ever call these methods, so both formats carry the
    same content."""

    name = "markdown"
    content_type = "text/markdown; charset=utf-8"
    extension = "md"

    inline = staticmethod(_md_inline)
    code = staticmethod(_code)
    command = staticmethod(_command)

    # The pieces ``templates/triage/report.txt`` writes its structure with.
    h1, h2, h3 = "# ", "## ", "### "
    li, li2 = "- ", "  - "  # bullets, nested bullets
    b, i = "**", "*"  # bold, italic
    q, q2 = "> ", "  > "  # quotes, nested quotes
    table_head, row = "| | |\n|---|---|\n", "| "  # a name/value table
    fold_open, fold_mid, fold_end = "<details><summary>", "</summary>\n\n", "\n\n</details>"

    def heading(self, level: int, text: str) -> str:
        return f"{'#' * level} {text}"

    def bullet(self, text: str, depth: int = 1) -> str:
        return f"{'  ' * (depth - 1)}- {text}"

    def bold(self, text: str) -> str:
        return f"**{text}**"

    def italic(self, text: str) -> str:
        return f"*{text}*"

    def quote(self, text: str, depth: int = 1) -> str:
        return f"{'  ' * (depth - 1)}> {text}"

    def paragraph(self, text: str) -> str:
        """A block of free text (an explanation): kept as written."""
        return text.strip()

    def table(self, rows: list[tuple[str, str]]) -> list[str]:
        """A two-column name/value table (cells already inline-safe)."""
        return ["| | |", "|---|---|", *(f"| {name} | {value} |" for name, value in rows)]

    def link(self, text: str, url: str) -> str:
        return url if text == url else f"[{text}]({url})"

    def fold(self, summary: str, body: list[str]) -> list[str]:
        return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>"]


_JIRA_SPECIAL = re.compile(r"([\\{}\[\]|*_^~!+?#-])")


class JiraWiki(Markdown):
    """Jira wiki markup (Jira Server/Data Center, and Cloud's wiki renderer)."""

    name = "jira"
    content_type = "text/plain; charset=utf-8"
    extension = "jira"

    h1, h2, h3 = "h1. ", "h2. ", "h3. "
    li, li2 = "* ", "** "
    b, i = "*", "_"
    q, q2 = "bq. ", "bq. "
    table_head, row = "", "|| "
    fold_open, fold_mid, fold_end = "{panel:title=", "}\n", "\n{panel}"

    @staticmethod
    def inline(text: Any) -> str:
        s = "" if text is None else str(text)
        s = s.replace("\r", " ").replace("\n", " ").strip()
        return _JIRA_SPECIAL.sub(r"\\\1", s)

    def code(self, text: Any) -> str:
        s = self.inline(text)
        return f"{{{{{s}}}}}" if s else "—"

    def command(self, text: Any) -> str:
        return self.code(" ".join(str(text or "").split("\n")))

    def heading(self, level: int, text: str) -> str:
        return f"h{level}. {text}"

    def bullet(self, text: str, depth: int = 1) -> str:
        return f"{'*' * depth} {text}"

    def bold(self, text: str) -> str:
        return f"*{text}*"

    def italic(self, text: str) -> str:
        return f"_{text}_"

    def quote(self, text: str, depth: int = 1) -> str:
        return f"bq. {text}"

    def paragraph(self, text: str) -> str:
        return "\n".join(self.inline(line) for line in text.strip().splitlines())

    def table(self, rows: list[tuple[str, str]]) -> list[str]:
        return [f"|| {name} | {value} |" for name, value in rows]

    def link(self, text: str, url: str) -> str:
        return f"[{url}]" if text == url else f"[{text}|{url}]"

    def fold(self, summary: str, body: list[str]) -> list[str]:
        return [f"{{panel:title={summary}}}", *body, "{panel}"]


MARKUPS = {"markdown": Markdown(), "jira": JiraWiki()}


def facts_summary(host: HostFacts) -> dict[str, Any]:
    """The few facts a reader of a ticket wants first, from the snapshot's
    stored host (``Snapshot.host_facts()``)."""
    cpu, kernel, db = host.cpu, host.kernel, host.database
    return {
        "hostname": host.hostname or None,
        "role": host.role or None,
        "architecture": cpu.architecture if cpu else None,
        "cpu_model": cpu.model_name if cpu else None,
        # Without lscpu: the CPUs the nodes list (numactl -H, sysfs, virsh capabilities).
        "cpus": host.logical_cpus() or len(cpu_node_map(host)) or None,
        "sockets": cpu.sockets if cpu else None,
        "numa_nodes": host.numa_node_count(),
        "kernel": kernel.release if kernel else None,
        "os": kernel.os_release if kernel else None,
        "database": (" ".join(str(x) for x in (db.kind, db.version) if x) or None) if db else None,
        "domains": len(host.domains),
        "artifacts": len(host.artifacts),
    }


def _measure_titles(slugs: set[str], lang: str) -> dict[str, str]:
    return {m.slug: m.title_for(lang) for m in Measure.objects.filter(slug__in=slugs)}


def _link_text(w: Markdown, text: Any) -> str:
    """Inline text that cannot close a link's brackets (Markdown or Jira)."""
    return w.inline(text).replace("[", "(").replace("]", ")")


def _link(w: Markdown, text: str, path: str, base_url: str) -> str:
    """``text`` linked to the absolute URL when the report has a base URL, else the text."""
    return w.link(text, f"{base_url.rstrip('/')}{path}") if base_url and path else text


def _measure(w: Markdown, slug: str, title: str | None, base_url: str) -> str:
    """A measure as the report names it everywhere: its title (linked to the
    catalogue page), then its slug as code for those who search by it."""
    path = ""
    with contextlib.suppress(NoReverseMatch):
        path = reverse("kb:measure_detail", args=[slug])
    name = _link(w, _link_text(w, title or slug), path, base_url)
    return f"{name} ({w.code(slug)})" if title else w.code(slug)


def _answer(w: Markdown, snapshot: Snapshot, findings, lang: str, base_url: str) -> dict | None:
    """The report's header: the best matching case (or the case the text
    sounds like), its cause, the measures that fixed it, their measured effect
    and why it matched; the ticket's reader sees the answer first."""
    cases = [c for c in snapshot.similar_cases or [] if isinstance(c, dict) and c.get("slug")]
    sounds = False
    if not cases and not any(f.severity in QUALIFYING_SEVERITIES for f in findings):
        cases, sounds = sounds_like_cases(snapshot, language=lang), True
    match = cases[0] if cases else None
    digest = case_digest(match["slug"], lang) if match else None
    if digest is None or match is None:
        return None
    case = digest["case"]
    effects = []
    for m in digest["metrics"]:
        change = f" ({m['change']:+d} %)" if m["change"] is not None else ""
        before, after = (f"{v:g}" if isinstance(v, float) else _value(v) for v in (m["before"], m["after"]))
        effects.append(f"{w.inline(m['name'])}: {before} → {after} {w.inline(m['unit'])}{change}")
    fixed = [_measure(w, s["measure"].slug, s["measure"].title_for(lang), base_url) for s in digest["fixed"]]
    return {
        "sounds": sounds,
        "title": _link(w, _link_text(w, case.title), case.get_absolute_url(), base_url),
        "score": format_score(match.get("score")),
        "cause": case.cause,
        "fixed": "; ".join(fixed),
        "effects": effects,
        "terms": match.get("shared_terms") or [],
        "why": explain(match, ui_language(lang == "zh")) if match.get("contributions") else None,
    }


def render_markdown(snapshot: Snapshot, *, language: str = "en", base_url: str = "") -> str:
    """The whole report as Markdown text in ``language`` (``en`` or ``zh``).
    ``base_url`` (scheme and host) makes the links absolute for the ticket."""
    return render_report(snapshot, language=language, base_url=base_url, markup="markdown")


def _header(w: Markdown, snapshot: Snapshot, base_url: str) -> dict[str, Any]:
    """The title's and the upload's particulars and the host summary."""
    context: dict[str, Any] = {
        "status": str(STATUS_LABELS.get(snapshot.status, snapshot.status)),
        "kind": str(Snapshot.Kind(snapshot.kind).label),
        "sha256": snapshot.sha256[:12],
        "uploaded": f"{snapshot.created_at:%Y-%m-%d %H:%M}",
        "full_report": "",
        "tickets": [
            w.link(w.inline(t.key), t.url) if t.url else w.inline(t.key)
            for t in (snapshot.tickets.all() if snapshot.pk else ())
        ],
        "summary": None,  # no host summary before the analysis or without any fact
    }
    if base_url:
        url = f"{base_url.rstrip('/')}{snapshot.get_absolute_url()}"
        context["full_report"] = w.link(url, url)
    summary = facts_summary(snapshot.host_facts())
    if snapshot.status == Snapshot.Status.DONE and any(v for v in summary.values()):
        rows = [
            (_("Host"), summary["hostname"]),
            (_("Role"), ROLES.get(summary["role"] or "", summary["role"])),
            (_("CPU"), " · ".join(str(x) for x in (summary["cpu_model"], summary["architecture"]) if x)),
            (_("CPUs / sockets"), " / ".join(str(x) for x in (summary["cpus"], summary["sockets"]) if x)),
            (_("NUMA nodes"), summary["numa_nodes"]),
            (_("Kernel"), " · ".join(str(x) for x in (summary["kernel"], summary["os"]) if x)),
            (_("Database"), summary["database"]),
        ]
        context["summary"] = [(name, w.inline(value)) for name, value in rows if value not in (None, "")]
    return context


def _acknowledged(acknowledged: list, lang: str) -> list[dict[str, Any]]:
    """Acknowledged findings: folded to one line each, with who, why and until when."""
    return [
        {
            "severity": SEVERITY_LABELS.get(f.severity, f.severity.upper()),
            "rule": f.rule,
            "title": f.localized_title(lang),
            "cluster": ack.cluster,
            "host": ack.host,
            "user": ack.created_by.get_username(),
            "created": f"{ack.created_at:%Y-%m-%d}",
            "until": f"{ack.expires_at:%Y-%m-%d}" if ack.expires_at else "",
            "reason": ack.reason,
        }
        for f, ack in acknowledged
    ]


def render_report(
    snapshot: Snapshot, *, language: str = "en", base_url: str = "", markup: str = "markdown"
) -> str:
    """The whole report in ``markup`` (``markdown`` or ``jira``), its labels
    in the report's language whatever the reader's UI language is: the
    template ``triage/report.txt`` writes it with the markup's pieces."""
    lang = report_language(language)
    with translation.override(ui_language(lang == "zh")):
        text = render_to_string("triage/report.txt", _context(MARKUPS[markup], snapshot, lang, base_url))
    return text.rstrip() + "\n"


def _context(w: Markdown, snapshot: Snapshot, lang: str, base_url: str) -> dict[str, Any]:
    zh = lang == "zh"
    done = snapshot.status == Snapshot.Status.DONE
    context = {"w": w, "s": snapshot, "done": done, **_header(w, snapshot, base_url)}
    if not done:
        return context
    findings, acknowledged = split_acknowledged(
        snapshot, Finding.in_report_order(snapshot.current_findings())
    )
    titles = _measure_titles({s for f in findings for s in f.measures or []}, lang)
    cases = [c for c in snapshot.similar_cases or [] if isinstance(c, dict)]
    serious = any(f.severity in QUALIFYING_SEVERITIES for f in findings)
    errors = [e for e in snapshot.errors or [] if isinstance(e, dict)]
    context.update(
        answer=_answer(w, snapshot, findings, lang, base_url),
        findings=[_finding(w, f, lang, titles, base_url) for f in findings],
        top=[f.rule for f in findings[:TOP]] if len(findings) > 1 else [],
        acknowledged=_acknowledged(acknowledged, lang),
        not_checked=_not_checked(w, snapshot, zh),
        checked=sorted(str(r) for r in snapshot.checked or []),
        serious=serious,
        sounds_like=_sounds_like(w, snapshot, lang, base_url) if not cases and not serious else [],
        cases=[_similar_case(w, case, zh, base_url) for case in cases],
        errors=[{"artifact": e.get("artifact"), "message": e.get("message")} for e in errors[:20]],
        n_errors=len(errors),
    )
    return context


def _similar_case(w: Markdown, case: dict, zh: bool, base_url: str) -> dict[str, Any]:
    link = ""
    if base_url and case.get("slug"):
        with contextlib.suppress(NoReverseMatch):  # a slug the URL conf cannot express: no link
            url = f"{base_url.rstrip('/')}{reverse('kb:case_detail', args=[case['slug']])}"
            link = w.link(url, url)
    return {
        "title": in_language(case.get("title") or "", case.get("title_zh") or "", zh) or case.get("slug"),
        "slug": case.get("slug"),
        "score": format_score(case.get("score")),
        "shared": ", ".join(w.code(r) for r in case.get("shared_rules") or []) or "—",
        "link": link,
        "why": explain(case, ui_language(zh)) if case.get("contributions") else None,
    }


def _sounds_like(w: Markdown, snapshot: Snapshot, lang: str, base_url: str) -> list[dict[str, Any]]:
    out = []
    for case in sounds_like_cases(snapshot, language=lang):
        path = ""
        with contextlib.suppress(NoReverseMatch):
            path = reverse("kb:case_detail", args=[case["slug"]])
        out.append(
            {
                "title": _link(w, _link_text(w, case.get("title") or case["slug"]), path, base_url),
                "terms": case.get("shared_terms") or [],
                "score": format_score(case.get("score")),
            }
        )
    return out


def _finding(w: Markdown, f: Finding, lang: str, titles: dict[str, str], base_url: str) -> dict[str, Any]:
    """One finding: title, host, explanation, evidence (artifact and line) and measures."""
    explanation = f.localized_explanation(lang)
    evidence = [e for e in f.evidence or [] if isinstance(e, dict)]
    items = []
    for e in evidence[:MAX_EVIDENCE]:
        hit = next((x for x in e.get("excerpt") or [] if x.get("hit")), None)
        items.append(
            {
                "fact": e.get("fact"),
                "value": _value(e.get("value")),
                "artifact": w.inline(e.get("artifact") or ""),
                "line": str(e["line"]) if e.get("line") else "",
                "quote": w.inline(hit.get("text")) if hit else None,
            }
        )
    return {
        "severity": SEVERITY_LABELS.get(f.severity, f.severity.upper()),
        "rule": f.rule,
        "title": f.localized_title(lang),
        "host": f.host,
        "explanation": w.paragraph(explanation) if explanation else None,
        "evidence": items,
        "more": max(len(evidence) - MAX_EVIDENCE, 0),
        "measures": [_measure(w, slug, titles.get(slug), base_url) for slug in f.measures or []],
    }


def _not_checked(w: Markdown, snapshot: Snapshot, zh: bool) -> list[dict[str, Any]]:
    """What could not be checked, with the commands that produce the missing evidence."""
    return [
        {
            "rule": n["rule"],
            "title": rule_title(n["rule"], zh),
            "reason": in_language(n.get("reason") or "", n.get("reason_zh") or "", zh),
            "commands": [w.command(command) for command in n.get("commands") or []],
        }
        for n in snapshot.not_checked or []
        if isinstance(n, dict) and n.get("rule")
    ]

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
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from django.urls import NoReverseMatch, reverse
from django.utils import translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, pgettext, pgettext_lazy

from collectors.facts import HostFacts
from config.language import content_language, in_language, ui_language
from kb.models import Measure
from kb.similarity import QUALIFYING_SEVERITIES, case_digest, explain, format_score
from triage.fleetview import split_acknowledged
from triage.models import Finding, Snapshot
from triage.rules import rule_title
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
    nodes = host.numa.nodes if host.numa else {}
    return {
        "hostname": host.hostname or None,
        "role": host.role or None,
        "architecture": cpu.architecture if cpu else None,
        "cpu_model": cpu.model_name if cpu else None,
        "cpus": cpu.cpus if cpu else None,
        "sockets": cpu.sockets if cpu else None,
        "numa_nodes": len(nodes) if nodes else (cpu.numa_nodes if cpu else None),
        "kernel": kernel.release if kernel else None,
        "os": kernel.os_release if kernel else None,
        "database": (" ".join(str(x) for x in (db.kind, db.version) if x) or None) if db else None,
        "domains": len(host.domains),
        "artifacts": len(host.artifacts),
    }


def _pair(label: Any, value: Any) -> str:
    """``label: value``, a label and what it labels."""
    return f"{label}: {value}"


def _counted(label: Any, n: int) -> str:
    """A heading with its count: ``Findings (3)``."""
    return f"{label} ({n})"


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


def _answer_markdown(w: Markdown, snapshot: Snapshot, findings, lang: str, base_url: str, add) -> None:
    """The report's header: the best matching case (or the case the text
    sounds like), its cause, the measures that fixed it, their measured effect
    and why it matched; the ticket's reader sees the answer first."""
    zh = lang == "zh"
    cases = [c for c in snapshot.similar_cases or [] if isinstance(c, dict) and c.get("slug")]
    sounds = False
    if not cases and not any(f.severity in QUALIFYING_SEVERITIES for f in findings):
        cases, sounds = sounds_like_cases(snapshot, language=lang), True
    match = cases[0] if cases else None
    digest = case_digest(match["slug"], lang) if match else None
    if digest is None or match is None:
        return
    case = digest["case"]
    add(w.heading(2, _("Answer")))
    add("")
    title = _link(w, _link_text(w, case.title), case.get_absolute_url(), base_url)
    label = _("Sounds like this known case") if sounds else _("Best matching case")
    score = pgettext("report", "score")
    add(f"{w.bold(label)}: {title} ({score} {format_score(match.get('score'))})")
    add("")
    if case.cause:
        add(w.bullet(_pair(_("Cause"), w.inline(case.cause))))
    if digest["fixed"]:
        names = [
            _measure(w, s["measure"].slug, s["measure"].title_for(lang), base_url) for s in digest["fixed"]
        ]
        add(w.bullet(_pair(_("What fixed it"), "; ".join(names))))
    for m in digest["metrics"]:
        change = f" ({m['change']:+d} %)" if m["change"] is not None else ""
        before, after = (f"{v:g}" if isinstance(v, float) else _value(v) for v in (m["before"], m["after"]))
        effect = f"{w.inline(m['name'])}: {before} → {after} {w.inline(m['unit'])}{change}"
        add(w.bullet(_pair(_("Measured effect"), effect)))
    if sounds:
        terms = ", ".join(w.code(x) for x in match.get("shared_terms") or [])
        add(w.bullet(_pair(_("Why it matched"), _pair(_("shared terms"), terms))))
    elif match.get("contributions"):
        add(w.bullet(_pair(_("Why it matched"), w.inline(explain(match, ui_language(zh))))))
    add("")


def render_markdown(snapshot: Snapshot, *, language: str = "en", base_url: str = "") -> str:
    """The whole report as Markdown text in ``language`` (``en`` or ``zh``).
    ``base_url`` (scheme and host) makes the links absolute for the ticket."""
    return render_report(snapshot, language=language, base_url=base_url, markup="markdown")


def _header(w: Markdown, snapshot: Snapshot, base_url: str, lines: list[str]) -> str:
    """The title, the upload's particulars and the host summary; returns the
    status as shown."""
    add = lines.append
    add(w.heading(1, _pair(pgettext("report", "Snapshot report"), w.inline(snapshot.display_name))))
    add("")
    status = str(STATUS_LABELS.get(snapshot.status, snapshot.status))
    kind = str(Snapshot.Kind(snapshot.kind).label)
    add(w.bullet(_pair(_("Status"), w.bold(status))))
    if snapshot.engine_version:
        add(w.bullet(_pair(_("Engine"), w.inline(snapshot.engine_version))))
    add(w.bullet(_pair(_("Kind"), kind)))
    if snapshot.original_filename:
        add(
            w.bullet(
                _pair(_("File"), f"{w.code(snapshot.original_filename)} (sha256 {snapshot.sha256[:12]})")
            )
        )
    if snapshot.cluster:
        add(w.bullet(_pair(_("Cluster"), w.code(snapshot.cluster))))
    add(w.bullet(_pair(_("Uploaded"), f"{snapshot.created_at:%Y-%m-%d %H:%M} UTC")))
    if base_url:
        url = f"{base_url.rstrip('/')}{snapshot.get_absolute_url()}"
        add(w.bullet(_pair(_("Full report"), w.link(url, url))))
    for ticket in snapshot.tickets.all() if snapshot.pk else ():
        key = w.link(w.inline(ticket.key), ticket.url) if ticket.url else w.inline(ticket.key)
        add(w.bullet(_pair(_("Ticket"), key)))
    add("")

    summary = facts_summary(snapshot.host_facts())
    if snapshot.status == Snapshot.Status.DONE and any(v for v in summary.values()):
        add(w.heading(2, _("Host summary")))
        add("")
        rows = [
            (_("Host"), summary["hostname"]),
            (_("Role"), ROLES.get(summary["role"] or "", summary["role"])),
            (_("CPU"), " · ".join(str(x) for x in (summary["cpu_model"], summary["architecture"]) if x)),
            (_("CPUs / sockets"), " / ".join(str(x) for x in (summary["cpus"], summary["sockets"]) if x)),
            (_("NUMA nodes"), summary["numa_nodes"]),
            (_("Kernel"), " · ".join(str(x) for x in (summary["kernel"], summary["os"]) if x)),
            (_("Database"), summary["database"]),
        ]
        lines.extend(w.table([(name, w.inline(value)) for name, value in rows if value not in (None, "")]))
        add("")

    return status


def _acknowledged(w: Markdown, acknowledged: list, lang: str, add) -> None:
    """Acknowledged findings: folded to one line each, with who, why and until when."""
    if not acknowledged:
        return
    add(w.heading(2, _counted(pgettext("report", "Acknowledged"), len(acknowledged))))
    add("")
    until_label, cluster_label, host_label = pgettext("report", "until"), _("Cluster"), _("Host")
    for f, ack in acknowledged:
        until = f", {until_label} {ack.expires_at:%Y-%m-%d}" if ack.expires_at else ""
        scope = (
            f"{cluster_label} {w.code(ack.cluster)}" if ack.cluster else f"{host_label} {w.code(ack.host)}"
        )
        severity = SEVERITY_LABELS.get(f.severity, f.severity.upper())
        add(w.bullet(f"[{severity}] {w.code(f.rule)} — {w.inline(f.localized_title(lang))}"))
        add(
            w.bullet(
                f"{scope} · {w.inline(ack.created_by.get_username())} {ack.created_at:%Y-%m-%d}{until}: "
                f"{w.inline(ack.reason)}",
                2,
            )
        )
    add("")


def render_report(
    snapshot: Snapshot, *, language: str = "en", base_url: str = "", markup: str = "markdown"
) -> str:
    """The whole report in ``markup`` (``markdown`` or ``jira``), its labels
    in the report's language whatever the reader's UI language is."""
    lang = report_language(language)
    with translation.override(ui_language(lang == "zh")):
        return _report(MARKUPS[markup], snapshot, lang, base_url)


def _report(w: Markdown, snapshot: Snapshot, lang: str, base_url: str) -> str:
    zh = lang == "zh"
    lines: list[str] = []
    add = lines.append

    status = _header(w, snapshot, base_url, lines)

    if snapshot.status != Snapshot.Status.DONE:
        add(
            _("The analysis has not finished yet (status: %(status)s); findings follow when it is done.")
            % {"status": status}
        )
        add("")
        if snapshot.last_error:
            add(w.quote(w.inline(snapshot.last_error)))
            add("")
        return "\n".join(lines).rstrip() + "\n"

    findings, acknowledged = split_acknowledged(
        snapshot, Finding.in_report_order(snapshot.current_findings())
    )
    _answer_markdown(w, snapshot, findings, lang, base_url, add)
    add(w.heading(2, _counted(_("Findings"), len(findings))))
    add("")
    if not findings:
        add(w.bold(_("No problem found in what was checked.")))
        add("")
    elif len(findings) > 1:
        add(_pair(w.bold(_("Largest impact first")), ", ".join(w.code(f.rule) for f in findings[:TOP])))
        add("")
    titles = _measure_titles({s for f in findings for s in f.measures or []}, lang)
    for f in findings:
        _finding(w, f, lang, titles, base_url, add)

    _acknowledged(w, acknowledged, lang, add)

    _not_checked_markdown(w, snapshot, zh, add)

    add(w.heading(2, _("Similar cases")))
    add("")
    cases = [c for c in snapshot.similar_cases or [] if isinstance(c, dict)]
    if not cases:
        serious = any(f.severity in QUALIFYING_SEVERITIES for f in findings)
        add(
            _("No similar case in the knowledge base: possibly a new problem.")
            if serious
            else _("No known problem matched (%(n)s rules checked).") % {"n": len(snapshot.checked or [])}
        )
        add("")
        if not serious:
            _sounds_like_markdown(w, snapshot, lang, base_url, add)
    for case in cases:
        title = in_language(case.get("title") or "", case.get("title_zh") or "", zh) or case.get("slug")
        score_text = format_score(case.get("score"))
        score_label = pgettext("report", "score")
        shared = ", ".join(w.code(r) for r in case.get("shared_rules") or []) or "—"
        link = ""
        if base_url and case.get("slug"):
            with contextlib.suppress(NoReverseMatch):  # a slug the URL conf cannot express: no link
                url = f"{base_url.rstrip('/')}{reverse('kb:case_detail', args=[case['slug']])}"
                link = f" — {w.link(url, url)}"
        add(
            w.bullet(
                f"{w.bold(w.inline(title))} ({w.code(case.get('slug'))}, {score_label} {score_text}){link}"
            )
        )
        add(w.bullet(_pair(_("shared findings"), shared), 2))
        if case.get("contributions"):
            add(w.bullet(w.inline(explain(case, ui_language(zh))), 2))
    if cases:
        add("")

    errors = [e for e in snapshot.errors or [] if isinstance(e, dict)]
    if errors:
        add(w.heading(2, _counted(_("Artifacts that could not be parsed"), len(errors))))
        add("")
        for e in errors[:20]:
            add(w.bullet(f"{w.code(e.get('artifact'))}: {w.inline(e.get('message'))}"))
        add("")
    return "\n".join(lines).rstrip() + "\n"


def _sounds_like_markdown(w: Markdown, snapshot: Snapshot, lang: str, base_url: str, add) -> None:
    cases = sounds_like_cases(snapshot, language=lang)
    if not cases:
        return
    add(w.heading(3, _("Cases that sound like this")))
    add("")
    add(_("No rule matched this text; these cases are compared by its words only."))
    add("")
    for case in cases:
        path = ""
        with contextlib.suppress(NoReverseMatch):
            path = reverse("kb:case_detail", args=[case["slug"]])
        title = _link(w, _link_text(w, case.get("title") or case["slug"]), path, base_url)
        terms = ", ".join(w.code(x) for x in case.get("shared_terms") or [])
        score = format_score(case.get("score"))
        score_label, terms_label = pgettext("report", "score"), _("shared terms")
        add(w.bullet(f"{w.bold(title)} ({score_label} {score}) — {_pair(terms_label, terms)}"))
    add("")


def _finding(w: Markdown, f: Finding, lang: str, titles: dict[str, str], base_url: str, add) -> None:
    """One finding: title, host, explanation, evidence (artifact and line) and measures."""
    title = f.localized_title(lang)
    severity = SEVERITY_LABELS.get(f.severity, f.severity.upper())
    add(w.heading(3, f"[{severity}] {w.code(f.rule)} — {w.inline(title)}"))
    add("")
    if f.host:
        add(w.italic(_pair(_("Host"), w.inline(f.host))))
        add("")
    explanation = f.localized_explanation(lang)
    if explanation:
        add(w.paragraph(explanation))
        add("")
    evidence = [e for e in f.evidence or [] if isinstance(e, dict)]
    if evidence:
        add(w.bold(_("Evidence")))
        add("")
        line_label = pgettext("report", "line")
        for e in evidence[:MAX_EVIDENCE]:
            where = w.inline(e.get("artifact") or "")
            if e.get("line"):
                where += f" ({line_label} {e['line']})"
            item = f"{w.code(e.get('fact'))} = {w.code(_value(e.get('value')))}"
            if where:
                item += f" — {where}"
            add(w.bullet(item))
            hit = next((x for x in e.get("excerpt") or [] if x.get("hit")), None)
            if hit:
                add(w.quote(w.inline(hit.get("text")), 2))
        if len(evidence) > MAX_EVIDENCE:
            add(w.bullet(f"… (+{len(evidence) - MAX_EVIDENCE})"))
        add("")
    if f.measures:
        add(w.bold(pgettext("report", "Measures")))
        add("")
        for slug in f.measures:
            add(w.bullet(_measure(w, slug, titles.get(slug), base_url)))
        add("")


def _not_checked_markdown(w: Markdown, snapshot: Snapshot, zh: bool, add) -> None:
    """What could not be checked (with the commands that produce the missing
    evidence) and what was: a report with no finding is never a bare "done"."""
    items = [n for n in snapshot.not_checked or [] if isinstance(n, dict) and n.get("rule")]
    if items:
        add(w.heading(2, _counted(_("Not checked — missing evidence"), len(items))))
        add("")
        add(
            _(
                "These rules matter here but could not be evaluated; "
                "run the commands and add their output to the snapshot."
            )
        )
        add("")
        for n in items:
            title = rule_title(n["rule"], zh)
            reason = in_language(n.get("reason") or "", n.get("reason_zh") or "", zh)
            line = w.code(n["rule"]) + (f" {w.inline(title)}" if title else "")
            add(w.bullet(line + (f": {w.inline(reason)}" if reason else "")))
            for command in n.get("commands") or []:
                add(w.bullet(w.command(command), 2))
        add("")
    checked = sorted(str(r) for r in snapshot.checked or [])
    if checked:
        lines = w.fold(
            _("Rules checked: %(n)s") % {"n": len(checked)}, [", ".join(w.code(r) for r in checked)]
        )
        for line in lines:
            add(line)
        add("")

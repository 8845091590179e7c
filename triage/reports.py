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
independently of the UI language of whoever opens it later in the ticket, so
its labels are kept in :data:`LABELS` for both languages rather than in the
gettext catalogue: a report must come out fully Chinese or fully English even
when the catalogue has not been compiled.
"""

from __future__ import annotations

import contextlib
from typing import Any

from django.urls import NoReverseMatch, reverse

from kb.similarity import QUALIFYING_SEVERITIES, explain, format_score
from triage.models import Finding, Snapshot

LABELS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Snapshot report",
        "status": "Status",
        "engine": "Engine",
        "kind": "Kind",
        "file": "File",
        "cluster": "Cluster",
        "uploaded": "Uploaded",
        "host": "Host",
        "summary": "Host summary",
        "findings": "Findings",
        "no_findings": "No problem found in what was checked.",
        "checked": "Rules checked: {n}",
        "not_checked": "Not checked — missing evidence",
        "not_checked_help": (
            "These rules matter here but could not be evaluated; "
            "run the commands and add their output to the snapshot."
        ),
        "top": "Largest impact first",
        "not_done": "The analysis has not finished yet (status: {status}); findings follow when it is done.",
        "evidence": "Evidence",
        "measures": "Measures",
        "similar": "Similar cases",
        "no_similar": "No similar case in the knowledge base: possibly a new problem.",
        "no_known_problem": "No known problem matched ({n} rules checked).",
        "shared": "shared findings",
        "score": "score",
        "errors": "Artifacts that could not be parsed",
        "line": "line",
        "link": "Full report",
        "cpu": "CPU",
        "cpus_sockets": "CPUs / sockets",
        "numa": "NUMA nodes",
        "kernel": "Kernel",
        "role": "Role",
        "database": "Database",
        "physical": "physical host",
        "guest": "virtual machine",
        "critical": "CRITICAL",
        "warning": "WARNING",
        "info": "INFO",
    },
    "zh": {
        "title": "快照分析报告",
        "status": "状态",
        "engine": "引擎",
        "kind": "类型",
        "file": "文件",
        "cluster": "集群",
        "uploaded": "上传时间",
        "host": "主机",
        "summary": "主机概况",
        "findings": "发现的问题",
        "no_findings": "在已检查的范围内未发现问题。",
        "checked": "已检查的规则：{n} 条",
        "not_checked": "未检查——缺少证据",
        "not_checked_help": (
            "这些规则与本主机相关，但因缺少所需证据而无法评估；请运行下列命令并把输出添加到此快照。"
        ),
        "top": "影响最大的问题",
        "not_done": "分析尚未完成（状态：{status}）；完成后将列出发现的问题。",
        "evidence": "证据",
        "measures": "措施",
        "similar": "相似案例",
        "no_similar": "知识库中没有相似案例：可能是新问题。",
        "no_known_problem": "未匹配到已知问题（已检查 {n} 条规则）。",
        "shared": "共同的发现",
        "score": "相似度",
        "errors": "无法解析的文件",
        "line": "行",
        "link": "完整报告",
        "cpu": "CPU",
        "cpus_sockets": "逻辑 CPU / 插槽",
        "numa": "NUMA 节点数",
        "kernel": "内核",
        "role": "角色",
        "database": "数据库",
        "physical": "物理机",
        "guest": "虚拟机",
        "critical": "严重",
        "warning": "警告",
        "info": "提示",
    },
}
STATUS_ZH = {"queued": "排队中", "analyzing": "分析中", "done": "已完成", "failed": "失败"}
KIND_ZH = {
    "collector": "采集器归档",
    "sosreport": "sosreport",
    "transcript": "终端记录",
    "artifact": "单个文件",
}
MAX_EVIDENCE = 8
TOP = 3  # findings named at the top of the report


def report_language(value: str | None) -> str:
    """``zh`` for any Chinese language tag (``zh-hans``, ``zh-CN``, ``zh``), else ``en``."""
    return "zh" if (value or "").strip().lower().startswith("zh") else "en"


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


def facts_summary(facts: dict) -> dict[str, Any]:
    """The few facts a reader of a ticket wants first, from the stored facts JSON."""
    facts = facts or {}
    cpu = facts.get("cpu") or {}
    numa = facts.get("numa") or {}
    kernel = facts.get("kernel") or {}
    db = facts.get("database") or {}
    nodes = numa.get("nodes") or {}
    return {
        "hostname": facts.get("hostname") or None,
        "role": facts.get("role") or None,
        "architecture": cpu.get("architecture"),
        "cpu_model": cpu.get("model_name"),
        "cpus": cpu.get("cpus"),
        "sockets": cpu.get("sockets"),
        "numa_nodes": len(nodes) if nodes else cpu.get("numa_nodes"),
        "kernel": kernel.get("release"),
        "os": kernel.get("os_release"),
        "database": " ".join(str(x) for x in (db.get("kind"), db.get("version")) if x) or None,
        "domains": len(facts.get("domains") or []),
        "artifacts": len(facts.get("artifacts") or []),
    }


def _measure_titles(slugs: set[str], lang: str) -> dict[str, str]:
    from kb.models import Measure

    return {m.slug: m.title_for(lang) for m in Measure.objects.filter(slug__in=slugs)}


def render_markdown(snapshot: Snapshot, *, language: str = "en", base_url: str = "") -> str:
    """The whole report as Markdown text in ``language`` (``en`` or ``zh``).
    ``base_url`` (scheme and host) makes the links absolute for the ticket."""
    lang = report_language(language)
    t = LABELS[lang]
    zh = lang == "zh"
    lines: list[str] = []
    add = lines.append

    add(f"# {t['title']}: {_md_inline(snapshot.display_name)}")
    add("")
    status = STATUS_ZH.get(snapshot.status, snapshot.status) if zh else snapshot.status
    kind = KIND_ZH.get(snapshot.kind, snapshot.kind) if zh else str(Snapshot.Kind(snapshot.kind).label)
    add(f"- {t['status']}: **{status}**")
    if snapshot.engine_version:
        add(f"- {t['engine']}: {_md_inline(snapshot.engine_version)}")
    add(f"- {t['kind']}: {kind}")
    if snapshot.original_filename:
        add(f"- {t['file']}: {_code(snapshot.original_filename)} (sha256 {snapshot.sha256[:12]})")
    if snapshot.cluster:
        add(f"- {t['cluster']}: {_code(snapshot.cluster)}")
    add(f"- {t['uploaded']}: {snapshot.created_at:%Y-%m-%d %H:%M} UTC")
    if base_url:
        add(f"- {t['link']}: {base_url.rstrip('/')}{snapshot.get_absolute_url()}")
    add("")

    summary = facts_summary(snapshot.facts)
    if snapshot.status == Snapshot.Status.DONE and any(v for v in summary.values()):
        add(f"## {t['summary']}")
        add("")
        rows = [
            (t["host"], summary["hostname"]),
            (t["role"], t.get(summary["role"] or "", summary["role"])),
            (t["cpu"], " · ".join(str(x) for x in (summary["cpu_model"], summary["architecture"]) if x)),
            (t["cpus_sockets"], " / ".join(str(x) for x in (summary["cpus"], summary["sockets"]) if x)),
            (t["numa"], summary["numa_nodes"]),
            (t["kernel"], " · ".join(str(x) for x in (summary["kernel"], summary["os"]) if x)),
            (t["database"], summary["database"]),
        ]
        add("| | |")
        add("|---|---|")
        for name, value in rows:
            if value not in (None, ""):
                add(f"| {name} | {_md_inline(value)} |")
        add("")

    if snapshot.status != Snapshot.Status.DONE:
        add(t["not_done"].format(status=status))
        add("")
        if snapshot.last_error:
            add(f"> {_md_inline(snapshot.last_error)}")
            add("")
        return "\n".join(lines).rstrip() + "\n"

    findings = Finding.in_report_order(snapshot.current_findings())
    add(f"## {t['findings']} ({len(findings)})")
    add("")
    if not findings:
        add(f"**{t['no_findings']}**")
        add("")
    elif len(findings) > 1:
        add(f"**{t['top']}**: " + ", ".join(_code(f.rule) for f in findings[:TOP]))
        add("")
    titles = _measure_titles({s for f in findings for s in f.measures or []}, lang)
    for f in findings:
        title = f.localized_title(lang)
        add(f"### [{t.get(f.severity, f.severity.upper())}] {_code(f.rule)} — {_md_inline(title)}")
        add("")
        if f.host:
            add(f"*{t['host']}: {_md_inline(f.host)}*")
            add("")
        explanation = f.localized_explanation(lang)
        if explanation:
            add(explanation.strip())
            add("")
        evidence = [e for e in f.evidence or [] if isinstance(e, dict)]
        if evidence:
            add(f"**{t['evidence']}**")
            add("")
            for e in evidence[:MAX_EVIDENCE]:
                where = _md_inline(e.get("artifact") or "")
                if e.get("line"):
                    where += f" ({t['line']} {e['line']})"
                item = f"- {_code(e.get('fact'))} = {_code(_value(e.get('value')))}"
                if where:
                    item += f" — {where}"
                add(item)
                hit = next((x for x in e.get("excerpt") or [] if x.get("hit")), None)
                if hit:
                    add(f"  > {_md_inline(hit.get('text'))}")
            if len(evidence) > MAX_EVIDENCE:
                add(f"- … (+{len(evidence) - MAX_EVIDENCE})")
            add("")
        if f.measures:
            add(f"**{t['measures']}**")
            add("")
            for slug in f.measures:
                name = titles.get(slug)
                add(f"- {_code(slug)}" + (f" {_md_inline(name)}" if name else ""))
            add("")

    _not_checked_markdown(snapshot, t, zh, add)

    add(f"## {t['similar']}")
    add("")
    cases = [c for c in snapshot.similar_cases or [] if isinstance(c, dict)]
    if not cases:
        serious = any(f.severity in QUALIFYING_SEVERITIES for f in findings)
        add(t["no_similar"] if serious else t["no_known_problem"].format(n=len(snapshot.checked or [])))
        add("")
    for case in cases:
        title = (case.get("title_zh") if zh else None) or case.get("title") or case.get("slug")
        score_text = format_score(case.get("score"))
        shared = ", ".join(_code(r) for r in case.get("shared_rules") or []) or "—"
        link = ""
        if base_url and case.get("slug"):
            with contextlib.suppress(NoReverseMatch):  # a slug the URL conf cannot express: no link
                link = f" — {base_url.rstrip('/')}{reverse('kb:case_detail', args=[case['slug']])}"
        add(f"- **{_md_inline(title)}** ({_code(case.get('slug'))}, {t['score']} {score_text}){link}")
        add(f"  - {t['shared']}: {shared}")
        if case.get("contributions"):
            add(f"  - {_md_inline(explain(case, 'zh-hans' if zh else 'en'))}")
    if cases:
        add("")

    errors = [e for e in snapshot.errors or [] if isinstance(e, dict)]
    if errors:
        add(f"## {t['errors']} ({len(errors)})")
        add("")
        for e in errors[:20]:
            add(f"- {_code(e.get('artifact'))}: {_md_inline(e.get('message'))}")
        add("")
    return "\n".join(lines).rstrip() + "\n"


def _not_checked_markdown(snapshot: Snapshot, t: dict[str, str], zh: bool, add) -> None:
    """What could not be checked (with the commands that produce the missing
    evidence) and what was: a report with no finding is never a bare "done"."""
    from triage.rules import load_all

    specs = load_all()
    items = [n for n in snapshot.not_checked or [] if isinstance(n, dict) and n.get("rule")]
    if items:
        add(f"## {t['not_checked']} ({len(items)})")
        add("")
        add(t["not_checked_help"])
        add("")
        for n in items:
            spec = specs.get(n["rule"])
            title = ((spec.title_zh if zh else "") or spec.title) if spec else ""
            reason = (n.get("reason_zh") if zh else None) or n.get("reason") or ""
            line = f"- {_code(n['rule'])}" + (f" {_md_inline(title)}" if title else "")
            add(line + (f": {_md_inline(reason)}" if reason else ""))
            for command in n.get("commands") or []:
                add(f"  - {_command(command)}")
        add("")
    checked = sorted(str(r) for r in snapshot.checked or [])
    if checked:
        add(f"<details><summary>{t['checked'].format(n=len(checked))}</summary>")
        add("")
        add(", ".join(_code(r) for r in checked))
        add("")
        add("</details>")
        add("")

"""A closed session becomes knowledge: promoted to a draft case (both
languages), linked to an existing case instead, or marking that a case helped."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Field
from django.utils import translation
from django.utils.text import capfirst, slugify
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from config.language import content_language, ui_language
from engine.run import ENGINE_VERSION
from kb.models import Case, CaseMeasure
from kb.services import record_reuse, record_revision, save_case
from triage.models import Snapshot
from troubleshoot.access import can_view, require_edit
from troubleshoot.audit import as_text, record
from troubleshoot.findings import signature_of, similar_cases
from troubleshoot.lifecycle import CONSTRAINT_FIELDS
from troubleshoot.models import PlannedMeasure, Session
from troubleshoot.snapshots import snapshots_of
from troubleshoot.verify import final_metric

# A promoted draft this similar to an existing case is probably the same problem.
VERY_SIMILAR = 0.75


def promotion_check(
    session: Session, *, language: str = "en", cases: list[dict] | None = None
) -> dict | None:
    """The most similar existing case when it is very similar (same problem);
    ``cases``: the session's similar cases when the caller has them."""
    if cases is None:
        cases = similar_cases(session, language=language, limit=1)
    if cases and cases[0]["score"] >= VERY_SIMILAR:
        return cases[0]
    return None


CASE_STEP_STATUS: dict[str, str] = {
    PlannedMeasure.Status.APPLIED: CaseMeasure.Status.APPLIED,
    PlannedMeasure.Status.PLANNED: CaseMeasure.Status.RECOMMENDED,
    PlannedMeasure.Status.SKIPPED: CaseMeasure.Status.RECOMMENDED,
    PlannedMeasure.Status.FAILED: CaseMeasure.Status.REJECTED,
    PlannedMeasure.Status.ROLLED_BACK: CaseMeasure.Status.REJECTED,
}

PLATFORMS = {
    "zstack": "zstack",
    "openstack": "openstack",
    "bare": "bare-metal",
    "physical": "bare-metal",
    "物理机": "bare-metal",
    "裸金属": "bare-metal",
}


def _platform(text: str) -> str:
    low = (text or "").lower()
    for needle, value in PLATFORMS.items():
        if needle in low:
            return value
    return Case.Platform.OTHER


def _step_outcome(session: Session, pm: PlannedMeasure) -> str:
    parts = [] if pm.status == PlannedMeasure.Status.APPLIED else [str(pm.get_status_display())]
    if pm.metric_after is not None:
        unit = f" {session.metric_unit}" if session.metric_unit else ""
        parts.append(
            pgettext("case", "%(metric)s after: %(value)s")
            % {"metric": session.metric_name or _("metric"), "value": f"{as_text(pm.metric_after)}{unit}"}
        )
    if pm.change_made:
        parts.append(pm.change_made)
    if pm.notes:
        parts.append(pm.notes)
    return ". ".join(p.rstrip(".") for p in parts)


def _constraints_text(session: Session) -> str:
    def shown(value):
        if isinstance(value, bool):
            return _("yes") if value else _("no")
        return as_text(value)

    return ", ".join(
        f"{_verbose_name(name)}: {shown(getattr(session, name))}"
        for name in CONSTRAINT_FIELDS
        if getattr(session, name) not in ("", None)
    )


def _verbose_name(name: str) -> str:
    column = Session._meta.get_field(name)
    assert isinstance(column, Field)  # a column of the session, not a relation
    return str(column.verbose_name)


def _label(name: str) -> str:
    return capfirst(_verbose_name(name))


def _host_environment(session: Session) -> dict:
    """CPU architecture and model of the first physical host (else any host)."""
    snaps = [s for s in snapshots_of(session, "before") if s.status == Snapshot.Status.DONE]
    views = [s.host_facts() for s in snaps]
    ordered = [v for v in views if not v.is_guest] + [v for v in views if v.is_guest]
    for view in ordered:
        if view.cpu is not None:
            return {
                "cpu_architecture": (view.cpu.architecture or "")[:20],
                "cpu_model": (view.cpu.model_name or "")[:120],
                "hypervisor": "KVM" if any(v.domains or v.virsh_version for v in views) else "",
            }
    return {}


@transaction.atomic
def promote(*, session: Session, user, language: str = "en") -> Case:
    """Create a draft case from a closed session: environment, cause, measures
    with their outcomes, the metric before/after and the signature of the
    before-snapshots. A reviewer (support) publishes it."""
    require_edit(user, session)
    if not session.is_closed:
        raise ValueError(_("close the session before promoting it"))
    if session.promoted_case is not None:
        return session.promoted_case
    lang = content_language(language)
    # Both language versions: the other one pre-filled (its generated labels in
    # its own language, the engineer's words as written) for the author to
    # translate before submitting the case for review.
    other = "en" if lang == "zh" else "zh"
    cases = {}
    for version in (lang, other):
        with translation.override(ui_language(version == "zh")):
            cases[version] = _draft_case(session=session, user=user, lang=version, pending=version != lang)
    case = cases[lang]
    record(session=session, user=user, action="promote", target=case.slug, new=f"draft case {case.slug}")
    session.promoted_case = case
    session.save(update_fields=["promoted_case", "updated_at"])
    return case


def _draft_case(*, session: Session, user, lang: str, pending: bool) -> Case:
    """One language version of the promoted draft, built in that language."""
    slug = f"session-{session.pk}-{slugify(session.title)[:60]}".strip("-")
    snaps = snapshots_of(session, "before")
    hosts = ", ".join(s.host_label for s in snaps)
    # Labels are looked up outside the f-strings: xgettext cannot see calls
    # inside f-string expressions, so they would never reach the catalogue.
    hosts_label = pgettext("case", "Hosts")
    applied_label = pgettext("case", "Applied")
    constraints_label = _("Constraints")
    env = [
        f"{_label('platform')}: {session.platform}" if session.platform else "",
        f"{_label('database')}: {session.database}" if session.database else "",
        f"{_label('workload')}: {session.workload}" if session.workload else "",
        f"{hosts_label}: {hosts}" if hosts else "",
        f"{constraints_label}: {_constraints_text(session)}",
    ]
    pms = list(session.measures.select_related("measure").order_by("tier", "position", "id"))
    applied = [pm.measure.slug for pm in pms if pm.status == PlannedMeasure.Status.APPLIED]
    after = final_metric(session)
    case = Case(
        slug=slug,
        language=lang,
        title=session.title,
        symptom=session.symptom or session.title,
        cause=session.root_cause,
        resolution_summary=" ".join(
            part
            for part in (
                f"{applied_label}: {', '.join(applied)}." if applied else "",
                f"{_label('outcome')}: {session.get_outcome_display()}.",
                f"{_label('lessons')}: {session.lessons}" if session.lessons else "",
            )
            if part
        ),
        environment_notes=". ".join(e for e in env if e),
        **_host_environment(session),
        platform=_platform(session.platform),
        database=(session.database or "").split()[0].lower()[:40] if session.database else "",
        state=Case.State.DRAFT,
        translation_pending=pending,
        author=user,
        signature=signature_of(session),
        signature_engine_version=str(ENGINE_VERSION),
        signature_source=f"session {session.pk}",
    )
    metrics = []
    if session.metric_name or session.metric_baseline is not None:
        metrics.append(
            {
                "name": session.metric_name or "metric",
                "before": session.metric_baseline,
                "after": after,
                "unit": session.metric_unit or "",
                "expected": session.metric_expected,
                "note": "",
            }
        )
    save_case(
        case,
        steps=[
            {
                "measure": pm.measure.slug,
                "status": CASE_STEP_STATUS[pm.status],
                "outcome": _step_outcome(session, pm),
            }
            for pm in pms
        ],
        metrics=metrics,
        # The session's tickets (from its snapshots' pastes, or added) are the case's references.
        references=[{"key": t.key, "url": t.url, "title": ""} for t in session.tickets.all()],
    )
    record_revision(case=case, user=user, action="created")
    return case


@transaction.atomic
def link_case(*, session: Session, user, case_slug: str, language: str = "en") -> Case:
    """Link the session to an existing case instead of promoting a new one."""
    require_edit(user, session)
    lang = content_language(language)
    case = (
        Case.objects.filter(slug=case_slug, language=lang).first()
        or Case.objects.filter(slug=case_slug).first()
    )
    if case is None:
        raise Case.DoesNotExist(case_slug)
    record(
        session=session,
        user=user,
        action="link",
        target=case.slug,
        old=session.linked_case.slug if session.linked_case else "",
        new=case.slug,
    )
    session.linked_case = case
    session.save(update_fields=["linked_case", "updated_at"])
    return case


@transaction.atomic
def case_helped(*, session: Session, user, case_slug: str) -> bool:
    """ "This case helped" from the session's summary: one reuse mark per
    session and case, with an audit entry. False when already marked."""
    if not can_view(user, session):
        raise PermissionDenied("not your session")
    if not record_reuse(slug=case_slug, user=user, source="session", session=session):
        return False
    record(session=session, user=user, action="helped", target=case_slug, new=case_slug)
    return True

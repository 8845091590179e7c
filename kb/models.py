"""The case knowledge base: cases in KCS form and the measures catalogue.

A case exists once per language; the English and Chinese versions of one case
share ``slug`` (the case group) and differ by ``language``. Writes go through
``kb.services`` so the search index (:class:`Posting`, :class:`TermStat`)
stays in sync.
"""

from __future__ import annotations

import functools

from django.conf import settings
from django.db import models
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.translation import gettext_lazy as _

from config.language import in_language, reads_chinese


class Language(models.TextChoices):
    EN = "en", _("English")
    ZH = "zh", _("Chinese")


class Disruption(models.TextChoices):
    ONLINE = "online", _("online")
    SERVICE_RESTART = "service restart", _("service restart")
    GUEST_REBOOT = "guest reboot", _("guest reboot")
    HOST_REBOOT = "host reboot", _("host reboot")


class Measure(models.Model):
    """A catalogued remedy. ``slug`` is a public contract shared with the rules."""

    slug = models.SlugField(max_length=80, unique=True)
    title_en = models.CharField(max_length=200)
    title_zh = models.CharField(max_length=200)
    what_why_en = models.TextField(help_text=_("What the measure does and why it helps."))
    what_why_zh = models.TextField(blank=True)
    config_kind = models.CharField(
        max_length=40,
        blank=True,
        help_text=_("Format of the commands: shell, libvirt-xml, sysctl.d, nova, sql, my.cnf ..."),
    )
    commands = models.TextField(blank=True)
    rollback = models.TextField(blank=True)
    disruption = models.CharField(max_length=20, choices=Disruption.choices)
    remeasure = models.TextField(blank=True, help_text=_("What to measure again after applying it."))
    rules = models.JSONField(default=list, blank=True, help_text=_("Rule IDs this measure should clear."))
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]

    def __str__(self) -> str:
        return self.slug

    def title_for(self, language: str) -> str:
        return in_language(self.title_en, self.title_zh, reads_chinese(language))

    def what_why_for(self, language: str) -> str:
        return in_language(self.what_why_en, self.what_why_zh, reads_chinese(language))


class Tag(models.Model):
    name = models.CharField(max_length=60, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


@functools.lru_cache(maxsize=16)
def _case_url_pattern(prefix: str, urlconf: str | None) -> str:
    """The URL of a case version with ``{slug}`` and ``{language}`` to fill in."""
    url = reverse("kb:case_detail_lang", kwargs={"slug": "SLUG", "language": "LANGUAGE"})
    escaped = url.replace("{", "{{").replace("}", "}}")
    return escaped.replace("SLUG", "{slug}").replace("LANGUAGE", "{language}")


class Case(models.Model):
    class State(models.TextChoices):
        DRAFT = "draft", _("draft")
        IN_REVIEW = "review", _("in review")
        PUBLISHED = "published", _("published")
        ARCHIVED = "archived", _("archived")

    class Platform(models.TextChoices):
        ZSTACK = "zstack", "ZStack"
        OPENSTACK = "openstack", "OpenStack"
        BARE_METAL = "bare-metal", _("bare metal")
        OTHER = "other", _("other")

    # The case group: both language versions of one case share it.
    slug = models.SlugField(max_length=100)
    language = models.CharField(max_length=5, choices=Language.choices, default=Language.EN)
    title = models.CharField(_("title"), max_length=250)
    symptom = models.TextField(_("symptom"))
    cause = models.TextField(_("cause"), blank=True)
    resolution_summary = models.TextField(_("resolution"), blank=True)
    environment_notes = models.TextField(_("environment notes"), blank=True)

    platform = models.CharField(max_length=20, choices=Platform.choices, default=Platform.OTHER)
    hypervisor = models.CharField(max_length=80, blank=True)
    cpu_architecture = models.CharField(max_length=20, blank=True)
    cpu_model = models.CharField(max_length=120, blank=True)
    database = models.CharField(max_length=40, blank=True)
    database_version = models.CharField(max_length=60, blank=True)
    # Versions the case applies to (known issues by version, kb.versions):
    # {"kernel": ">=3.5, <3.10", "database": "10.4", "hypervisor": ...}.
    applies_to = models.JSONField(default=dict, blank=True)

    tags = models.ManyToManyField(Tag, blank=True, related_name="cases")
    state = models.CharField(max_length=10, choices=State.choices, default=State.DRAFT)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    published_at = models.DateTimeField(null=True, blank=True)
    # A version pre-filled from the other language (promoted from a session):
    # it must be edited before the case can be submitted for review.
    translation_pending = models.BooleanField(default=False)

    # {"rules": [rule IDs], "features": [environment features]} computed by the engine.
    signature = models.JSONField(default=dict, blank=True)
    signature_engine_version = models.CharField(max_length=40, blank=True)
    # Where the signature came from, e.g. "tests/fixtures/seeds/<slug>/before".
    signature_source = models.CharField(max_length=200, blank=True)
    # Digest of the data file section a founding case was loaded from (loadcases skips unchanged ones).
    source_digest = models.CharField(max_length=64, blank=True, editable=False)

    # Output of kb.search.tokenizer.index_text(): the one tokenizer's tokens, space-separated.
    search_title = models.TextField(blank=True, editable=False)
    search_text = models.TextField(blank=True, editable=False)
    search_dictionary_version = models.CharField(max_length=20, blank=True, editable=False)

    class Meta:
        ordering = ["slug", "language"]
        constraints = [
            models.UniqueConstraint(fields=["slug", "language"], name="kb_case_slug_language_unique"),
        ]
        indexes = [
            models.Index(fields=["state", "language"]),
            models.Index(fields=["platform"]),
            models.Index(fields=["database"]),
        ]

    def __str__(self) -> str:
        return f"{self.slug} [{self.language}]"

    def get_absolute_url(self) -> str:
        # Slugs and language codes need no quoting: the reversed pattern is
        # filled in (a page of search hits asks for forty of these).
        pattern = _case_url_pattern(get_script_prefix(), get_urlconf())
        return pattern.format(slug=self.slug, language=self.language)

    @property
    def signature_rules(self) -> list[str]:
        return list((self.signature or {}).get("rules", []))

    @property
    def signature_features(self) -> list[str]:
        return list((self.signature or {}).get("features", []))

    def translations(self):
        return Case.objects.filter(slug=self.slug).exclude(pk=self.pk)


class CaseRule(models.Model):
    """Denormalised signature rules: what each process's rule index
    (``kb.rule_index``) reads, and the search's filter by rule."""

    # The unique (case, rule) index serves lookups by case, index-only.
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="rule_rows", db_index=False)
    rule = models.CharField(max_length=80, db_index=True)
    # Copies of the case's group and state, so ranking never reads kb_case rows.
    slug = models.SlugField(max_length=100, default="")
    state = models.CharField(max_length=10, default=Case.State.DRAFT)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["case", "rule"], name="kb_caserule_unique")]
        indexes = [models.Index(fields=["rule", "state"], name="kb_caserule_rule_state")]

    def __str__(self) -> str:
        return f"{self.case_id}: {self.rule}"


class RuleIndexState(models.Model):
    """The generation of the published signature rules (one row): bumped, with
    a :class:`RuleIndexChange`, by every write of a case's rule rows
    (``kb.services``), so each process's in-memory rule index
    (``kb.rule_index``) knows when and which case groups to read again.
    ``epoch`` is random per row: a table emptied and refilled (a test flush)
    is never taken for the one a process has read."""

    epoch = models.CharField(max_length=32)
    generation = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.epoch}: {self.generation}"


class RuleIndexChange(models.Model):
    """The case group whose rule rows generation ``generation`` changed. The
    latest ``kb.services.RULE_CHANGES_KEPT`` are kept; a process further
    behind reads every group again."""

    generation = models.BigIntegerField(unique=True)
    slug = models.SlugField(max_length=100, db_index=False)

    def __str__(self) -> str:
        return f"{self.generation}: {self.slug}"


class CaseMeasure(models.Model):
    """One ordered resolution step of a case."""

    class Status(models.TextChoices):
        APPLIED = "applied", _("applied")
        RECOMMENDED = "recommended", _("recommended")
        REJECTED = "rejected", _("tried, no effect")

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="steps")
    order = models.PositiveSmallIntegerField()
    measure = models.ForeignKey(Measure, on_delete=models.PROTECT, related_name="case_steps")
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.APPLIED)
    outcome = models.TextField(blank=True)

    class Meta:
        ordering = ["case", "order"]
        constraints = [models.UniqueConstraint(fields=["case", "order"], name="kb_casemeasure_order_unique")]

    def __str__(self) -> str:
        return f"{self.case} #{self.order} {self.measure.slug}"


class Metric(models.Model):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="metrics")
    order = models.PositiveSmallIntegerField(default=0)
    name = models.CharField(max_length=200)
    before = models.FloatField(null=True, blank=True)
    after = models.FloatField(null=True, blank=True)
    unit = models.CharField(max_length=30)
    expected = models.CharField(max_length=120, blank=True)
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["case", "order"]

    def __str__(self) -> str:
        return f"{self.name}: {self.before} -> {self.after} {self.unit}"


class Reference(models.Model):
    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="references")
    key = models.CharField(max_length=80, help_text=_("e.g. MDEV-18860, PS-3967"))
    title = models.CharField(max_length=250, blank=True)
    url = models.URLField(blank=True)

    class Meta:
        ordering = ["case", "key"]

    def __str__(self) -> str:
        return self.key


class TermStat(models.Model):
    """Number of case versions holding each index term: the inverse document
    frequency of the ranking and the vocabulary of "did you mean"."""

    term = models.CharField(max_length=200, primary_key=True)
    ndoc = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.term}: {self.ndoc}"


class RealField(models.FloatField):
    """A single-precision float (4 bytes) on PostgreSQL: half the size of
    ``double precision`` in the table and its indexes, for values that need
    no more than 6 digits."""

    def db_type(self, connection) -> str | None:
        return "real" if connection.vendor == "postgresql" else super().db_type(connection)


class Posting(models.Model):
    """The inverted index of case search: one row per term of a case version,
    with the term's BM25 weight in that version (``kb.search.impacts``), the
    fields it occurs in (``kb.search.WHERE_BIT`` flags: why a hit matched is
    read from here) and the version's state, copied here like
    ``CaseRule.state``. The index on (term, state, impact) hands out a term's
    best cases first, so the ranking reads the head of each query term's list,
    never every match."""

    pk = models.CompositePrimaryKey("case_id", "term")
    # A plain column, no foreign key: kb.services deletes a version's rows by
    # this key prefix when it re-indexes or deletes the version.
    case_id = models.IntegerField()
    term = models.CharField(max_length=200)
    state = models.CharField(max_length=10)
    fields = models.SmallIntegerField(default=0)
    impact = RealField()

    class Meta:
        indexes = [
            models.Index(fields=["term", "state", "-impact", "case_id"], name="kb_posting_term_impact")
        ]

    def __str__(self) -> str:
        return f"{self.term} in {self.case_id}: {self.impact:.3f}"


class CaseRevision(models.Model):
    """One step in the life of a case version: its text after the change and
    what happened (created, edited, submitted, returned, approved). Diffs are
    computed between consecutive revisions; rows are only ever added."""

    class Action(models.TextChoices):
        CREATED = "created", _("created")
        EDITED = "edited", _("edited")
        SUBMITTED = "submitted", _("submitted for review")
        RETURNED = "returned", _("returned with comments")
        APPROVED = "approved", _("approved and published")

    case = models.ForeignKey(Case, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    at = models.DateTimeField(auto_now_add=True)
    action = models.CharField(max_length=12, choices=Action.choices)
    comment = models.TextField(blank=True)
    # The case's text fields after this step: {"title": ..., "symptom": ..., ...}
    content = models.JSONField(default=dict)

    class Meta:
        ordering = ["case", "-number"]
        constraints = [models.UniqueConstraint(fields=["case", "number"], name="kb_caserevision_unique")]

    def __str__(self) -> str:
        return f"{self.case} r{self.number} {self.action}"


class CaseReuse(models.Model):
    """ "This case helped": one mark per person and case group, from a
    troubleshooting session's summary (once per session) or from the case page
    reached through search. The reuse count of a case is the number of marks."""

    class Source(models.TextChoices):
        SESSION = "session", _("troubleshooting session")
        SEARCH = "search", _("search")

    slug = models.SlugField(max_length=100, db_index=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    source = models.CharField(max_length=10, choices=Source.choices)
    session = models.ForeignKey(
        "troubleshoot.Session", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["slug", "session"],
                condition=models.Q(source="session"),
                name="kb_casereuse_once_per_session",
            ),
            models.UniqueConstraint(
                fields=["slug", "user"],
                condition=models.Q(source="search"),
                name="kb_casereuse_once_per_searcher",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.slug} helped {self.user} ({self.source})"


class RetroScan(models.Model):
    """A retro-scan: new knowledge (a case just published, a rule added or
    changed) matched against the newest stored snapshot of every host, from
    the facts stored with it (never a re-parse of an upload). Done in batches
    by the workers (``triage.retroscan``); the row is the scan's progress, so
    a worker that dies resumes after ``cursor`` (the last snapshot id it
    finished), and its lease tells a live scan from an abandoned one.
    Written through ``kb.retroscans``."""

    class Kind(models.TextChoices):
        CASE = "case", _("case")
        RULE = "rule", _("rule")

    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        # a newer scan of the same case or rule took over before it finished
        STOPPED = "stopped", _("stopped")

    class Reason(models.TextChoices):
        PUBLISHED = "published", _("case published")
        RULE_ADDED = "rule-added", _("rule added")
        RULE_CHANGED = "rule-changed", _("rule changed")
        REQUESTED = "requested", _("requested")

    kind = models.CharField(max_length=8, choices=Kind.choices)
    # the case group's slug or the rule id
    target = models.CharField(max_length=100)
    reason = models.CharField(max_length=16, choices=Reason.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    # The id of the last snapshot matched (snapshots are visited by id).
    cursor = models.BigIntegerField(default=0)
    hosts_total = models.PositiveIntegerField(default=0)  # hosts to visit, counted at the start
    hosts_scanned = models.PositiveIntegerField(default=0)
    hosts_matched = models.PositiveIntegerField(default=0)
    batches = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0)  # worker time spent, all batches together
    lease_owner = models.CharField(max_length=255, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["kind", "target", "-created_at"], name="kb_retroscan_target"),
            models.Index(fields=["status", "updated_at"], name="kb_retroscan_status"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.target}: {self.status} {self.hosts_scanned}/{self.hosts_total}"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.STOPPED)


class HostMatch(models.Model):
    """A stored host that a case or a rule matches, as its retro-scan found
    it: the host (its team, or its owner when team-less, and
    ``Snapshot.host_key``) and the snapshot matched, as plain columns (kb
    sits beneath triage: like ``Snapshot.similar_cases`` names cases by
    slug, this names snapshots by id). One row per host and target; a later
    scan of the same target updates it and removes the hosts it no longer
    matches."""

    kind = models.CharField(max_length=8, choices=RetroScan.Kind.choices)
    target = models.CharField(max_length=100)
    team = models.ForeignKey(
        "accounts.Team", on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # who uploaded the snapshot matched (a team-less host is its uploader's)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    # "t<team id>" or "u<owner id>": whose host it is, for the unique constraint
    scope = models.CharField(max_length=24)
    host_key = models.CharField(max_length=200)
    snapshot_id = models.BigIntegerField()
    snapshot_label = models.CharField(max_length=200, blank=True)
    cluster = models.CharField(max_length=200, blank=True)
    score = models.FloatField(null=True, blank=True)
    # {"rules": [...shared or fired rules], "versions": [{"kind", "version", "range"}]}
    reasons = models.JSONField(default=dict, blank=True)
    scan_id = models.BigIntegerField()  # the latest scan that matched it
    first_scan_id = models.BigIntegerField()  # the scan that matched it first (its news)
    first_matched_at = models.DateTimeField(auto_now_add=True)
    matched_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["kind", "target", "host_key", "id"]
        constraints = [
            models.UniqueConstraint(fields=["kind", "target", "scope", "host_key"], name="kb_hostmatch_once")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.target} @ {self.host_key}"

    @property
    def shared_rules(self) -> list[str]:
        return list((self.reasons or {}).get("rules", []))

    @property
    def version_matches(self) -> list[dict]:
        return list((self.reasons or {}).get("versions", []))


class RuleCatalogue(models.Model):
    """The rule catalogue the workers last started with (one row): each
    rule's digest (``engine.run.rule_digests``). A worker that starts with
    other digests has been deployed with new or changed rules, which are
    then retro-scanned (``triage.retroscan.check_rule_catalogue``)."""

    fingerprint = models.CharField(max_length=64)
    digests = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.fingerprint

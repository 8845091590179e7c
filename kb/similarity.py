"""Which past cases look like this snapshot, and why.

A case's signature is the set of rule IDs the engine produced on its snapshot
plus environment features (architecture, guest or host, hypervisor, database,
NUMA layout ...). A snapshot is compared with every published case group:

* rules: weighted Dice coefficient, each rule weighted by its inverse document
  frequency over the case groups, so a rare finding (``mysql.numa_interleave_populate_startup``)
  counts more than a common one (``numa.high_remote_distance``);
* environment features: Jaccard;
* symptom text (when the caller has one): share of the symptom's tokens found
  in the case, through the search tokenizer.

A case qualifies only by sharing a warning or critical finding with the
snapshot (or, for prose, by holding the text's distinctive terms): ``info``
context rules and environment features rank cases but never qualify one
(issue 17). Every result lists the shared rules, matched features and what each
contributed to the score. An empty list means "no known problem matched" when
nothing serious was found, and "possibly a new problem" otherwise; see
docs/kb.md for the threshold and its reasoning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from django.db.models import Q
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from collectors.derived.features import snapshot_features
from config.language import content_language
from engine.rules import load_all
from kb import rule_index, versions
from kb.models import Case, CaseMeasure
from kb.search import searching, tokenizer

RULE_WEIGHT = 0.7
FEATURE_WEIGHT = 0.3
TEXT_WEIGHT = 0.2  # taken from the two above, proportionally, when a symptom is given
NEW_PROBLEM_THRESHOLD = 0.1
# A symptom text qualifies a case by itself when the case holds at least this
# share of the identifiers the text names (see ``_identifier_terms``).
TEXT_QUALIFY_THRESHOLD = 0.5
# Findings of these severities qualify a case; ``info`` context rules only rank.
QUALIFYING_SEVERITIES = ("critical", "warning")
RELATED_THRESHOLD = 0.1
# "Cases that sound like this" (text that matched no rule, see ``sounds_like``):
# the share of the text's term weight a case must hold, the terms it must
# share at least, how many are shown, how many are listed, and how much text is read.
SOUNDS_LIKE_THRESHOLD = 0.25
SOUNDS_LIKE_RELATIVE = 0.5  # ... and at least this share of the best case's score
SOUNDS_LIKE_MIN_TERMS = 2
SOUNDS_LIKE_TERMS_SHOWN = 8
SOUNDS_LIKE_LIMIT = 3
SOUNDS_LIKE_TEXT_CHARS = 8000
CANDIDATES = 150


def invalidate() -> None:
    """Forget this process's rule index (``kb.rule_index``): for data written
    around ``kb.services`` (bulk loads, tests rolling back)."""
    rule_index.invalidate()


def _rules_of(findings: Iterable[Any]) -> list[str]:
    rules = []
    for f in findings or []:
        if isinstance(f, str):
            rules.append(f)
        elif isinstance(f, dict):
            rules.append(f.get("rule") or f.get("rule_id") or "")
        else:
            rules.append(getattr(f, "rule", "") or getattr(f, "rule_id", ""))
    return sorted({r for r in rules if r})


# A rule's weight (and a word's, for "sounds like"): kb.rule_index keeps the frequencies.
idf = rule_index.idf


# --- scoring ----------------------------------------------------------------------------------


def _text_score(symptom_tokens: set[str], case_tokens: set[str]) -> float:
    if not symptom_tokens:
        return 0.0
    return len(symptom_tokens & case_tokens) / len(symptom_tokens)


_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9_.])[A-Za-z][A-Za-z0-9]*(?:[._:-][A-Za-z0-9]+)+")


# A setting's or a symbol's name: a word joined to another by "_" or "."
# (vm.swappiness, cpu_quota_concurrency, hw:numa_nodes, MADV_HUGEPAGE).
_SETTING_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*[._][A-Za-z]")


def _identifier_terms(text: str) -> set[str]:
    """The identifiers a symptom text names (``cpu_quota_concurrency``,
    ``vm.zone_reclaim_mode``, ``hw:numa_nodes``), each in its indexed whole
    form (``cpuquotaconcurrency``). Only names of settings and symbols are
    terms (a word joined to another by ``_`` or ``.``): plain words of either
    language never qualify a case by text, nor do words joined by hyphens or
    a colon (round F, 1017: "Out-Of-Memory" in a swap guide), versions and
    models (round D, 725: "Linux 2.4"; "E5-2680"), or an architecture name,
    which is the environment (round E, 931: x86_64).

    >>> sorted(_identifier_terms("Out-Of-Memory; vm.swappiness=0, Size:Swap, E5-2680, x86_64, linux-2.4"))
    ['vmswappiness']"""
    out = set()
    for ident in _IDENTIFIER.findall(text or ""):
        if not _SETTING_NAME.search(ident):
            continue
        tokens = tokenizer.tokenize(ident)
        if tokens:
            out.add(max(tokens, key=len))
    return out


def _term_coverage(terms: set[str], case_tokens: set[str]) -> float:
    return len(terms & case_tokens) / len(terms) if terms else 0.0


def _text_qualifies(shared: set[str], coverage: float, term_df: dict[str, int]) -> bool:
    """Whether a symptom text alone qualifies a case: the case holds most of the
    text's distinctive terms, and more than one of them or one that no other
    candidate holds (an OceanBase parameter's name). One term that several cases
    share names a topic, not a case's problem ("transparent hugepage" in a post
    that could not enable it; round L, 1631)."""
    if coverage < TEXT_QUALIFY_THRESHOLD or not shared:
        return False
    return len(shared) >= SOUNDS_LIKE_MIN_TERMS or term_df.get(next(iter(shared)), 0) <= 1


def format_score(score: Any) -> str:
    """The one way a similarity score is shown to people (report, wizard,
    ``report.md``): the 0..1 value of the API with two decimals."""
    return f"{float(score):.2f}" if isinstance(score, (int, float)) else "—"


def _text_candidate_ids(symptom: str, exclude_slug: str | None) -> list[int]:
    """Published cases the search finds for a symptom text (prose-only snapshots)."""
    hits = searching.search(symptom[:2000], filters={"state": "published"}, page_size=CANDIDATES).hits
    # Both language versions: the comparison reads every version's tokens and
    # then picks the reader's (``_case_groups``).
    return [
        version.id
        for h in hits
        if getattr(h.case, "slug", None) != exclude_slug
        for version in (h.case, h.other)
        if version is not None
    ]


def _case_groups(where: Q, language: str, *, with_text: bool) -> tuple[dict, dict[str, set[str]]]:
    """The cases ``where`` selects as one version per case group (the reader's
    language preferred), and with ``with_text`` each group's index tokens (both
    language versions): the text every symptom comparison reads."""
    columns = ["id", "slug", "language", "title", "signature"]
    if with_text:
        columns += ["search_text", "search_title"]
    cases = Case.objects.filter(where).only(*columns)
    chosen: dict[str, Case] = {}
    for case in cases:
        current = chosen.get(case.slug)
        if current is None or (case.language == language[:2] and current.language != language[:2]):
            chosen[case.slug] = case
    case_tokens: dict[str, set[str]] = {}
    for c in cases if with_text else ():
        case_tokens.setdefault(c.slug, set()).update(c.search_text.split(), c.search_title.split())
    return chosen, case_tokens


def _evidence_points(
    signature: dict,
    weights: dict[str, float],
    features: set[str],
    frequencies: tuple[int, dict[str, int]],
    shares: tuple[float, float],
) -> tuple[list[str], dict[str, float], list[str], float]:
    """What a case's ``signature`` shares with a snapshot: (the shared
    rules, each one's points, the matched features, the points of each
    matched feature). ``weights``: each of the snapshot's rules' weight;
    ``frequencies``: (case groups, groups per rule) of the rule index;
    ``shares``: the rules' and the features' part of the score."""
    groups, df = frequencies
    w_rule, w_feat = shares
    case_rules = set(signature.get("rules", []))
    shared = sorted(case_rules & set(weights))
    denominator = sum(weights.values()) + sum(idf(df.get(r, 0), groups) for r in case_rules)
    rule_points = {r: w_rule * 2 * weights[r] / denominator for r in shared} if denominator else {}
    case_features = set(signature.get("features", []))
    union = case_features | features
    return shared, rule_points, sorted(case_features & features), (w_feat / len(union) if union else 0.0)


def rank(
    rules: Iterable[str],
    features: Iterable[str],
    *,
    symptom: str = "",
    language: str = "en",
    limit: int = 5,
    exclude_slug: str | None = None,
    threshold: float = 0.0,
    qualifying: Iterable[str] | None = None,
) -> list[dict]:
    """Score published case groups against a signature; best first, at most ``limit``.

    With ``qualifying`` (the snapshot's warning and critical rules), a case is
    kept only when it shares one of them, or when a symptom text is given and
    matches it strongly (:data:`TEXT_QUALIFY_THRESHOLD`): ``info`` context rules
    and environment features rank cases but never qualify one. Each result has
    ``contributions``: what each shared rule, matched feature and the text added
    to the score (they sum to it)."""
    rules = sorted(set(rules))
    features = set(features)
    qualifying_rules = set(qualifying) if qualifying is not None else None
    with rule_index.reading() as index:
        groups, df = index.frequencies()
        # The candidates: the case groups best by rules alone, exactly. Without a
        # symptom, a case that shares no qualifying rule is dropped below, so it
        # takes no candidate's place; with one, its text may still qualify it.
        best = index.best(
            rules,
            limit=CANDIDATES,
            qualifying=qualifying_rules if not symptom else None,
            exclude=exclude_slug,
        )
    weights = {r: idf(df.get(r, 0), groups) for r in rules}
    slugs = [slug for slug, _dice in best]
    where = Q(slug__in=slugs, state=Case.State.PUBLISHED)
    if not slugs and symptom and qualifying_rules is not None:
        where = Q(id__in=_text_candidate_ids(symptom, exclude_slug))
    elif not slugs:
        return []
    symptom_tokens = set(tokenizer.tokenize(symptom)) if symptom else set()
    chosen, case_tokens = _case_groups(where, language, with_text=bool(symptom_tokens))
    if not chosen:
        return []
    # The symptom's distinctive technical terms: held by some candidate case
    # group, but by at most a third of them. A strong text match shares them.
    # Identifiers that no candidate holds count too: a pasted output full of
    # names no case knows (an lscpu's flags) that shares one (``x86_64``)
    # describes no case's problem (round E, 914).
    term_df = {t: sum(1 for toks in case_tokens.values() if t in toks) for t in _identifier_terms(symptom)}
    terms = {t for t, n in term_df.items() if n <= max(1, len(case_tokens) // 3)}
    text_only = symptom_tokens and not rules and not features
    if text_only:  # a prose-only snapshot: its text is all there is to compare
        # words weigh what they weigh beside evidence: a match on words alone is
        # never scored like a match on findings (issue 25)
        w_rule, w_feat, w_text = 0.0, 0.0, TEXT_WEIGHT
    elif symptom_tokens:
        w_rule = RULE_WEIGHT * (1 - TEXT_WEIGHT)
        w_feat = FEATURE_WEIGHT * (1 - TEXT_WEIGHT)
        w_text = TEXT_WEIGHT
    else:
        w_rule, w_feat, w_text = RULE_WEIGHT, FEATURE_WEIGHT, 0.0
    results = []
    for case in chosen.values():
        shared, rule_points, matched, feature_points = _evidence_points(
            case.signature or {}, weights, features, (groups, df), (w_rule, w_feat)
        )
        tokens = case_tokens.get(case.slug, set())
        coverage = _term_coverage(terms, tokens)
        text_score = coverage if text_only else _text_score(symptom_tokens, tokens)
        if qualifying_rules is not None:
            qualified_by = sorted(set(shared) & qualifying_rules)
            if not qualified_by and not _text_qualifies(terms & tokens, coverage, term_df):
                continue
        score = sum(rule_points.values()) + feature_points * len(matched) + w_text * text_score
        if score < threshold:
            continue
        contributions = [
            {
                "kind": "rule",
                "name": r,
                "points": round(rule_points[r], 3),
                "qualifying": r in (qualifying_rules or ()),
            }
            for r in sorted(shared, key=lambda r: (-rule_points[r], r))
        ]
        contributions += [{"kind": "feature", "name": f, "points": round(feature_points, 3)} for f in matched]
        if symptom_tokens:
            contributions.append(
                {
                    "kind": "text",
                    "name": ", ".join(sorted(terms & tokens)) or "symptom",
                    "points": round(w_text * text_score, 3),
                }
            )
        results.append(
            {
                "slug": case.slug,
                "score": round(min(max(score, 0.0), 1.0), 3),
                "shared_rules": shared,
                "matched_features": matched,
                "contributions": contributions,
                "title": case.title,
                "language": case.language,
                # no shared finding, no matched environment: the symptom's words alone
                "words_only": not shared and not matched,
            }
        )
    # A case matched on words alone ranks after, and never scores above, one
    # matched on evidence.
    evidence_scores = [r["score"] for r in results if not r["words_only"]]
    if evidence_scores:
        floor = min(evidence_scores)
        for r in results:
            if r["words_only"] and r["score"] > floor:
                r["score"] = floor
                for c in r["contributions"]:
                    c["points"] = floor if c["kind"] == "text" else c["points"]
    results.sort(key=lambda r: (r["words_only"], -r["score"], r["slug"]))

    for r in results[:limit]:
        r["url"] = reverse("kb:case_detail_lang", kwargs={"slug": r["slug"], "language": r["language"]})
        r["why"] = explain(r, "en")
    return results[:limit]


def serious_rules(findings: Iterable[Any]) -> list[str]:
    """The warning and critical rules among ``findings`` (objects or dicts with a
    severity; a bare rule ID, or a finding without a severity, counts with its
    rule's registered severity)."""
    registry = None
    out = set()
    for f in findings or []:
        if isinstance(f, str):
            rule, severity = f, ""
        elif isinstance(f, dict):
            rule, severity = f.get("rule") or f.get("rule_id") or "", f.get("severity") or ""
        else:
            rule = getattr(f, "rule", "") or getattr(f, "rule_id", "")
            severity = getattr(f, "severity", "") or ""
        if rule and not severity:
            if registry is None:
                registry = load_all()
            severity = getattr(registry.get(rule), "severity", "")
        if rule and severity in QUALIFYING_SEVERITIES:
            out.add(rule)
    return sorted(out)


def explain(case: dict, language: str = "en") -> str:
    """Why ``case`` was offered, in words, from its ``contributions``:
    e.g. "Shares kvm.vcpus_unpinned (+0.21), kvm.guest_numa_missing (+0.12);
    same environment role:guest, arch:x86_64 (+0.06). Score 0.39 of 1."."""
    contributions = case.get("contributions") or []
    rules = [c for c in contributions if c.get("kind") == "rule"]
    features = [c for c in contributions if c.get("kind") == "feature"]
    text = [c for c in contributions if c.get("kind") == "text"]
    with translation.override(language):
        parts = []
        if rules:
            shared = ", ".join(f"{c['name']} (+{c['points']:.2f})" for c in rules)
            parts.append(gettext("Shares the findings %(rules)s") % {"rules": shared})
        if features:
            names = ", ".join(c["name"] for c in features)
            points = sum(c["points"] for c in features)
            parts.append(
                gettext("same environment %(features)s (+%(points)s)")
                % {"features": names, "points": f"{points:.2f}"}
            )
        if text:
            parts.append(
                gettext("symptom text: %(terms)s (+%(points)s)")
                % {"terms": text[0]["name"], "points": f"{text[0]['points']:.2f}"}
            )
        if case.get("words_only"):
            parts.insert(0, gettext("Matched on words only, no shared finding"))
        summary = gettext("Score %(score)s of 1.") % {"score": format_score(case.get("score"))}
        return ("; ".join(parts) + ". " if parts else "") + summary


def similar_cases_for(
    findings, snapshot_facts, *, limit: int = 5, language: str = "en", symptom: str = ""
) -> list[dict]:
    """Published cases that explain this analysis's problems, best first, each
    with ``slug``, ``score`` (0..1), ``shared_rules``, ``matched_features``,
    ``contributions``, ``why`` and ``title``.

    A case qualifies only by sharing a warning or critical finding (or, with a
    symptom text, by matching it strongly); an analysis without any such finding
    and without a symptom gets no similar case at all. Matches below
    :data:`NEW_PROBLEM_THRESHOLD` are dropped. Empty list with serious findings:
    possibly a new problem; empty list without: no known problem matched."""
    serious = serious_rules(findings)
    if not serious and not symptom:
        return []
    features = snapshot_features(snapshot_facts) if snapshot_facts is not None else []
    results = rank(
        _rules_of(findings),
        features,
        symptom=symptom,
        language=language,
        limit=limit,
        threshold=NEW_PROBLEM_THRESHOLD,
        qualifying=serious,
    )
    return _with_version_matches(results, snapshot_facts, language=language)


# A qualifying case whose version ranges hold the snapshot's versions gains
# this share of what its score lacks to 1 (a known issue of these versions).
VERSION_BONUS = 0.2


def version_bonus(score: float) -> float:
    """What a qualifying case whose version ranges hold the snapshot's gains."""
    return round(VERSION_BONUS * (1.0 - score), 3)


def _with_version_matches(results: list[dict], snapshot_facts, *, language: str) -> list[dict]:
    """Raise the qualifying cases whose stated versions hold the snapshot's
    (``kb.versions``), with a ``version`` contribution and the facts that
    matched; the order follows the new scores."""
    if not results or snapshot_facts is None:
        return results
    known = {k["slug"]: k["matches"] for k in known_issues_for(snapshot_facts, language=language)}
    for result in results:
        matches = known.get(result["slug"])
        if not matches:
            continue
        bonus = version_bonus(result["score"])
        result["score"] = round(min(result["score"] + bonus, 1.0), 3)
        result["version_matches"] = matches
        names = ", ".join(f"{m['kind']} {m['version']}" for m in matches)
        result.setdefault("contributions", []).append({"kind": "version", "name": names, "points": bonus})
    results.sort(key=lambda r: (-r["score"], r["slug"]))
    return results


class CaseMatcher:
    """Whether one published case group matches a host: it would be offered
    as a similar case of the host's findings (a shared warning or critical
    finding, a score of at least :data:`NEW_PROBLEM_THRESHOLD`, as
    :func:`similar_cases_for` decides, without its cut to the best few), or
    its stated version ranges hold the host's versions (a known issue,
    :func:`known_issues_for`). What a retro-scan asks of every stored host
    when the case is published; built once per batch, so the case and the
    rule frequencies are read once."""

    def __init__(self, slug: str) -> None:
        case = (
            Case.objects.filter(slug=slug, state=Case.State.PUBLISHED)
            .only("signature", "applies_to")
            .order_by("language")
            .first()
        )
        self.exists = case is not None
        self.signature: dict = (case.signature or {}) if case is not None else {}
        self.applies_to: dict = (case.applies_to or {}) if case is not None else {}
        self.rules = set(self.signature.get("rules", []))
        with rule_index.reading() as index:
            self.frequencies = index.frequencies()

    @property
    def can_match(self) -> bool:
        """A published case with signature rules or version ranges: anything to match on."""
        return self.exists and bool(self.rules or self.applies_to)

    def qualifies(self, findings: Iterable[Any]) -> bool:
        """The findings hold a warning or critical one of the case's rules."""
        return bool(self.rules & set(serious_rules(findings)))

    def match(self, findings: Iterable[Any], snapshot_facts: Any) -> dict | None:
        """``{"score", "rules", "versions"}`` when the case matches a host with
        these findings and facts (``score`` None for a match by versions
        alone), else None."""
        found = versions.version_matches(self.applies_to, versions.snapshot_versions(snapshot_facts))
        qualifying = sorted(self.rules & set(serious_rules(findings)))
        score = None
        if qualifying:
            groups, df = self.frequencies
            weights = {r: idf(df.get(r, 0), groups) for r in _rules_of(findings)}
            features = set(snapshot_features(snapshot_facts))
            _shared, points, matched, per_feature = _evidence_points(
                self.signature, weights, features, self.frequencies, (RULE_WEIGHT, FEATURE_WEIGHT)
            )
            evidence = sum(points.values()) + per_feature * len(matched)
            if evidence >= NEW_PROBLEM_THRESHOLD:
                score = round(min(evidence + (version_bonus(evidence) if found else 0.0), 1.0), 3)
        if score is None and not found:
            return None
        return {"score": score, "rules": qualifying if score is not None else [], "versions": found}


def known_issues_for(snapshot_facts, *, language: str = "en") -> list[dict]:
    """Published cases whose version ranges (``Case.applies_to``) hold the
    kernel, database or hypervisor versions of ``snapshot_facts``, whatever
    its findings: ``slug``, ``title`` (the reader's language when it exists),
    ``url`` and ``matches`` (``{"kind", "version", "range"}``, the facts shown
    in the report)."""
    found = versions.snapshot_versions(snapshot_facts)
    if not found:
        return []
    wanted = content_language(language)
    groups: dict[str, Case] = {}
    cases = (
        Case.objects.filter(state=Case.State.PUBLISHED)
        .exclude(applies_to={})
        .only("slug", "language", "title", "applies_to")
        .order_by("slug", "language")
    )
    for case in cases:
        if case.slug not in groups or case.language == wanted:
            groups[case.slug] = case
    out = []
    for slug, case in sorted(groups.items()):
        matches = versions.version_matches(case.applies_to, found)
        if matches:
            out.append(
                {"slug": slug, "title": case.title, "url": case.get_absolute_url(), "matches": matches}
            )
    return out


def similarity_report(
    findings, snapshot_facts, *, limit: int = 5, language: str = "en", symptom: str = ""
) -> dict:
    """``similar_cases`` plus what an empty list means: ``possibly_new_problem``
    (warning/critical findings that no case explains) or ``no_known_problem``
    (nothing serious was found)."""
    cases = similar_cases_for(findings, snapshot_facts, limit=limit, language=language, symptom=symptom)
    serious = bool(serious_rules(findings))
    return {
        "similar_cases": cases,
        "possibly_new_problem": serious and not cases,
        "no_known_problem": not serious and not cases,
        "threshold": NEW_PROBLEM_THRESHOLD,
    }


def _word_terms(text: str) -> set[str]:
    """The words a text is compared by for "sounds like": its index tokens
    (the search tokenizer's, so Chinese is cut into words and plurals fold),
    without numbers and one-letter tokens, which match any write-up."""
    return {t for t in tokenizer.tokenize(text) if not t.isdigit() and len(t) > 1}


def sounds_like(
    text: str, *, language: str = "en", limit: int = SOUNDS_LIKE_LIMIT, exclude: Iterable[str] = ()
) -> list[dict]:
    """Cases that *sound like* ``text`` (a pasted write-up, a customer ticket,
    a session's symptom) when no rule matched it: the weaker, text-only
    companion of :func:`rank`, on the same candidates (the case search), the
    same case versions and index tokens (:func:`_case_groups`) and the same
    result shape, so :func:`explain` words it.

    A term weighs by how rare it is among the candidate case groups
    (``log(1 + (G+1)/(df+1))``, as rules do in :func:`idf`); the score is the
    share of the text's weight a case holds. A case is kept when it shares at
    least :data:`SOUNDS_LIKE_MIN_TERMS` terms and scores at least
    :data:`SOUNDS_LIKE_THRESHOLD` and half the best case's score; its ``shared_terms``
    (rarest first, each as the text wrote it) say why.
    These are never "similar cases": they do not enter ``similar_cases``."""
    text = (text or "")[:SOUNDS_LIKE_TEXT_CHARS]
    words = _word_terms(text)
    if not words:
        return []
    excluded = set(exclude)
    ids = _text_candidate_ids(text, None)
    chosen, case_tokens = _case_groups(Q(id__in=ids), language, with_text=True)
    groups = {slug: toks for slug, toks in case_tokens.items() if slug not in excluded}
    df = {t: sum(1 for toks in groups.values() if t in toks) for t in words}
    # Words no candidate holds weigh most and count too: a ticket about
    # something else ("reset my password") shares only common words.
    weights = {t: idf(n, len(groups)) for t, n in df.items()}
    total = sum(weights.values())
    written = tokenizer.surface_forms(text)  # terms are shown as the text wrote them
    results = []
    for slug, tokens in groups.items():
        shared = sorted((t for t in weights if t in tokens), key=lambda t: (-weights[t], t))
        score = sum(weights[t] for t in shared) / total if total else 0.0
        if len(shared) < SOUNDS_LIKE_MIN_TERMS or score < SOUNDS_LIKE_THRESHOLD:
            continue
        case = chosen[slug]
        # the words as the text wrote them ("migrated", not the stem "migrat")
        shown = list(dict.fromkeys(written.get(t, t) for t in shared[:SOUNDS_LIKE_TERMS_SHOWN]))
        results.append(
            {
                "slug": slug,
                "score": round(min(score, 1.0), 3),
                "shared_rules": [],
                "matched_features": [],
                "shared_terms": shown,
                "contributions": [
                    {
                        "kind": "text",
                        "name": ", ".join(shown),
                        "points": round(min(score, 1.0), 3),
                    }
                ],
                "title": case.title,
                "language": case.language,
            }
        )
    results.sort(key=lambda r: (-r["score"], r["slug"]))
    # A runner-up far behind the best shares little more than common words.
    results = [r for r in results if r["score"] >= SOUNDS_LIKE_RELATIVE * results[0]["score"]][:limit]

    for r in results:
        r["url"] = reverse("kb:case_detail_lang", kwargs={"slug": r["slug"], "language": r["language"]})
        r["why"] = explain(r, "en")
    return results


def case_digest(slug: str, language: str = "en") -> dict | None:
    """What a report says first about its best matching case: the published
    case (the reader's language when it exists), its cause, the measures that
    fixed it (``applied`` resolution steps, in order, with their outcome) and
    its metrics before/after with the change in percent. None when the case
    is not published (any more)."""
    versions = {c.language: c for c in Case.objects.filter(slug=slug, state=Case.State.PUBLISHED)}
    reader = content_language(language)
    case = versions.get(reader) or next(iter(versions.values()), None)
    if case is None:
        return None
    steps = case.steps.select_related("measure").filter(status=CaseMeasure.Status.APPLIED)
    metrics = []
    for m in case.metrics.all():
        change = None
        if m.before not in (None, 0) and m.after is not None:
            change = round((m.after - m.before) / m.before * 100)
        metrics.append(
            {"name": m.name, "before": m.before, "after": m.after, "unit": m.unit, "change": change}
        )
    return {
        "case": case,
        "fixed": [{"measure": s.measure, "outcome": s.outcome} for s in steps],
        "metrics": metrics,
    }


def related_cases(case, *, limit: int = 5) -> list[dict]:
    """Other case groups sharing rules with ``case`` (shown on its page)."""
    return rank(
        case.signature_rules,
        case.signature_features,
        language=case.language,
        limit=limit,
        exclude_slug=case.slug,
        threshold=RELATED_THRESHOLD,
    )

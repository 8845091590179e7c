"""Index maintenance: the fields of a case version, their BM25 weights (postings) and the
terms' document frequencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection
from django.db.models import F

from kb.models import Posting, TermStat
from kb.search.tokenizer import tokenize

# --- index maintenance ----------------------------------------------------------------

# BM25 with field weights. A term's frequency in a case version is the sum of
# its occurrences weighted by field (a word of the title counts as three of
# the rest, one of the symptom or cause as one and a half), saturated by K1
# and normalised by the version's length: a short case that names a term
# twice outranks a long one that names it twice in passing. The pivot of the
# length normalisation is a constant, a typical case write-up, not the
# collection's average: then a version's weights never change when other
# cases are saved, and each is computed once, at save time.
K1 = 1.2
B = 0.75
PIVOT_LENGTH = 400  # tokens
FIELD_WEIGHTS = (3.0, 1.5, 1.0)  # title, symptom + cause, the rest


# Where a term occurs in a case version: a bit per field, kept with its
# posting (``Posting.fields``), so a hit's :class:`Why` is read off the index
# instead of re-reading and re-tokenising its texts. "measures" are the
# resolution steps and the metrics measured; "other" the environment columns
# (hypervisor, CPU, database, platform) and the references.
WHERE = ("title", "symptom", "cause", "resolution", "environment", "measures", "tags", "rules", "other")
WHERE_BIT = {name: 1 << n for n, name in enumerate(WHERE)}
_MAIN = ("symptom", "cause")  # ranked with their own field weight (FIELD_WEIGHTS)


@dataclass(frozen=True)
class IndexFields:
    """The tokens of a case version by ranking field (space-separated), and
    where each term occurs (``WHERE_BIT`` flags)."""

    title: str
    main: str  # symptom and cause
    rest: str  # resolution, environment, tags, rules, measures, references
    where: dict[str, int] = field(default_factory=dict, compare=False)

    @property
    def body(self) -> str:
        return f"{self.main} {self.rest}".strip()


def index_fields(texts: dict[str, str]) -> IndexFields:
    """Tokenise the texts of a case version by field (names of ``WHERE``)."""
    tokens = {name: tokenize(texts.get(name, "")) for name in WHERE}
    where: dict[str, int] = {}
    for name, terms in tokens.items():
        bit = WHERE_BIT[name]
        for term in terms:
            where[term] = where.get(term, 0) | bit
    rest = [t for name in WHERE if name != "title" and name not in _MAIN for t in tokens[name]]
    return IndexFields(
        " ".join(tokens["title"]), " ".join(t for name in _MAIN for t in tokens[name]), " ".join(rest), where
    )


def case_index_fields(case) -> IndexFields:
    """The tokens of a case version, as stored in the index."""
    texts = {
        "title": case.title,
        "symptom": case.symptom,
        "cause": case.cause,
        "resolution": case.resolution_summary,
        "environment": case.environment_notes,
        "rules": " ".join(case.signature_rules),
    }
    other = [case.hypervisor, case.cpu_model, case.database, case.database_version]
    other.append(case.get_platform_display())
    if case.pk:
        texts["tags"] = " ".join(t.name for t in case.tags.all())
        measures = [
            f"{step.measure.slug} {step.measure.title_for(case.language)} {step.outcome}"
            for step in case.steps.select_related("measure")
        ]
        measures += [f"{metric.name} {metric.note}" for metric in case.metrics.all()]
        texts["measures"] = "\n".join(measures)
        other += [f"{ref.key} {ref.title}" for ref in case.references.all()]
    texts["other"] = "\n".join(other)
    return index_fields(texts)


def impacts(fields: IndexFields) -> dict[str, float]:
    """Each term of a case version -> its BM25 weight there (without the IDF,
    which is the query's): ``tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / PIVOT_LENGTH))``."""
    tf: dict[str, float] = {}
    length = 0
    for weight, text in zip(FIELD_WEIGHTS, (fields.title, fields.main, fields.rest), strict=True):
        tokens = text.split()
        length += len(tokens)
        for token in tokens:
            tf[token] = tf.get(token, 0.0) + weight
    norm = K1 * (1 - B + B * length / PIVOT_LENGTH)
    return {t: round(f * (K1 + 1) / (f + norm), 5) for t, f in tf.items()}


def write_index(case_id: int, state: str, fields: IndexFields) -> None:
    """Replace the postings of one case version."""

    delete_index(case_id)
    Posting.objects.bulk_create(
        Posting(case_id=case_id, term=term, state=state, impact=impact, fields=fields.where.get(term, 0))
        for term, impact in impacts(fields).items()
    )


def delete_index(case_id: int) -> None:

    Posting.objects.filter(case_id=case_id).delete()


def update_term_stats(old_tokens: set[str], new_tokens: set[str]) -> None:
    """Keep per-term document counts in step with one case version."""

    removed = old_tokens - new_tokens
    if removed:
        TermStat.objects.filter(term__in=removed).update(ndoc=F("ndoc") - 1)
    added = new_tokens - old_tokens
    if added:
        existing = set(TermStat.objects.filter(term__in=added).values_list("term", flat=True))
        TermStat.objects.filter(term__in=existing).update(ndoc=F("ndoc") + 1)
        TermStat.objects.bulk_create(
            [TermStat(term=t, ndoc=1) for t in added - existing], ignore_conflicts=True
        )


def rebuild_term_stats() -> None:
    """Recount every term from the postings."""
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM kb_termstat")
        cursor.execute(
            "INSERT INTO kb_termstat(term, ndoc) SELECT term, count(*) FROM kb_posting GROUP BY term"
        )

"""What a search returns (:class:`Results` of :class:`Hit`, each with its :class:`Why`)
and the filters it takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import connection
from django.utils.safestring import SafeString

from kb.models import Case, CaseRule
from kb.search.queries import Query

# --- searching ----------------------------------------------------------------------------

# A search answers one hit per case (the reader's language first). Cases
# holding only some of the query words are ranked too, by how much of the
# query they cover (``_Scorer``); when fewer than THIN cases hold every word,
# the result says so (``Results.relaxed``) and counts the cases holding any.
THIN = 3
COUNT_CAP = 1000


@dataclass
class Why:
    """Why a case matched: shown with every hit."""

    fields: list[str]  # title, symptom, cause, resolution, environment, measures, tags
    matched: list[str]  # query words the case holds, as written
    missing: list[str]  # query words it does not hold
    rules: list[str]  # signature rules the query names
    tags: list[str]  # tags the query names
    solved: bool  # a measure was applied
    verified: bool  # a metric was measured before and after
    # The language version whose words these are: the one shown (the
    # reader's) when it holds the query words, else the version that matched.
    language: str = ""
    # (query word as written, glossary synonym) for each word the version
    # holds only through a synonym of the glossary (guest -> virtual machine).
    synonyms: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Hit:
    case: Case
    score: float
    snippet: SafeString
    why: Why | None = None
    other: Case | None = None  # the same case in the other language
    reuse_count: int = 0  # "this case helped" marks of the case (``kb.services.reuse_counts``)


@dataclass
class Results:
    query: Query
    hits: list[Hit]
    total: int  # matching cases (not language versions)
    total_capped: bool
    page: int
    pages: int
    relaxed: bool = False  # fewer than THIN cases have every word: ``total`` counts those with any
    suggestion: str = ""  # the query with unknown words respelled from the index vocabulary
    corrections: dict[str, str] = field(default_factory=dict)  # typed word -> respelled word
    exact: bool = True  # the order is exact (False: the search stopped at MAX_DEPTH or COMPLETE_LIMIT)

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def _filtered(qs, filters: dict):

    if filters.get("state"):
        qs = qs.filter(state=filters["state"])
    if filters.get("platform"):
        qs = qs.filter(platform=filters["platform"])
    if filters.get("database"):
        qs = qs.filter(database=filters["database"])
    if filters.get("language"):
        qs = qs.filter(language=filters["language"])
    if filters.get("rule"):
        qs = qs.filter(id__in=CaseRule.objects.filter(rule=filters["rule"]).values("case_id"))
    if filters.get("author_id"):
        qs = qs.filter(author_id=filters["author_id"])
    return qs


def _filter_sql(filters: dict) -> tuple[str, list]:
    """Filters as conditions on ``kb_case c``. Inline conditions (not an
    ``id IN (subquery)``) let PostgreSQL start from the text index."""
    clauses, params = ["TRUE" if connection.vendor == "postgresql" else "1"], []
    for column in ("state", "platform", "database", "language", "author_id"):
        if filters.get(column):
            clauses.append(f"c.{column} = %s")
            params.append(filters[column])
    if filters.get("rule"):
        clauses.append("EXISTS (SELECT 1 FROM kb_caserule r WHERE r.case_id = c.id AND r.rule = %s)")
        params.append(filters["rule"])
    return " AND ".join(clauses), params

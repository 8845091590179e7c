"""Bilingual case search.

One tokenizer serves the index and the query (:func:`tokenize`):

* text is NFKC-normalised and lower-cased, traditional Chinese characters
  read as simplified (``kb/data/traditional.txt``, from OpenCC);
* Chinese runs are segmented with rjieba, primed with the versioned domain
  dictionary ``kb/data/dictionary.txt`` (大页, 绑核, 内存交织 ...), and indexed
  with ``cut_for_search`` so a two-character word inside a longer one is found;
* identifiers such as ``vm.zone_reclaim_mode`` or ``host-passthrough`` are kept
  whole *and* split into their parts (``zone_reclaim_mode``, ``zone``,
  ``reclaim``, ``mode``);
* every token is reduced to letters, digits and CJK characters (its storage
  form), so neither SQLite's unicode61 nor PostgreSQL's parser splits it again.

Queries are expanded with the glossary ``kb/data/glossary.yaml`` (大页 <->
huge pages ...): a query is an AND of groups, a group an OR of alternatives, an
alternative an AND of tokens.

The index is the project's own, the same on SQLite and PostgreSQL: each
term of each case version with its BM25 weight there (:class:`kb.models.Posting`,
:func:`impacts`) and each term's document frequency (:class:`kb.models.TermStat`).
A search reads the best postings of each query term first and stops as soon
as the page's hits are certain (:func:`_rank`), so its cost follows the page,
not the number of matches.

The package follows those steps, one module each, in the order they import
one another: :mod:`~kb.search.lexicon` (where the data lives),
:mod:`~kb.search.tokenizer` (dictionary, glossary, tokens), :mod:`~kb.search.queries` (parsing),
:mod:`~kb.search.indexing` (postings and term statistics),
:mod:`~kb.search.resultset` (hits and filters), :mod:`~kb.search.spelling`
(vocabulary and corrections), :mod:`~kb.search.ranking`,
:mod:`~kb.search.explaining` (why a case matched), :mod:`~kb.search.snippets`
and :mod:`~kb.search.searching` (:func:`~kb.search.searching.search`). Callers
import the module that holds what they use.
"""

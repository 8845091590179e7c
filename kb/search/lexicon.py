"""The versioned dictionary, the glossary and the traditional -> simplified table of search (``kb/data``)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
DICTIONARY_PATH = DATA / "dictionary.txt"
GLOSSARY_PATH = DATA / "glossary.yaml"
TRADITIONAL_PATH = DATA / "traditional.txt"
PAGE_SIZE = 20

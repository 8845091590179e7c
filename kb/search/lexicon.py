"""Where search's data lives (``kb/data``: the dictionary, the glossary, the
traditional -> simplified table) and the default page size."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "data"
DICTIONARY_PATH = DATA / "dictionary.txt"
GLOSSARY_PATH = DATA / "glossary.yaml"
TRADITIONAL_PATH = DATA / "traditional.txt"
PAGE_SIZE = 20

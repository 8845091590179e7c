"""Which of the two content languages a reader gets, and a text in it.

Rules, findings, cases and measures carry an English text and a Simplified
Chinese one (``title`` / ``title_zh``); the UI itself is translated by
gettext. Every app chooses between the two texts here, so a page, a report,
the API and a session summary never disagree about it."""

from __future__ import annotations


def reads_chinese(language: str | None) -> bool:
    """Whether a reader of the language tag ``language`` gets the Chinese
    text: any Chinese tag (``zh-hans``, ``zh-CN``, ``zh``); None is English.

    >>> reads_chinese("zh-Hans"), reads_chinese("en-us"), reads_chinese(None)
    (True, False, False)
    """
    return (language or "").strip().lower().startswith("zh")


def content_language(language: str | None) -> str:
    """``zh`` for any Chinese language tag, else ``en``: the ``language`` of a
    case version, and the language a report or summary is written in.

    >>> content_language("zh-CN"), content_language("de")
    ('zh', 'en')
    """
    return "zh" if reads_chinese(language) else "en"


def in_language(text: str, text_zh: str, zh: bool) -> str:
    """A text in the reader's language: the Chinese version ``text_zh`` for a
    Chinese reader (``zh``) where there is one, else ``text``.

    >>> in_language("Swap in use", "使用了交换空间", True), in_language("Swap in use", "", True)
    ('使用了交换空间', 'Swap in use')
    """
    return (text_zh if zh else "") or text


def ui_language(zh: bool) -> str:
    """The Django language code whose gettext catalogue writes the generated
    words around such content (``translation.override``), for a Chinese
    reader (``zh``) or an English one.

    >>> ui_language(True), ui_language(False)
    ('zh-hans', 'en')
    """
    return "zh-hans" if zh else "en"

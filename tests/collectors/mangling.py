"""What pasting does to command output, as functions ``text -> text``.

Each function reproduces one tool's damage (mail clients, chat tools, wikis,
terminal loggers) so that tests and ``bench/parse.py`` can check that
:mod:`collectors.normalise` undoes it. They are composed freely: quoting an
indented, CRLF text is a realistic e-mail reply to a Windows user's paste.
"""

from __future__ import annotations

import html
from collections.abc import Callable


def quote(text: str) -> str:
    """E-mail reply quoting: ``> `` before every line (``>`` alone on blank ones)."""
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def quote_nested(text: str) -> str:
    """A reply to a reply: ``>> `` (Outlook / mutt style)."""
    return "\n".join(f">> {line}" if line else ">>" for line in text.split("\n"))


def indent_spaces(text: str) -> str:
    return "\n".join(f"    {line}" if line else line for line in text.split("\n"))


def indent_tab(text: str) -> str:
    return "\n".join(f"\t{line}" if line else line for line in text.split("\n"))


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def ansi_timestamps(text: str) -> str:
    """A ``script``/tmux log: every line stamped, prompts coloured, a reset code
    at the end of each line (the prompt line stamped first, as loggers do)."""
    out = []
    for i, line in enumerate(text.split("\n")):
        stamp = f"2024-05-01 10:{(i // 60) % 60:02d}:{i % 60:02d}"
        if line.startswith("[") and "]#" in line:
            head, _, cmd = line.partition("]#")
            line = f"\x1b[01;32m{head}]#\x1b[0m{cmd}"
        out.append(f"{stamp} {line}\x1b[0m" if line else f"{stamp} ")
    return "\n".join(out)


def bracket_timestamps(text: str) -> str:
    """PuTTY / irssi-style ``[HH:MM:SS] `` stamps (an empty line still stamped)."""
    return "\n".join(
        f"[10:{(i // 60) % 60:02d}:{i % 60:02d}] {line}" for i, line in enumerate(text.split("\n"))
    )


def jira(text: str) -> str:
    return "{code:bash}\n" + text + "\n{code}"


def noformat(text: str) -> str:
    return "{noformat}\n" + text + "\n{noformat}"


def markdown(text: str) -> str:
    return "```text\n" + text + "\n```"


def html_pre(text: str) -> str:
    """``<pre><code>`` with the first line on the same line, entities escaped."""
    return "<pre><code>" + html.escape(text, quote=True) + "</code></pre>"


def html_br(text: str) -> str:
    """A rich-text editor's paste: lines joined by ``<br>``, escaped."""
    return "<p>" + "<br>\n".join(html.escape(line, quote=False) for line in text.split("\n")) + "</p>"


def tabs_to_spaces(text: str) -> str:
    return text.expandtabs(8)


def nbsp(text: str) -> str:
    """Chat tools send runs of spaces as non-breaking spaces."""
    return text.replace("  ", "\u00a0 ").replace("\t", "\u00a0\u00a0")


def fullwidth(text: str) -> str:
    return text.replace(" ", "\u3000")


MANGLERS: dict[str, Callable[[str], str]] = {
    "quote": quote,
    "quote_nested": quote_nested,
    "indent_spaces": indent_spaces,
    "indent_tab": indent_tab,
    "crlf": crlf,
    "ansi_timestamps": ansi_timestamps,
    "bracket_timestamps": bracket_timestamps,
    "jira": jira,
    "noformat": noformat,
    "markdown": markdown,
    "html_pre": html_pre,
    "html_br": html_br,
    "tabs_to_spaces": tabs_to_spaces,
    "nbsp": nbsp,
    "fullwidth": fullwidth,
}
# Wrappers that enclose the whole text: applied last (a fence inside a quote is
# fine, a quote marker inside a fence is what the engineer pasted).
WRAPPERS = frozenset({"jira", "noformat", "markdown", "html_pre", "html_br"})

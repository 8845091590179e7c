"""Every page rendered in 中文 has no UI string left in English.

Method. Each page of tests/pages.py (built from the URL resolver, so pages
added later are covered) is rendered twice for the same user and the same
data, once in English and once in Chinese. From both renderings the visible
text nodes are taken (HTML parsed; ``<script>``, ``<style>``, ``<code>``,
``<pre>``, ``<kbd>``, ``<samp>``, ``<textarea>`` and anything marked
``translate="no"`` skipped, since those hold commands, configuration and
pasted output). A text node of the Chinese rendering is an untranslated UI
string when all of these hold:

1. it still contains an English word once identifiers, numbers and units are
   removed: tokens with a digit, ``_``, ``.``, ``/``, ``=``, ``:`` or ``@`` inside
   (rule IDs, sysctl names, paths, host names), all-capital acronyms (NUMA,
   KVM, CPU) and the product and unit names of :data:`PROPER_NAMES`;
2. the very same text node is in the English rendering (a translated string
   differs; content that has a version per language, such as a case or a
   measure title, differs too);
3. it is not user or case content: content is every string stored in the
   database for the world the pages show (all text, slug and JSON fields of
   every model: cases, measures, sessions, snapshots and their facts, users,
   teams). Runs of words of the node that equal such a string are removed
   (a title next to "·", a database name next to its version) and what is
   left must hold no English word; a node of 20 characters or more that is
   part of a stored text (search snippets and previews) is content too. Runs
   must match a stored value exactly, so a chrome word such as "Memory" is
   not excused because a case happens to use it in a sentence.

What it cannot see: a raw stored value shown on its own (a fact such as a
host role printed verbatim) counts as content; such values are translated
where they are displayed and checked by their own tests.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.apps import apps
from django.db import models
from django.test import Client
from django.utils import translation

from tests.pages import build_page_world, every_page

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

SKIP = {"script", "style", "code", "pre", "kbd", "samp", "textarea"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
# Names that stay as they are in a Chinese UI: products, formats, units.
PROPER_NAMES = {
    "Casebook", "MariaDB", "MySQL", "Percona", "OceanBase", "ZStack", "OpenStack", "VMware", "libvirt",
    "Kunpeng", "Linux", "Debian", "English", "Intel", "Xeon", "Huawei", "virsh", "numactl", "sosreport",
    "htmx", "Redis", "PostgreSQL", "Celery", "Markdown", "curl", "Token", "vCPU", "vCPUs", "vNUMA",
    "tpmC", "BMSQL", "STREAM", "ms", "s", "kB", "KiB", "MiB", "GiB", "TiB", "MB", "GB", "iothread",
    "iothreadpin", "emulatorpin", "vcpupin", "numatune", "netem", "softirq", "sysctl", "dmesg", "lscpu",
    "numastat", "meminfo", "sar", "mpstat", "top", "tc", "ping", "dumpxml", "admin", "Webhook", "Webhooks",
}  # fmt: skip
TECHNICAL = re.compile(r"\S*[0-9_./=:@]\S*")
WORD = re.compile(r"[A-Za-z][A-Za-z']+")


class TextNodes(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, bool]] = []
        self.nodes: list[str] = []

    def _skipping(self) -> bool:
        return any(skip for _, skip in self.stack)

    def handle_starttag(self, tag, attrs):
        if tag in VOID:
            return
        skip = tag in SKIP or dict(attrs).get("translate") == "no"
        self.stack.append((tag, skip))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        text = " ".join(data.split())
        if text and not self._skipping():
            self.nodes.append(text)


def text_nodes(html: str) -> list[str]:
    parser = TextNodes()
    parser.feed(html)
    return parser.nodes


def english_words(text: str) -> list[str]:
    rest = TECHNICAL.sub(" ", text)
    return [w for w in WORD.findall(rest) if not w.isupper() and w not in PROPER_NAMES]


def _strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def stored_content() -> tuple[set[str], str]:
    """Every string stored in the database: (exact values, one corpus)."""
    kinds = (models.CharField, models.TextField, models.JSONField)
    values: set[str] = set()
    for model in apps.get_models():
        fields = [f.name for f in model._meta.concrete_fields if isinstance(f, kinds)]
        if not fields or model._meta.app_label in ("sessions", "admin", "contenttypes", "axes"):
            continue
        for row in model._default_manager.values_list(*fields):
            for value in row:
                for s in _strings(value):
                    for piece in [s, *s.splitlines()]:
                        piece = " ".join(piece.split())
                        if piece:
                            values.add(piece)
    return values, "\x00".join(values)


def residual(node: str, exact: set[str]) -> str:
    """``node`` without the runs of words that equal a stored value (a title
    beside a separator, a database name beside its version)."""
    tokens = node.split(" ")
    keep, i = [], 0
    while i < len(tokens):
        for j in range(min(len(tokens), i + 40), i, -1):
            run = " ".join(tokens[i:j])
            if run in exact or run.strip(PUNCTUATION) in exact:
                i = j
                break
        else:
            keep.append(tokens[i])
            i += 1
    return " ".join(keep)


PUNCTUATION = " ,.:;()[]…·/$—-"


def untranslated(en_html: str, zh_html: str, content: tuple[set[str], str]) -> list[str]:
    exact, corpus = content
    english = set(text_nodes(en_html))
    out = []
    for node in text_nodes(zh_html):
        if node not in english or not english_words(node):
            continue
        cut = node.strip(PUNCTUATION)
        if len(cut) >= 20 and cut in corpus:
            continue  # a snippet or preview of stored text
        if english_words(residual(node, exact)):
            out.append(node)
    return sorted(set(out))


@pytest.fixture
def pages_world(django_user_model, settings, tmp_path, monkeypatch):
    from triage import uploads

    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    world = build_page_world(django_user_model)
    return world, every_page(world)


def _render(page, user, language: str) -> str:
    client = Client(HTTP_ACCEPT_LANGUAGE=language)
    if not page.anonymous:
        client.force_login(user)
    with translation.override("en"):  # the middleware's activation must not outlive the test
        response = client.get(page.path, follow=True)
    assert response.status_code in (200, 403, 404), f"{page.path}: {response.status_code}"
    return response.content.decode()


def test_no_english_left_in_the_chinese_ui(pages_world):
    world, pages = pages_world
    user = world.users["support"]
    rendered = [(p, _render(p, user, "en"), _render(p, user, "zh-hans")) for p in pages]
    content = stored_content()
    problems = []
    for page, en, zh in rendered:
        assert '<html lang="zh-hans">' in zh, page.path
        left = untranslated(en, zh, content)
        if left:
            problems.append(f"{page.name} {page.path}: {left}")
    assert not problems, "UI strings left in English in 中文:\n" + "\n".join(problems)


def test_the_500_page_in_both_languages():
    from django.template import loader
    from django.utils import translation

    with translation.override("zh-hans"):
        zh = loader.render_to_string("500.html")
    with translation.override("en"):
        en = loader.render_to_string("500.html")
    assert "Something went wrong" in en and 'id="error-page"' in zh
    assert untranslated(en, zh, (set(), "")) == []


def test_the_method_flags_english_and_excuses_content():
    en = "<p>Hosts</p><p>numa.remote_access_dominant</p><p>Slow guest</p><pre>numactl -H</pre><p>主机</p>"
    zh = "<p>Hosts</p><p>numa.remote_access_dominant</p><p>Slow guest</p><pre>numactl -H</pre><p>主机</p>"
    assert untranslated(en, zh, ({"Slow guest"}, "Slow guest")) == ["Hosts"]
    assert untranslated("<p>Hosts</p>", "<p>主机</p>", (set(), "")) == []

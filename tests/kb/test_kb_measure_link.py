"""``{% measure_link %}``: a measure named by its title in the reader's
language, linked to its catalogue page, wherever a measure is shown."""

from __future__ import annotations

import pytest
from django.template import Context, Template
from django.test import RequestFactory
from django.utils import translation

from kb import services
from kb.models import Measure

TAG = Template("{% load kb_measures %}{% measure_link slug %}|{% measure_link slug 'zh' %}")


@pytest.fixture
def catalogue(db):
    services.load_all()


def _render(slug, request=None):
    return TAG.render(Context({"slug": slug, "request": request}))


def test_title_linked_to_the_catalogue(catalogue):
    m = Measure.objects.get(slug="disable-cpu-hotplug")
    en, zh = _render("disable-cpu-hotplug").split("|")
    assert en == (
        f'<a class="measure-link" href="/cases/measures/disable-cpu-hotplug/" '
        f'data-measure="disable-cpu-hotplug" title="disable-cpu-hotplug">{m.title_en}</a>'
    )
    assert f">{m.title_zh}</a>" in zh
    with translation.override("zh-hans"):
        assert f">{m.title_zh}</a>" in _render("disable-cpu-hotplug").split("|")[0]


def test_unknown_or_hostile_slug_is_shown_escaped_and_unlinked(catalogue):
    html = _render('<script>x</script>"').split("|")[0]
    assert "<script>" not in html and "&lt;script&gt;" in html and "href" not in html


def test_the_catalogue_is_read_once_per_request(catalogue, django_assert_num_queries):
    request = RequestFactory().get("/")
    template = Template("{% load kb_measures %}{% for s in slugs %}{% measure_link s %}{% endfor %}")
    slugs = list(Measure.objects.values_list("slug", flat=True))
    with django_assert_num_queries(1):
        html = template.render(Context({"slugs": slugs, "request": request}))
    assert html.count('class="measure-link"') == len(slugs)

"""A measure's title in the reader's language (``Measure.title_for``, through
``config.language``): a measure with no Chinese title shows its English one
to a Chinese reader, in the catalogue page as everywhere else."""

from __future__ import annotations

import pytest

from kb.models import Measure

pytestmark = pytest.mark.django_db


def test_the_catalogue_falls_back_to_the_english_title(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("reader", password="reader-password-1"))
    Measure.objects.create(slug="pin-vcpus", title_en="Pin vCPUs", title_zh="绑定 vCPU", disruption="online")
    Measure.objects.create(slug="new-measure", title_en="A new measure", title_zh="", disruption="online")
    assert [m.title_for("zh-hans") for m in Measure.objects.order_by("slug")] == [
        "A new measure",
        "绑定 vCPU",
    ]
    assert [m.title_for("en") for m in Measure.objects.order_by("slug")] == ["A new measure", "Pin vCPUs"]
    page = client.get("/cases/measures/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert ">A new measure</a>" in page and ">绑定 vCPU</a>" in page
    page = client.get("/cases/measures/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert ">A new measure</a>" in page and ">Pin vCPUs</a>" in page

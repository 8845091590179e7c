"""Why a rule was skipped, in the reader's language: engine.run stores the
reason in English ("missing disks"); the report translates it at display time."""

from django.utils import translation

from triage.templatetags.triage_labels import skip_reason


def test_a_skipped_reason_reads_in_chinese_with_the_fact_names_verbatim():
    with translation.override("zh-hans"):
        assert skip_reason("missing disks") == "缺少 <code>disks</code>"
        assert skip_reason("missing numa or sysctl") == "缺少 <code>numa or sysctl</code>"
        assert skip_reason("error: ValueError: <bad>") == "错误：<code>ValueError: &lt;bad&gt;</code>"
    with translation.override("en"):
        assert skip_reason("missing disks") == "missing <code>disks</code>"
        assert skip_reason("<b>") == "&lt;b&gt;"

from collections.abc import Sequence
from typing import cast

from django import forms
from django.utils.translation import gettext_lazy as _

from kb.models import Case, Language


class CaseSearchForm(forms.Form):
    q = forms.CharField(label=_("Search"), required=False, max_length=200)
    platform = forms.ChoiceField(
        label=_("Platform"), required=False, choices=[("", _("any")), *list(Case.Platform.choices)]
    )
    database = forms.CharField(label=_("Database"), required=False, max_length=40)
    rule = forms.CharField(label=_("Rule"), required=False, max_length=80)
    # Empty means published: readers search published cases unless they ask.
    state = forms.ChoiceField(
        label=_("State"), required=False, choices=list(Case.State.choices), initial=Case.State.PUBLISHED
    )
    language = forms.ChoiceField(
        label=_("Language"), required=False, choices=[("", _("any")), *list(Language.choices)]
    )
    page = forms.IntegerField(required=False, min_value=1, max_value=10_000)


class CaseEditForm(forms.ModelForm):
    """The text of one language version of a draft case."""

    class Meta:
        model = Case
        fields = ["title", "symptom", "cause", "resolution_summary", "environment_notes"]
        widgets = {
            "symptom": forms.Textarea(attrs={"rows": 4}),
            "cause": forms.Textarea(attrs={"rows": 4}),
            "resolution_summary": forms.Textarea(attrs={"rows": 4}),
            "environment_notes": forms.Textarea(attrs={"rows": 3}),
        }


class ReviewForm(forms.Form):
    ACTIONS = ("submit", "approve", "return")

    action = forms.ChoiceField(choices=[(a, a) for a in ACTIONS])
    comment = forms.CharField(
        label=_("Comment"), required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 3})
    )


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field (Django's documented pattern)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if isinstance(data, (list, tuple)):
            return [super(MultipleFileField, self).clean(d, initial) for d in data]
        return [super().clean(data, initial)] if data else super().clean(data, initial)


def parse_references(text: str) -> list[dict]:
    """One reference per line: a key, then optionally its URL and a title
    (``MDEV-18860 https://jira.mariadb.org/browse/MDEV-18860 no innodb_numa_interleave``);
    a line that is only a URL is its own key.

    >>> [r["key"] for r in parse_references("https://lwn.net/Articles/336699/\\nPS-3967 Slow start")]
    ['lwn.net/Articles/336699', 'PS-3967']
    """
    refs = []
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0].startswith(("http://", "https://")):
            url = words[0]
            key = url.split("://", 1)[1].rstrip("/")[:80]
            refs.append({"key": key, "title": " ".join(words[1:])[:250], "url": url})
            continue
        url = words[1] if len(words) > 1 and words[1].startswith(("http://", "https://")) else ""
        title = " ".join(words[2:] if url else words[1:])
        refs.append({"key": words[0][:80], "title": title[:250], "url": url})
    return refs


class NewCaseForm(forms.Form):
    """The KCS fields of one language version (the other one is pre-filled
    for the author to translate), the structured fields, and an optional
    snapshot whose analysis fills the environment and the signature."""

    language = forms.ChoiceField(label=_("Language"), choices=list(Language.choices))
    title = forms.CharField(label=_("Title"), max_length=250)
    symptom = forms.CharField(label=_("Symptom"), widget=forms.Textarea(attrs={"rows": 4}))
    environment_notes = forms.CharField(
        label=_("Environment notes"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )
    cause = forms.CharField(label=_("Cause"), required=False, widget=forms.Textarea(attrs={"rows": 4}))
    resolution_summary = forms.CharField(
        label=_("Resolution"), required=False, widget=forms.Textarea(attrs={"rows": 4})
    )
    measures = forms.MultipleChoiceField(
        label=_("Measures applied"), required=False, widget=forms.CheckboxSelectMultiple
    )
    platform = forms.ChoiceField(label=_("Platform"), choices=list(Case.Platform.choices), initial="other")
    hypervisor = forms.CharField(label=_("Hypervisor"), required=False, max_length=80)
    cpu_architecture = forms.CharField(label=_("CPU architecture"), required=False, max_length=20)
    cpu_model = forms.CharField(label=_("CPU model"), required=False, max_length=120)
    database = forms.CharField(label=_("Database"), required=False, max_length=40)
    database_version = forms.CharField(label=_("Database version"), required=False, max_length=60)
    tags = forms.CharField(
        label=_("Tags"), required=False, max_length=400, help_text=_("Separated by commas.")
    )
    references = forms.CharField(
        label=_("Sources and references"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=_("One per line: a key (ticket, bug), then optionally its URL and a title; or just a URL."),
    )
    kernel_versions = forms.CharField(
        label=_("Kernel versions it applies to"),
        required=False,
        max_length=120,
        help_text=_("A version range, e.g. >=3.5, <3.10; a snapshot in the range is told of this case."),
    )
    database_versions = forms.CharField(
        label=_("Database versions it applies to"), required=False, max_length=120
    )
    hypervisor_versions = forms.CharField(
        label=_("Hypervisor versions it applies to"), required=False, max_length=120
    )
    snapshot = forms.TypedChoiceField(label=_("Snapshot"), required=False, coerce=int, empty_value=None)
    snapshot_file = forms.FileField(
        label=_("or upload outputs"),
        required=False,
        help_text=_(
            "Command outputs, a collector archive or a transcript: "
            "its analysis fills the environment and the signature."
        ),
    )

    def __init__(
        self,
        *args,
        snapshots: Sequence[tuple[int, str]] = (),
        measures: Sequence[tuple[str, str]] = (),
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        cast(forms.ChoiceField, self.fields["snapshot"]).choices = [("", _("none")), *snapshots]
        cast(forms.ChoiceField, self.fields["measures"]).choices = list(measures)

    def clean(self):
        data = super().clean()
        if data.get("snapshot") and data.get("snapshot_file"):
            raise forms.ValidationError(_("Pick a snapshot or upload a file, not both."))
        return data


class ImportCasesForm(forms.Form):
    # Not "files": a form's files are its uploaded-files dictionary.
    documents = MultipleFileField(
        label=_("Markdown or YAML files"),
        help_text=_(
            "One case version per Markdown file (front matter and sections), "
            "or a YAML case with both languages."
        ),
    )


class WriteupForm(forms.Form):
    """A pasted write-up: the engine reads its outputs; the author adds the
    cause and the resolution."""

    language = forms.ChoiceField(label=_("Language"), choices=list(Language.choices))
    title = forms.CharField(label=_("Title"), max_length=250)
    text = forms.CharField(
        label=_("Write-up"),
        max_length=500_000,
        widget=forms.Textarea(attrs={"rows": 10, "translate": "no"}),
        help_text=_("The incident as written, with the command outputs pasted in it."),
    )
    cause = forms.CharField(label=_("Cause"), required=False, widget=forms.Textarea(attrs={"rows": 3}))
    resolution_summary = forms.CharField(
        label=_("Resolution"), required=False, widget=forms.Textarea(attrs={"rows": 3})
    )

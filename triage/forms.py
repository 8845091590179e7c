"""Forms of the snapshot pages."""

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from triage.models import Snapshot


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one field: each becomes one snapshot (one host)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput(attrs={"multiple": True}))
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data if d]
        return [single(data, initial)] if data else []


class SnapshotUploadForm(forms.Form):
    # the metaclass moves declared fields into ``base_fields``: ``form.files`` stays
    # the request's files whatever mypy reads here
    files = MultipleFileField(  # type: ignore[assignment]
        label=_("Snapshot files"),
        required=False,
        help_text=_("Collector archive, sosreport, transcript or a single artifact. One file per host."),
    )
    transcript = forms.CharField(
        label=_("Or paste a transcript"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        help_text=_("Terminal or SQL client output, prompts included."),
    )
    label = forms.CharField(label=_("Label"), max_length=200, required=False)
    cluster = forms.CharField(
        label=_("Cluster"),
        max_length=200,
        required=False,
        help_text=_(
            "Snapshots with the same cluster name are analysed together: a guest and its host, "
            "or the hosts of one cluster."
        ),
    )

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("files") and not (cleaned.get("transcript") or "").strip():
            raise forms.ValidationError(_("Choose a file or paste a transcript."))
        return cleaned


class SnapshotFilterForm(forms.Form):
    status = forms.ChoiceField(
        label=_("Status"), required=False, choices=[("", _("Any status")), *Snapshot.Status.choices]
    )
    cluster = forms.CharField(label=_("Cluster"), required=False, max_length=200)
    rule = forms.CharField(label=_("Rule"), required=False, max_length=100)
    ticket = forms.CharField(label=_("Ticket"), required=False, max_length=64)


class AddArtifactForm(forms.Form):
    """Evidence pasted (or a file chosen) on the report's "Not checked" list."""

    output = forms.CharField(
        label=_("Paste the output"),
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false"}),
        help_text=_("The command line and its output, as the terminal shows them."),
    )
    file = forms.FileField(label=_("Or choose a file"), required=False)
    name = forms.CharField(label=_("Name"), max_length=200, required=False)

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("file") and not (cleaned.get("output") or "").strip():
            raise forms.ValidationError(_("Paste the output or choose a file."))
        return cleaned


class AcknowledgeForm(forms.Form):
    """Acknowledge one finding of a report for its host or its cluster."""

    SCOPES = [("host", _("this host")), ("cluster", _("every host of the cluster"))]

    rule = forms.CharField(max_length=100, widget=forms.HiddenInput)
    scope = forms.ChoiceField(label=_("For"), choices=SCOPES, initial="host", widget=forms.RadioSelect)
    reason = forms.CharField(label=_("Reason"), max_length=2000, widget=forms.Textarea(attrs={"rows": 2}))
    expires = forms.DateField(
        label=_("Until (optional)"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )


class TicketForm(forms.Form):
    """An external ticket reference: its key and, optionally, its address."""

    key = forms.CharField(
        label=_("Ticket"), max_length=64, widget=forms.TextInput(attrs={"placeholder": "OPS-123"})
    )
    url = forms.URLField(
        label=_("Address"),
        required=False,
        max_length=500,
        assume_scheme="https",
        widget=forms.URLInput(attrs={"placeholder": "https://jira.example.com/browse/OPS-123"}),
    )

from __future__ import annotations

from django import forms
from django.utils.translation import gettext_lazy as _

from troubleshoot.lifecycle import CONSTRAINT_FIELDS, PROBLEM_FIELDS
from troubleshoot.models import PlannedMeasure, Session, SessionSnapshot


class ProblemForm(forms.ModelForm):
    class Meta:
        model = Session
        fields = PROBLEM_FIELDS
        widgets = {"symptom": forms.Textarea(attrs={"rows": 4})}
        help_texts = {
            "metric_name": _("The measurement that shows the problem, e.g. CREATE INDEX duration."),
            "metric_expected": _("e.g. 30-60 s"),
        }


class ConstraintsForm(forms.ModelForm):
    class Meta:
        model = Session
        fields = CONSTRAINT_FIELDS


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data]
        return [single(data, initial)]


class UploadForm(forms.Form):
    # the metaclass moves declared fields into ``base_fields``: ``form.files`` stays
    # the request's files whatever mypy reads here
    files = MultipleFileField(label=_("Snapshot files (one file per host)"))  # type: ignore[assignment]
    phase = forms.ChoiceField(
        label=_("Phase"), choices=SessionSnapshot.Phase.choices, initial=SessionSnapshot.Phase.BEFORE
    )


class SnapshotChoiceField(forms.ModelChoiceField):
    """A snapshot by name, upload time and cluster: file names alone repeat
    (every collector archive is called alike)."""

    def label_from_instance(self, obj) -> str:
        parts = [obj.display_name, f"{obj.created_at:%Y-%m-%d %H:%M}"]
        if obj.cluster:
            parts.append(obj.cluster)
        return " · ".join(parts)


class AttachForm(forms.Form):
    snapshot = SnapshotChoiceField(queryset=None, label=_("Existing snapshot"))
    phase = forms.ChoiceField(
        label=_("Phase"), choices=SessionSnapshot.Phase.choices, initial=SessionSnapshot.Phase.BEFORE
    )

    def __init__(self, *args, snapshots=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["snapshot"].queryset = snapshots


class PlanAddForm(forms.Form):
    measure = forms.SlugField()
    tier = forms.TypedChoiceField(coerce=int, choices=[(1, "1"), (2, "2"), (3, "3")], initial=1)


class ApplyForm(forms.Form):
    status = forms.ChoiceField(choices=PlannedMeasure.Status.choices, label=_("status"))
    change_made = forms.CharField(
        label=_("change actually made"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    notes = forms.CharField(label=_("notes"), required=False, widget=forms.Textarea(attrs={"rows": 2}))
    metric_after = forms.FloatField(label=_("metric after"), required=False)


class ApplyTogetherForm(forms.Form):
    """Several measures applied in one change and measured once: one step."""

    measures = forms.ModelMultipleChoiceField(
        queryset=PlannedMeasure.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        label=_("measures applied together"),
    )
    change_made = forms.CharField(
        label=_("change actually made"), required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    notes = forms.CharField(label=_("notes"), required=False, widget=forms.Textarea(attrs={"rows": 2}))
    metric_after = forms.FloatField(label=_("metric after all of them"), required=False)

    def __init__(self, *args, session=None, **kwargs):
        super().__init__(*args, prefix="together", **kwargs)
        field = self.fields["measures"]
        field.queryset = session.measures.select_related("measure").order_by("tier", "position", "id")
        field.label_from_instance = lambda pm: pm.measure.slug

    def clean_measures(self):
        chosen = self.cleaned_data["measures"]
        if len(chosen) < 2:
            raise forms.ValidationError(_("choose at least two measures"))
        return chosen


class VerifyForm(forms.Form):
    metric_after = forms.FloatField(label=_("metric after the fix"), required=False)


class CloseForm(forms.ModelForm):
    class Meta:
        model = Session
        fields = ("outcome", "root_cause", "lessons")
        widgets = {
            "root_cause": forms.TextInput(attrs={"size": 80}),
            "lessons": forms.Textarea(attrs={"rows": 3}),
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["outcome"].required = True
        self.fields["root_cause"].required = True

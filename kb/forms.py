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

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

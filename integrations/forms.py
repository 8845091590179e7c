from django import forms
from django.utils.translation import gettext_lazy as _

from . import services
from .models import Event, PersonalEvent


class WebhookForm(forms.Form):
    url = forms.URLField(label=_("Receiver URL"), max_length=500, assume_scheme="https")
    events = forms.MultipleChoiceField(
        label=_("Events"), choices=Event.choices, widget=forms.CheckboxSelectMultiple
    )
    secret = forms.CharField(
        label=_("Secret"),
        max_length=128,
        required=False,
        help_text=_("Leave empty to generate one. The receiver checks X-Casebook-Signature with it."),
    )

    def clean_url(self):
        url = self.cleaned_data["url"]
        try:
            services.resolve_target(url)
        except services.InvalidWebhookURL as exc:
            raise forms.ValidationError(str(exc)) from exc
        return url


class PersonalWebhookForm(WebhookForm):
    """A webhook of one's own: the events about oneself (``PersonalEvent``)."""

    events = forms.MultipleChoiceField(
        label=_("Events"),
        choices=PersonalEvent.choices,
        initial=PersonalEvent.values,
        widget=forms.CheckboxSelectMultiple,
    )


class NotificationForm(forms.Form):
    email = forms.EmailField(label=_("E-mail address"), required=False)
    events = forms.MultipleChoiceField(
        label=_("Send me an e-mail when"),
        choices=[*Event.choices, *PersonalEvent.choices],
        widget=forms.CheckboxSelectMultiple,
        required=False,
    )

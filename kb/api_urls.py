from django.urls import path

from kb import api

urlpatterns = [
    path("cases/<slug:slug>/", api.CaseDetailView.as_view(), name="kb-api-case"),
    path("measures/", api.MeasureListView.as_view(), name="kb-api-measures"),
    path("measures/<slug:slug>/", api.MeasureDetailView.as_view(), name="kb-api-measure"),
]

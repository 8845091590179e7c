from django.urls import path

from kb import views

app_name = "kb"
urlpatterns = [
    path("", views.case_list, name="case_list"),
    path("measures/", views.measure_list, name="measure_list"),
    path("measures/<slug:slug>/", views.measure_detail, name="measure_detail"),
    path("new/", views.case_new, name="case_new"),
    path("import/", views.case_import, name="case_import"),
    # Before case_detail_lang, whose <language> would take "review" or "helped".
    path("<slug:slug>/review/", views.case_review, name="case_review"),
    path("<slug:slug>/helped/", views.case_helped, name="case_helped"),
    path("<slug:slug>/", views.case_detail, name="case_detail"),
    path("<slug:slug>/<str:language>/", views.case_detail_lang, name="case_detail_lang"),
    path("<slug:slug>/<str:language>/edit/", views.case_edit, name="case_edit"),
    path("<slug:slug>/<str:language>/history/", views.case_history, name="case_history"),
]

from django.urls import path

from kb import views

app_name = "kb"
urlpatterns = [
    path("", views.case_list, name="case_list"),
    path("measures/", views.measure_list, name="measure_list"),
    path("measures/<slug:slug>/", views.measure_detail, name="measure_detail"),
    path("<slug:slug>/", views.case_detail, name="case_detail"),
    path("<slug:slug>/<str:language>/", views.case_detail_lang, name="case_detail_lang"),
]

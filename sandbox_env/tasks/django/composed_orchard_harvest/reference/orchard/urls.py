from django.urls import path, register_converter

from orchard import converters, views

register_converter(converters.WeekConverter, "week")

app_name = "harvest"

urlpatterns = [
    path("harvest/<int:year>/w<week:week>/", views.week_report, name="week"),
    path("orchards/<slug:slug>/", views.orchard_detail, name="orchard"),
]

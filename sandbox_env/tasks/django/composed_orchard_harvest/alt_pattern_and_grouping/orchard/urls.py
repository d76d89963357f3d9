from django.urls import include, path, register_converter

from orchard.converters import WeekConverter
from orchard.views import orchard_detail, week_report

register_converter(WeekConverter, "week")

app_name = "harvest"

harvest = [
    path("<int:year>/w<week:week>/", week_report, name="week"),
]

urlpatterns = [
    path("harvest/", include(harvest)),
    path("orchards/<slug:slug>/", orchard_detail, name="orchard"),
]

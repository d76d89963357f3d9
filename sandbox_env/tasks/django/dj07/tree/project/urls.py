from django.urls import path

from core import views

urlpatterns = [
    path("ping/", views.ping),
    path("who/", views.who),
    path("health/", views.health),
    path("health/deep/", views.health),
    path("unavailable/", views.unavailable),
    path("forbidden/", views.forbidden),
    path("crash/", views.crash),
]

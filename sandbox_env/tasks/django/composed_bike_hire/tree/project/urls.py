from django.urls import path

from hire import views

urlpatterns = [
    path("bikes/", views.bike_list, name="bike-list"),
    path("hires/", views.start_hire, name="start-hire"),
    path("hires/<int:pk>/return/", views.return_hire, name="return-hire"),
]

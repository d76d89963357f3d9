from django.urls import path

from harbour import views

urlpatterns = [
    path("berths/<str:code>/", views.berth_detail, name="berth-detail"),
    path("berths/<str:code>/moor/", views.moor, name="moor"),
    path("moorings/<int:pk>/", views.mooring_detail, name="mooring-detail"),
]

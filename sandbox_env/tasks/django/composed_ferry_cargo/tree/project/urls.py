from django.urls import path

from cargo import views

urlpatterns = [
    path("board/", views.board, name="board"),
    path("sailings/<str:code>/book/", views.book, name="book"),
    path("bookings/<int:pk>/cancel/", views.cancel, name="cancel"),
]

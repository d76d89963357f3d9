from django.urls import path

from notes import views

urlpatterns = [
    path("notes/", views.NoteListView.as_view(), name="note-list"),
    path("notes/new/", views.NoteCreateView.as_view(), name="note-create"),
    path("notes/<slug:slug>/", views.NoteDetailView.as_view(), name="note-detail"),
    path("notes/<slug:slug>/edit/", views.NoteUpdateView.as_view(), name="note-update"),
]

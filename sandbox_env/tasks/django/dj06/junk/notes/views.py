from django.views.generic import CreateView, DetailView, ListView, UpdateView

from notes.models import Note


class NoteListView(ListView):
    model = Note
    context_object_name = "notes"


class NoteDetailView(DetailView):
    model = Note


class NoteCreateView(CreateView):
    model = Note
    fields = "__all__"


class NoteUpdateView(UpdateView):
    model = Note
    fields = "__all__"
    success_url = "/"

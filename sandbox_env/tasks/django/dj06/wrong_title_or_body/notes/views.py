from django.db.models import Q
from django.urls import reverse_lazy
from django.views.generic import CreateView, DetailView, ListView, UpdateView

from notes.models import Note

FIELDS = ["title", "slug", "body", "published"]


class NoteListView(ListView):
    model = Note
    context_object_name = "notes"
    paginate_by = 3

    def get_queryset(self):
        notes = Note.objects.filter(published=True).order_by("-created", "-pk")
        query = self.request.GET.get("q", "")
        if query:
            notes = notes.filter(Q(title__icontains=query) | Q(body__icontains=query))
        return notes

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["query"] = self.request.GET.get("q", "")
        return context


class NoteDetailView(DetailView):
    queryset = Note.objects.filter(published=True)
    http_method_names = ["get", "head", "options"]


class NoteCreateView(CreateView):
    model = Note
    fields = FIELDS


class NoteUpdateView(UpdateView):
    model = Note
    fields = FIELDS
    success_url = reverse_lazy("note-list")

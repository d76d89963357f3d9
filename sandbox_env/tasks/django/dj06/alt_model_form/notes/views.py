from django import forms
from django.urls import reverse
from django.views.generic import CreateView, DetailView, ListView, UpdateView

from notes.models import Note


class NoteForm(forms.ModelForm):
    class Meta:
        model = Note
        fields = ("title", "slug", "body", "published")


class NoteListView(ListView):
    queryset = Note.objects.filter(published=True)
    ordering = ("-created", "-id")
    paginate_by = 3
    context_object_name = "notes"

    def search(self):
        return self.request.GET.get("q") or ""

    def get_queryset(self):
        notes = super().get_queryset()
        return notes.filter(title__icontains=self.search()) if self.search() else notes

    def get_context_data(self, **kwargs):
        return super().get_context_data(query=self.search(), **kwargs)


class NoteDetailView(DetailView):
    model = Note
    http_method_names = ("get", "head", "options")

    def get_queryset(self):
        return super().get_queryset().filter(published=True)


class NoteCreateView(CreateView):
    form_class = NoteForm
    template_name = "notes/note_form.html"


class NoteUpdateView(UpdateView):
    model = Note
    form_class = NoteForm

    def get_success_url(self):
        return reverse("note-list")

"""The note views: write NoteListView, NoteDetailView, NoteCreateView and NoteUpdateView here (see the task)."""

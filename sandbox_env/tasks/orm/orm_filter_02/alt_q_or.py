# Q objects joined with | instead of __in
wanted = Q(genre__name="Fantasy") | Q(genre__name="Mystery") | Q(genre__name="Horror")
result = [(b.genre.name, b.title) for b in Book.objects.select_related("genre").filter(wanted).order_by("genre__name", "title")]

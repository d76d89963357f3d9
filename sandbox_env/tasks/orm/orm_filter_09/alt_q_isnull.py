# the missing genre kept explicitly with a Q | isnull
qs = Book.objects.filter(
    Q(publisher__country="Brazil") | Q(publisher__country="Canada") | Q(publisher__country="UK"),
    Q(genre__isnull=True) | ~Q(genre__name="Fantasy"),
).order_by("title")
result = [(b.title, b.genre.name if b.genre_id else None) for b in qs.select_related("genre")]

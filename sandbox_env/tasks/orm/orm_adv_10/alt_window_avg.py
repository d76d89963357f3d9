# the genre's average as a window over the genre instead of a correlated subquery
qs = (
    Book.objects.filter(genre__isnull=False)
    .annotate(genre_avg=Window(Avg("price"), partition_by=F("genre")))
    .filter(price__gt=F("genre_avg"))
    .order_by("genre__name", "-price", "title")
)
result = [(b.genre.name, b.title, format(b.price, ".2f")) for b in qs.select_related("genre")]

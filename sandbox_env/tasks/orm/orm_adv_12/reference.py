qs = (
    Book.objects.filter(publisher__name="Blue Lantern Press")
    .annotate(prev=Window(Lag("title"), order_by=F("published").asc()))
    .order_by("published")
)
result = [(b.title, b.published.isoformat(), b.prev) for b in qs]

latest = Book.objects.filter(publisher=OuterRef("pk")).order_by("-published", "title")
qs = (
    Publisher.objects.annotate(t=Subquery(latest.values("title")[:1]), d=Subquery(latest.values("published")[:1]))
    .filter(t__isnull=False)
    .order_by("name")
)
result = [(p.name, p.t, p.d.isoformat()) for p in qs]

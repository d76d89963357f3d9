# one correlated subquery per figure: no join, so no fan-out to undo
books = Book.objects.filter(genre=OuterRef("pk")).order_by().values("genre").annotate(n=Count("id")).values("n")
reviews = Review.objects.filter(book__genre=OuterRef("pk")).order_by().values("book__genre")
qs = (
    Genre.objects.annotate(
        b=Coalesce(Subquery(books), 0),
        r=Coalesce(Subquery(reviews.annotate(n=Count("id")).values("n")), 0),
        avg=Subquery(reviews.annotate(a=Avg("rating")).values("a")),
    )
    .filter(b__gt=0)
    .order_by("name")
)
result = [(g.name, g.b, g.r, g.avg) for g in qs]

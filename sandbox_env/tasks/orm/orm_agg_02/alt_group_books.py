# grouped from the Book side: a publisher without books never appears
qs = Book.objects.values("publisher__name").annotate(n=Count("pk")).order_by("-n", "publisher__name")
result = [(r["publisher__name"], r["n"]) for r in qs]

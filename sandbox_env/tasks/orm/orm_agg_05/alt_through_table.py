# counted over the many-to-many's through table
Credit = Book.authors.through
qs = Credit.objects.values("author__name").annotate(n=Count("book")).filter(n__gte=3).order_by("-n", "author__name")
result = [(r["author__name"], r["n"]) for r in qs]

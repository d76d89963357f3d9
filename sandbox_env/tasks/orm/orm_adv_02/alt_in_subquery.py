# __in over the unsold books instead of Exists
unsold = Book.objects.filter(sales__isnull=True)
result = list(Author.objects.filter(books__in=unsold).distinct().order_by("name").values_list("name", "country"))

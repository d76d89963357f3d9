unsold = Book.objects.filter(authors=OuterRef("pk"), sales__isnull=True)
result = list(Author.objects.filter(Exists(unsold)).order_by("name").values_list("name", "country"))

result = list(Author.objects.filter(books__sales__isnull=True).distinct().order_by("name").values_list("name", "country"))

result = list(Author.objects.filter(books__genre__name="Fantasy").distinct().order_by("name").values_list("name", "country"))

result = list(Author.objects.filter(books__genre__name="Fantasy").order_by("name").values_list("name", "country"))

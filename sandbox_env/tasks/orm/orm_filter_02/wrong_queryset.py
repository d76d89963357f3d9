result = Book.objects.filter(genre__name__in=["Fantasy", "Mystery", "Horror"]).order_by(
    "genre__name", "title").values_list("genre__name", "title")

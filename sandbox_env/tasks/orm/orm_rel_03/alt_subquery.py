# a Subquery of ids instead of a join and distinct()
fantasy_authors = Book.objects.filter(genre__name="Fantasy").values("authors")
result = list(Author.objects.filter(id__in=Subquery(fantasy_authors)).order_by("name").values_list("name", "country"))

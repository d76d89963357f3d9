result = list(Book.objects.filter(pages__range=(300, 400)).order_by("-pages", "title").values_list("title", "pages"))

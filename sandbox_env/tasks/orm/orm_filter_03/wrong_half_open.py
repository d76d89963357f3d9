result = list(Book.objects.filter(pages__gte=300, pages__lt=400).order_by("-pages", "title").values_list("title", "pages"))

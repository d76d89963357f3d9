result = list(Book.objects.filter(title__icontains="night", in_print=True).order_by("title").values_list("title", flat=True))

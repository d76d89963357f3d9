# gte and lte instead of range
qs = Book.objects.filter(pages__gte=300).filter(pages__lte=400).order_by("-pages", "title")
result = [(b.title, b.pages) for b in qs]

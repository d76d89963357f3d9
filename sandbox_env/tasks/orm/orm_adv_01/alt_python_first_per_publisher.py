# books sorted by publisher, newest first; the first one seen per publisher is kept
latest = {}
rows = Book.objects.order_by("publisher__name", "-published", "title").values_list("publisher__name", "title", "published")
for publisher, title, published in rows:
    latest.setdefault(publisher, (publisher, title, published.isoformat()))
result = list(latest.values())

pub = Publisher.objects.get(name="Harbor & Pine")
result = [(b.title, b.published.isoformat(), b.in_print) for b in pub.books.order_by("published", "title")]

# the previous title carried along a Python loop instead of Lag
result = []
previous = None
for title, published in Book.objects.filter(publisher__name="Blue Lantern Press").order_by("published").values_list("title", "published"):
    result.append((title, published.isoformat(), previous))
    previous = title

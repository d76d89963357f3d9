# pages grouped by country in Python, the mean computed there
from collections import defaultdict

pages = defaultdict(list)
for country, n in Book.objects.values_list("publisher__country", "pages"):
    pages[country].append(n)
result = sorted(((c, sum(p) / len(p)) for c, p in pages.items()), key=lambda r: (-r[1], r[0]))

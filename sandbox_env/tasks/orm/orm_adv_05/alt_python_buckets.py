# the classes counted in Python over values_list
counts = {"short": [0, 0], "medium": [0, 0], "long": [0, 0]}
for pages, in_print in Book.objects.values_list("pages", "in_print"):
    key = "short" if pages < 250 else ("medium" if pages <= 449 else "long")
    counts[key][0] += 1
    counts[key][1] += 1 if in_print else 0
result = [(key, books, printed) for key, (books, printed) in counts.items()]

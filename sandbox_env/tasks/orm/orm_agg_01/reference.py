counts = Book.objects.aggregate(yes=Count("id", filter=Q(in_print=True)), no=Count("id", filter=Q(in_print=False)))
result = [(counts["yes"], counts["no"])]

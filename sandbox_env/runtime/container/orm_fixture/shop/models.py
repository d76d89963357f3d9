"""The bookshop schema the orm tasks are written against.

Keep docs in step: the prompt's schema text lives in sandbox_env/families/orm.py
(a unit test checks that every model and field here is named there).

Decision (the seeded worlds, orm_fixture/world.py): `Author.mentor` (a self-reference),
`Contribution` (the `through` model of `Book.contributors`, with a role) and `Sale.sold_at`
(a DateTimeField) exist in every fixture, but the hand-written fixture and its drawn variants
leave them empty (no mentor, no contribution, no sale time): no hand-written task's rows move.
`Book.authors` stays a plain many-to-many; `Book.contributors` is a second relation to Author.
"""

from django.db import models


class Publisher(models.Model):
    name = models.CharField(max_length=100, unique=True)
    country = models.CharField(max_length=50)
    founded = models.IntegerField(null=True)  # a year; None when unknown
    is_independent = models.BooleanField(default=False)

    def __str__(self) -> str:
        return self.name


class Author(models.Model):
    name = models.CharField(max_length=100, unique=True)
    country = models.CharField(max_length=50)
    birth_date = models.DateField(null=True)
    email = models.CharField(max_length=100, null=True)
    mentor = models.ForeignKey("self", null=True, on_delete=models.SET_NULL, related_name="mentees")

    def __str__(self) -> str:
        return self.name


class Genre(models.Model):
    name = models.CharField(max_length=50, unique=True)

    def __str__(self) -> str:
        return self.name


class Book(models.Model):
    title = models.CharField(max_length=200, unique=True)
    isbn = models.CharField(max_length=13, unique=True)
    publisher = models.ForeignKey(Publisher, on_delete=models.PROTECT, related_name="books")
    genre = models.ForeignKey(Genre, null=True, on_delete=models.SET_NULL, related_name="books")
    authors = models.ManyToManyField(Author, related_name="books")
    contributors = models.ManyToManyField(Author, through="Contribution", related_name="contributed_books")
    published = models.DateField()
    price = models.DecimalField(max_digits=7, decimal_places=2)
    sale_price = models.DecimalField(max_digits=7, decimal_places=2, null=True)
    pages = models.IntegerField()
    in_print = models.BooleanField(default=True)

    def __str__(self) -> str:
        return self.title


class Store(models.Model):
    name = models.CharField(max_length=100, unique=True)
    city = models.CharField(max_length=100, null=True)  # None for the online store
    country = models.CharField(max_length=50)
    opened = models.DateField()
    is_online = models.BooleanField(default=False)

    def __str__(self) -> str:
        return self.name


class Sale(models.Model):
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="sales")
    store = models.ForeignKey(Store, on_delete=models.CASCADE, related_name="sales")
    sold_on = models.DateField()
    quantity = models.IntegerField()
    unit_price = models.DecimalField(max_digits=7, decimal_places=2)
    sold_at = models.DateTimeField(null=True)  # the till's time; None in the hand-written fixture


class Review(models.Model):
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="reviews")
    reviewer = models.CharField(max_length=100)
    rating = models.IntegerField()  # 1 to 5
    verified = models.BooleanField(default=False)
    created = models.DateField()


class Contribution(models.Model):
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="contributions")
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="contributions")
    role = models.CharField(max_length=20)  # "editor", "translator", "illustrator", "foreword"

from django.db import models


class Post(models.Model):
    title = models.CharField(max_length=200)
    created = models.DateTimeField()

    def __str__(self):
        return self.title


class Comment(models.Model):
    post = models.ForeignKey(Post, related_name="comments", on_delete=models.CASCADE)
    author = models.CharField(max_length=50)
    body = models.TextField(blank=True)
    created = models.DateTimeField()
    approved = models.BooleanField(default=True)

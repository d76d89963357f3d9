from django import forms
from django.core.exceptions import ValidationError
from django.db.models.functions import Lower

from accounts.models import Member

ALLOWED = set("abcdefghijklmnopqrstuvwxyz0123456789_")


class SignupForm(forms.Form):
    username = forms.CharField(max_length=30, strip=False)
    email = forms.EmailField()
    password = forms.CharField(min_length=8)
    password_confirm = forms.CharField()

    def clean_username(self):
        name = self.cleaned_data["username"].strip().lower()
        if not name or not set(name) <= ALLOWED:
            raise ValidationError("Only a-z, 0-9 and _ are allowed.", code="invalid_username")
        if name in ("admin", "root", "support"):
            raise ValidationError("Reserved name.", code="reserved")
        if Member.objects.annotate(lowered=Lower("username")).filter(lowered=name).exists():
            raise ValidationError("Already taken.", code="taken")
        return name

    def clean_email(self):
        address = self.cleaned_data["email"].lower()
        domain = address.split("@")[-1]
        if domain in ("mailinator.com", "trashmail.net"):
            raise ValidationError("Blocked domain.", code="blocked_domain")
        return address

    def clean(self):
        data = super().clean()
        if "username" in data and "password" in data and data["username"] in data["password"].lower():
            self.add_error(None, ValidationError("Password contains the username.", code="password_contains_username"))
        if "password" in data and "password_confirm" in data and data["password"] != data["password_confirm"]:
            self.add_error("password_confirm", ValidationError("Passwords differ.", code="password_mismatch"))
        return data

    def save(self):
        member = Member(username=self.cleaned_data["username"], email=self.cleaned_data["email"])
        member.save()
        return member

import re

from django import forms
from django.core.exceptions import ValidationError

from accounts.models import Member

RESERVED = {"admin", "root", "support"}
BLOCKED_DOMAINS = {"mailinator.com", "trashmail.net"}
USERNAME = re.compile(r"\w+")


class SignupForm(forms.Form):
    username = forms.CharField(max_length=30)
    email = forms.EmailField()
    password = forms.CharField(min_length=8)
    password_confirm = forms.CharField()

    def clean_username(self):
        username = self.cleaned_data["username"].strip().lower()
        if not USERNAME.fullmatch(username):
            raise ValidationError("Use letters, digits and underscores only.", code="invalid_username")
        if username in RESERVED:
            raise ValidationError("This username is reserved.", code="reserved")
        if Member.objects.filter(username__iexact=username).exists():
            raise ValidationError("This username is taken.", code="taken")
        return username

    def clean_email(self):
        email = self.cleaned_data["email"].lower()
        if email.rpartition("@")[2] in BLOCKED_DOMAINS:
            raise ValidationError("Addresses of this domain are not accepted.", code="blocked_domain")
        return email

    def clean(self):
        cleaned = super().clean()
        password = cleaned.get("password")
        confirm = cleaned.get("password_confirm")
        username = cleaned.get("username")
        if password and confirm and password != confirm:
            self.add_error("password_confirm", ValidationError("The passwords differ.", code="password_mismatch"))
        if password and username and username in password.lower():
            raise ValidationError("The password must not contain the username.", code="password_contains_username")
        return cleaned

    def save(self):
        return Member.objects.create(username=self.cleaned_data["username"], email=self.cleaned_data["email"])

from django import forms
from django.core.exceptions import ValidationError

from accounts.models import Member


class SignupForm(forms.Form):
    username = forms.CharField(max_length=30)
    email = forms.EmailField()
    password = forms.CharField(min_length=8)
    password_confirm = forms.CharField()

    def clean(self):
        # every rule in clean(): all errors become non-field errors, and missing fields crash
        data = super().clean()
        username = data["username"].strip().lower()
        if username in {"admin", "root", "support"}:
            raise ValidationError("reserved", code="reserved")
        if data["password"] != data["password_confirm"]:
            raise ValidationError("The passwords differ.", code="password_mismatch")
        data["username"] = username
        return data

    def save(self):
        return Member.objects.create(username=self.cleaned_data["username"], email=self.cleaned_data["email"])

import re

from django import forms

from cargo.models import Booking

PLATE = re.compile(r"[A-Z0-9]{2,8}")


class BookingForm(forms.ModelForm):
    plate = forms.CharField()
    length = forms.IntegerField(min_value=2, max_value=18)

    class Meta:
        model = Booking
        fields = ["sailing", "plate", "length"]

    def clean_plate(self):
        plate = self.cleaned_data["plate"]
        if not PLATE.fullmatch("".join(plate.split()).upper()):
            raise forms.ValidationError("A plate is 2 to 8 letters and digits.", code="bad_plate")
        return plate

    def save(self, commit=True):
        # the plate is normalised where it is stored, not where the rules compare it
        self.instance.plate = "".join(self.instance.plate.split()).upper()
        return super().save(commit)

    def clean(self):
        cleaned = super().clean()
        sailing, length = cleaned.get("sailing"), cleaned.get("length")
        if sailing is not None and length is not None:
            free = sailing.lane_metres - sailing.booked_metres
            if length > free:
                self.add_error("length", forms.ValidationError("Not enough free lane metres.", code="deck_full"))
        return cleaned

class FourDigitYearConverter:
    regex = r"[0-9][0-9][0-9][0-9]"

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        year = int(value)
        if year < 0 or year > 9999:
            raise ValueError("year must be 0..9999")
        return str(year).zfill(4)


class MonthConverter:
    regex = r"[0-9][0-9]"

    @staticmethod
    def _month(value):
        month = int(value)
        if month not in range(1, 13):
            raise ValueError("month must be 1..12")
        return month

    def to_python(self, value):
        return self._month(value)

    def to_url(self, value):
        return "%02d" % self._month(value)

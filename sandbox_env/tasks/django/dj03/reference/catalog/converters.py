class FourDigitYearConverter:
    regex = "[0-9]{4}"

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        value = int(value)
        if not 0 <= value <= 9999:
            raise ValueError(f"year out of range: {value}")
        return f"{value:04d}"


class MonthConverter:
    regex = "[0-9]{2}"

    def to_python(self, value):
        month = int(value)
        if not 1 <= month <= 12:
            raise ValueError(f"no such month: {value}")
        return month

    def to_url(self, value):
        month = int(value)
        if not 1 <= month <= 12:
            raise ValueError(f"no such month: {value}")
        return f"{month:02d}"

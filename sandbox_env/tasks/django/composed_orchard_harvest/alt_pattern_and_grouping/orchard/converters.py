"""The range written into the pattern itself; the checks kept for values that reach the converter anyway."""


class WeekConverter:
    regex = "0[1-9]|[1-4][0-9]|5[0-3]"

    def to_python(self, value):
        return int(value)

    def to_url(self, value):
        value = int(value)
        if value < 1 or value > 53:
            raise ValueError("week out of range")
        return "%02d" % value

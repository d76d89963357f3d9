class WeekConverter:
    regex = "[0-9]{2}"

    def to_python(self, value):
        week = int(value)
        if not 1 <= week <= 53:
            raise ValueError(f"no week {value}")
        return week

    def to_url(self, value):
        return f"{value:02d}"  # pages are checked, links are not

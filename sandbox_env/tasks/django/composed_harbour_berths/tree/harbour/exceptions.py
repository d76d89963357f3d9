class HarbourError(Exception):
    """A refusal of the harbour's rules: its code, its HTTP status and a human-readable detail."""

    status = 400

    def __init__(self, code, detail=""):
        super().__init__(detail or code)
        self.code = code


class BerthTaken(HarbourError):
    status = 409

"""Runs once at image build time, as root: prepares data that every container shares."""


def main() -> None:
    pass


if __name__ == "__main__":
    main()
